package store

import (
	"bytes"
	"context"
	"encoding/csv"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	cases := []struct {
		in   string
		want Schedule
		bad  bool
	}{
		{in: "", want: Schedule{}},
		{in: "off", want: Schedule{}},
		{in: "hourly", want: Schedule{Hourly: true}},
		{in: "daily 02:00", want: Schedule{Daily: true, Hour: 2}},
		{in: " daily 23:59 ", want: Schedule{Daily: true, Hour: 23, Minute: 59}},
		{in: "daily 2:00", bad: true},
		{in: "daily 24:00", bad: true},
		{in: "daily 02:60", bad: true},
		{in: "daily", bad: true},
		{in: "weekly", bad: true},
		{in: "hourly 5", bad: true},
	}
	for _, c := range cases {
		got, err := ParseSchedule(c.in)
		if c.bad {
			if err == nil || !strings.Contains(err.Error(), `"hourly", "daily HH:MM"`) {
				t.Errorf("%q: error %v, want a clear one", c.in, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v, want %+v", c.in, got, err, c.want)
		}
	}
}

// fakeClock drives the store's clock: every wait the exporter asks for passes at once.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	stop   time.Time
	cancel context.CancelFunc
	waits  []time.Duration
	onWait func(now time.Time)
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	if c.onWait != nil {
		c.onWait(now)
	}
	if now.After(c.stop) {
		c.cancel()
	}
	ch := make(chan time.Time, 1)
	ch <- now
	return ch
}

func logAt(name string, at time.Time, ok bool) Values {
	return Values{"command_name": name, "device_name": "rtr", "username": "bob", "success": ok, "created": at}
}

func csvRows(t *testing.T, path string) [][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestExporterDaily(t *testing.T) {
	db := testDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	day := func(d, h, m, s, us int) time.Time { return time.Date(2026, 11, d, h, m, s, us*1000, time.UTC) }
	logs := []Values{
		logAt("on 19th", day(19, 12, 0, 0, 0), true),
		logAt("first of 20th", day(20, 0, 0, 0, 0), true),
		logAt("=last of 20th", day(20, 23, 59, 59, 999999), false),
		logAt("on 21st", day(21, 8, 0, 0, 0), true),
		logAt("on 22nd", day(22, 1, 0, 0, 0), true),
		logAt("on 22nd", day(22, 3, 0, 0, 0), true),
	}
	if err := db.InsertLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: day(22, 1, 30, 0, 0), stop: day(23, 2, 0, 0, 0), cancel: cancel}
	db.SetClock(clock.Now)
	dir := filepath.Join(t.TempDir(), "exports")
	ex := &Exporter{DB: db, Config: ExporterConfig{Schedule: "daily 02:00", Directory: dir, Keep: 2},
		Logger: slog.New(slog.DiscardHandler), After: clock.After}
	if err := ex.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// catch-up at 01:30 on the 22nd wrote the 20th (due at 02:00 on the 21st); then the
	// 21st at 02:00 on the 22nd and the 22nd at 02:00 on the 23rd; Keep=2 dropped the 20th.
	if got := dirFiles(t, dir); strings.Join(got, " ") != "command-logs-2026-11-21.csv command-logs-2026-11-22.csv" {
		t.Fatalf("files: %v", got)
	}
	if w := clock.waits; len(w) != 3 || w[0] != 30*time.Minute || w[1] != 24*time.Hour || w[2] != 24*time.Hour {
		t.Fatalf("waits: %v", w)
	}
	recs := csvRows(t, filepath.Join(dir, "command-logs-2026-11-22.csv"))
	if len(recs) != 3 || recs[0][0] != "id" || recs[1][6] != "on 22nd" || recs[2][1] != "2026-11-22T03:00:00.000000Z" {
		t.Fatalf("22nd: %q", recs)
	}
	var runs []string
	rows, err := db.Reader().Query(`SELECT period, rows FROM export_runs ORDER BY period`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var n int
		rows.Scan(&p, &n)
		runs = append(runs, p+":"+strconv.Itoa(n))
	}
	if strings.Join(runs, " ") != "2026-11-20:2 2026-11-21:1 2026-11-22:2" {
		t.Fatalf("export runs: %v", runs)
	}

	// The 20th's file held exactly its day, its formula cell defused.
	ex2 := &Exporter{DB: db, Config: ExporterConfig{Directory: dir}}
	p := Period{Name: "2026-11-20", From: day(20, 0, 0, 0, 0), To: day(21, 0, 0, 0, 0)}
	file, n, err := ex2.ExportPeriod(context.Background(), p)
	if err != nil || n != 2 {
		t.Fatalf("re-export: %d %v", n, err)
	}
	recs = csvRows(t, file)
	if recs[1][6] != "first of 20th" || recs[2][6] != "'=last of 20th" || recs[2][8] != "false" {
		t.Fatalf("20th: %q", recs)
	}
}

func TestExporterHourlyInZone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	db := testDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	at := func(h, m int) time.Time { return time.Date(2026, 11, 21, h, m, 0, 0, ny) }
	if err := db.InsertLogs(ctx, []Values{logAt("a", at(12, 5), true), logAt("b", at(12, 59), true), logAt("c", at(13, 0), true)}); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: at(13, 30), stop: at(14, 0), cancel: cancel}
	db.SetClock(clock.Now)
	dir := t.TempDir()
	// a temp file left by a crash is cleaned up, never renamed
	os.WriteFile(filepath.Join(dir, ".command-logs-123.tmp"), []byte("partial"), 0o600)
	ex := &Exporter{DB: db, Config: ExporterConfig{Schedule: "hourly", Directory: dir, Location: ny},
		Logger: slog.New(slog.DiscardHandler), After: clock.After}
	if err := ex.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := dirFiles(t, dir); strings.Join(got, " ") != "command-logs-2026-11-21T12.csv command-logs-2026-11-21T13.csv" {
		t.Fatalf("files: %v", got)
	}
	if recs := csvRows(t, filepath.Join(dir, "command-logs-2026-11-21T12.csv")); len(recs) != 3 {
		t.Fatalf("12:00–13:00 New York: %q", recs)
	}
}

func TestExporterRetriesWithoutPartialFiles(t *testing.T) {
	db := testDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	if err := db.InsertLogs(ctx, []Values{logAt("x", start.Add(-20*time.Hour), true)}); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "exports")
	// a file where the directory should be: every run fails until it is removed
	os.WriteFile(dir, []byte("in the way"), 0o600)
	clock := &fakeClock{now: start, stop: start.Add(time.Hour), cancel: cancel}
	clock.onWait = func(time.Time) {
		if len(clock.waits) == 2 {
			os.Remove(dir)
		}
	}
	db.SetClock(clock.Now)
	var logs bytes.Buffer
	ex := &Exporter{DB: db, Config: ExporterConfig{Schedule: "daily 02:00", Directory: dir},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), After: clock.After, RetryBase: time.Second}
	if err := ex.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if w := clock.waits; len(w) < 3 || w[0] != time.Second || w[1] != 2*time.Second {
		t.Fatalf("backoff waits: %v", w)
	}
	if c := strings.Count(logs.String(), "export: run failed, retrying"); c != 2 {
		t.Fatalf("%d retry log lines:\n%s", c, logs.String())
	}
	if got := dirFiles(t, dir); strings.Join(got, " ") != "command-logs-2026-11-21.csv" {
		t.Fatalf("files after retry: %v", got)
	}
}

func TestPruneLogs(t *testing.T) {
	db := testDB(t)
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Eleven batches pruned, one kept.
	defer func(n int) { pruneBatch = n }(pruneBatch)
	pruneBatch = 100
	batch := pruneBatch
	var in []Values
	for i := range 12 * batch {
		in = append(in, logAt("c", base.Add(time.Duration(i)*time.Minute), i%2 == 0))
	}
	if err := db.InsertLogs(ctx, in); err != nil {
		t.Fatal(err)
	}
	n, err := db.PruneLogs(ctx, base.Add(time.Duration(11*batch)*time.Minute))
	if err != nil || n != int64(11*batch) {
		t.Fatalf("pruned %d, %v", n, err)
	}
	st, err := db.LogStatistics(ctx, True, base)
	if err != nil || st.Total != int64(batch) || st.Successful != int64(batch/2) || st.TopCommands[0].Count != int64(batch) {
		t.Fatalf("counters after prune: %+v %v", st, err)
	}
}
