package handlers

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/store"
)

// The benchmarks run against a million logs over 500 devices and 200 commands, spread
// evenly over the 30 days before 2026-11-20. FIELDKIT_BENCH_LOGS=5000000 runs them at
// five million instead, and FIELDKIT_BENCH_OUTPUT=16384 pads each output to about that
// many bytes. Each data set is generated once into the temp directory
// (fieldkit-bench-1m.db, fieldkit-bench-5m.db, fieldkit-bench-200000-o16384.db) and
// reused by later runs:
//
//	go test ./handlers -run '^$' -bench . -benchtime 2s
const (
	benchDevices  = 500
	benchCommands = 200
	benchAdminKey = "0000000000000000000000000000000000b3nc4a"
	benchViewKey  = "0000000000000000000000000000000000b3nc4b"
)

// benchEnd is the newest log's time; the data set covers benchSpan before it.
var (
	benchEnd  = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	benchSpan = 30 * 24 * time.Hour
)

// benchLogs is the size of the data set, FIELDKIT_BENCH_LOGS or a million.
func benchLogs() int {
	if n, err := strconv.Atoi(os.Getenv("FIELDKIT_BENCH_LOGS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// benchOutput is FIELDKIT_BENCH_OUTPUT: the bytes of dashes (no words, so the word
// index stays as small) each log's output is padded with, as a real output's size;
// none unless set.
func benchOutput() int {
	n, _ := strconv.Atoi(os.Getenv("FIELDKIT_BENCH_OUTPUT"))
	return max(n, 0)
}

// benchDBPath is where the data set of n logs is kept between runs.
func benchDBPath(n int) string {
	name := strconv.Itoa(n)
	if n%1_000_000 == 0 {
		name = strconv.Itoa(n/1_000_000) + "m"
	}
	if pad := benchOutput(); pad > 0 {
		name += "-o" + strconv.Itoa(pad)
	}
	return filepath.Join(os.TempDir(), "fieldkit-bench-"+name+".db")
}

var bench struct {
	once sync.Once
	db   *store.DB
	api  *API
	err  error
}

func benchAPI(b *testing.B) *API {
	b.Helper()
	if testing.Short() {
		b.Skip("the million-log benchmarks do not run under -short")
	}
	bench.once.Do(func() {
		path := benchDBPath(benchLogs())
		if _, err := os.Stat(path); err != nil {
			if bench.err = generateBenchDB(path, benchLogs()); bench.err != nil {
				return
			}
		}
		// A data set made before a migration that rewrites the logs shows its progress.
		bench.db, bench.err = store.Open(context.Background(), path, store.Logger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
		if bench.err != nil {
			return
		}
		// "Now" is the end of the data set, so that the last 24 hours hold logs.
		bench.db.SetClock(func() time.Time { return benchEnd })
		// The readers opened, as serve has them a few seconds after its start (the cold
		// start is measured on serve itself: scripts/bench-logs.sh).
		if bench.err = bench.db.WarmReaders(context.Background()); bench.err != nil {
			return
		}
		bench.api = New(Options{DB: bench.db, Logger: slog.New(slog.DiscardHandler), Version: "bench"})
		// The benchmarks measure the work of a page; those of cached pages say so.
		setListCache(bench.api, false)
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	b.ReportMetric(float64(benchLogs()), "logs")
	return bench.api
}

// generateBenchDB builds the database under a temporary name and renames it when
// complete, so an interrupted run never leaves a half-filled cache behind.
func generateBenchDB(path string, n int) error {
	ctx := context.Background()
	tmp := path + ".partial"
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		os.Remove(p)
	}
	start := time.Now()
	db, err := store.Open(ctx, tmp)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := seedBench(ctx, db); err != nil {
		return err
	}
	if _, err := db.BulkLogs(ctx, func(tx *sql.Tx) (int, error) { return insertBenchLogs(ctx, tx, n) }); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "generated %d logs into %s in %s\n", n, path, time.Since(start).Round(time.Millisecond))
	return os.Rename(tmp, path)
}

// insertBenchLogs makes n logs in one INSERT … SELECT: log i is created at
// benchEnd - benchSpan·(n-i)/n, so the logs spread evenly over the span and their ids
// follow their times. Device, command, outcome and error come from a quadratic hash of
// i modulo a prime (deterministic, no pattern a query could exploit): 85 % successful,
// one command in five a config command, 20 distinct error messages.
//
// The table's indexes and the triggers still on it (other than the counters, which
// BulkLogs handles) are dropped first and made again after the rows are in, and the
// full-text indexes kept by those triggers are rebuilt: built once over the whole table
// is far faster than row by row.
func insertBenchLogs(ctx context.Context, tx *sql.Tx, n int) (int, error) {
	var recreate []string
	rows, err := tx.QueryContext(ctx, `SELECT type, name, sql FROM sqlite_master
		WHERE tbl_name = 'command_logs' AND type IN ('index', 'trigger') AND sql IS NOT NULL`)
	if err != nil {
		return 0, err
	}
	var drops []string
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			rows.Close()
			return 0, err
		}
		drops, recreate = append(drops, "DROP "+strings.ToUpper(typ)+" "+name), append(recreate, text)
	}
	rows.Close()
	for _, d := range drops {
		if _, err := tx.ExecContext(ctx, d); err != nil {
			return 0, err
		}
	}
	const p = 2147483647
	hash := func(a, c int) string { // ((i² mod p)·a + i·c + 1) mod p
		return fmt.Sprintf("(((i * i) %% %d) * %d + i * %d + 1) %% %d", p, a, c, p)
	}
	res, err := tx.ExecContext(ctx, `WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?1),
		r AS (SELECT i, `+hash(48271, 69621)+` % ?3 AS dev, `+hash(16807, 40692)+` % ?4 AS cmd,
			`+hash(39373, 52774)+` % 100 < 85 AS ok, `+hash(22695, 75679)+` % 20 AS err, `+hash(31337, 27183)+` % 5000 AS ms,
			strftime('%Y-%m-%dT%H:%M:%f', ?2 - ?5 * (?1 - i) / ?1, 'unixepoch') || '000Z' AS at FROM seq)
		INSERT INTO command_logs (command_id, command_name, command_type, device_id, device_name, user_id, username,
			output, success, error_message, execution_duration, execution_time, created, last_updated)
		SELECT cmd + 1, printf('command %03d', cmd), CASE WHEN cmd % 5 = 0 THEN 'config' ELSE 'show' END,
			dev + 1, printf('dev-%03d', dev), 1, 'bench',
			'Interface GigabitEthernet0/1 is up, line protocol is up ' || i
				|| CASE WHEN ?6 > 0 THEN char(10) || printf('%.*c', ?6, '-') ELSE '' END, ok,
			CASE WHEN ok THEN '' ELSE printf('%% Invalid input detected at ''^'' marker (case %d)', err) END,
			ms / 1000.0, at, at, at
		FROM r`, n, benchEnd.Unix(), benchDevices, benchCommands, benchSpan.Seconds(), benchOutput())
	if err != nil {
		return 0, err
	}
	for _, c := range recreate {
		if _, err := tx.ExecContext(ctx, c); err != nil {
			return 0, err
		}
	}
	fts, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND sql LIKE 'CREATE VIRTUAL TABLE%fts5%' AND sql LIKE '%content%=%''command_logs''%'`)
	if err != nil {
		return 0, err
	}
	var names []string
	for fts.Next() {
		var name string
		if err := fts.Scan(&name); err != nil {
			fts.Close()
			return 0, err
		}
		names = append(names, name)
	}
	fts.Close()
	for _, name := range names {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+name+` (`+name+`) VALUES ('rebuild')`); err != nil {
			return 0, err
		}
	}
	got, err := res.RowsAffected()
	return int(got), err
}

// seedBenchUsers makes the benchmarks' users and their tokens: the superuser bench
// (benchAdminKey) and viewer (benchViewKey), who may view the logs of site's devices.
func seedBenchUsers(ctx context.Context, db *store.DB, site string) error {
	admin, viewer, super := "bench", "viewer", true
	uid, err := db.CreateUser(ctx, store.UserInput{Username: &admin, IsSuperuser: &super}, store.All)
	if err != nil {
		return err
	}
	if _, _, err := db.CreateToken(ctx, store.TokenInput{UserID: uid, WriteEnabled: true, Key: benchAdminKey}, store.All); err != nil {
		return err
	}
	vid, err := db.CreateUser(ctx, store.UserInput{Username: &viewer}, store.All)
	if err != nil {
		return err
	}
	if _, _, err := db.CreateToken(ctx, store.TokenInput{UserID: vid, Key: benchViewKey}, store.All); err != nil {
		return err
	}
	pname, cons := site+" logs", json.RawMessage(`{"device__site__slug": "`+site+`"}`)
	_, err = db.CreatePermission(ctx, store.PermissionInput{Name: &pname, ObjectTypes: &[]string{store.TypeCommandLog},
		Actions: &[]string{"view"}, Constraints: &cons, Users: &[]int64{vid}}, store.All)
	return err
}

func seedBench(ctx context.Context, db *store.DB) error {
	if err := seedBenchUsers(ctx, db, "site-1"); err != nil {
		return err
	}
	var platforms []int64
	stmts := []string{}
	for i, slug := range []string{"cisco_ios", "arista_eos", "juniper_junos", "cisco_nxos"} {
		platforms = append(platforms, int64(i+1))
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO platforms (id, name, slug, created, last_updated) VALUES (%d, '%s', '%s', '%s', '%s')`,
			i+1, slug, slug, tkNow, tkNow))
	}
	for i := range 5 {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO sites (id, name, slug, created, last_updated) VALUES (%d, 'site-%d', 'site-%d', '%s', '%s')`,
			i+1, i, i, tkNow, tkNow))
	}
	for i := range benchDevices {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO devices (id, name, site_id, platform_id, created, last_updated) VALUES (%d, 'dev-%03d', %d, %d, '%s', '%s')`,
			i+1, i, i%5+1, i%4+1, tkNow, tkNow))
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for i := range benchCommands {
		name, text, typ := fmt.Sprintf("command %03d", i), fmt.Sprintf("show thing %d <iface>", i), "show"
		if i%5 == 0 {
			typ = "config"
		}
		vars := []store.Values{{"name": "iface", "display_name": "Interface", "variable_type": "inventory_interface"}}
		if _, err := db.Create(ctx, store.Commands, store.Values{"name": name, "command": text, "command_type": typ,
			"platforms": platforms[:i%4+1], "variables": vars}, store.All); err != nil {
			return err
		}
	}
	return nil
}

// loopCPU runs fn in b.Loop and reports the process's CPU time per iteration as
// cpu-ms/op beside the wall time: other work on a shared machine stretches the wall
// time of a request, far less its CPU time.
func loopCPU(b *testing.B, fn func()) {
	b.Helper()
	start := processCPU()
	for b.Loop() {
		fn()
	}
	if used := processCPU() - start; used > 0 {
		b.ReportMetric(used*1000/float64(b.N), "cpu-ms/op")
	}
}

// serve runs one request through the API's handler and fails on a non-200.
func serve(b *testing.B, a *API, w http.ResponseWriter, path, key string) {
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Token "+key)
	a.ServeHTTP(w, req)
	if rec, ok := w.(*httptest.ResponseRecorder); ok && rec.Code != 200 {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
}

func BenchmarkLogPageFiltered(b *testing.B) {
	a := benchAPI(b)
	i := 0
	loopCPU(b, func() {
		i++
		serve(b, a, httptest.NewRecorder(), fmt.Sprintf("%s?device_id=%d&limit=50", pathCommandLogs, i%benchDevices+1), benchAdminKey)
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func BenchmarkStatistics(b *testing.B) {
	a := benchAPI(b)
	for _, c := range []struct{ name, key string }{{"superuser", benchAdminKey}, {"constrained", benchViewKey}} {
		b.Run(c.name, func(b *testing.B) {
			loopCPU(b, func() { serve(b, a, httptest.NewRecorder(), pathCommandLogs+"statistics/", c.key) })
		})
	}
}

// BenchmarkStatisticsWritten is BenchmarkStatistics with a log written before each
// request (untimed), as on a site whose executions never stop: nothing kept for one
// data version serves the next request. It reports the slowest request beside the
// mean. It adds a log to the data set for each request: run it on a copy.
func BenchmarkStatisticsWritten(b *testing.B) {
	a := benchAPI(b)
	after, written := benchNewest(b), 0
	for _, c := range benchViewers {
		b.Run(c.name, func(b *testing.B) {
			var slowest time.Duration
			for b.Loop() {
				b.StopTimer()
				written++
				writeBenchLog(b, written, after)
				b.StartTimer()
				start := time.Now()
				serve(b, a, httptest.NewRecorder(), pathCommandLogs+"statistics/", c.key)
				slowest = max(slowest, time.Since(start))
			}
			b.ReportMetric(float64(slowest.Microseconds())/1000, "slowest-ms")
		})
	}
}

func BenchmarkExportCSV(b *testing.B) {
	a := benchAPI(b)
	// Reset the peak-RSS mark so that it measures the export, not the generation.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	var rows int
	for b.Loop() {
		w := &countingWriter{header: http.Header{}}
		serve(b, a, w, pathCommandLogs+"export/?format=csv", benchAdminKey)
		if w.status != 200 {
			b.Fatalf("export: %d", w.status)
		}
		rows += w.lines - 1
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	if kb := vmHWM(); kb > 0 {
		b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
	}
}

func BenchmarkCommandsList(b *testing.B) {
	a := benchAPI(b)
	for b.Loop() {
		serve(b, a, httptest.NewRecorder(), pathCommands+"?limit=50", benchAdminKey)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// countingWriter is a ResponseWriter that keeps nothing but counts lines.
type countingWriter struct {
	header http.Header
	status int
	lines  int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(s int)   { w.status = s }
func (w *countingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

// vmHWM is the process's peak resident set in kB (Linux), or 0.
func vmHWM() int {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// BenchmarkLogPageUnfiltered is the first page a browser of the logs sees: everything
// for a superuser, one site's devices for a constrained viewer.
// The -cached cases are the same pages served again from the list cache; the -fields
// cases show a few fields (benchFields), as a table of logs would.
const benchFields = "id,created,device,command,success"

func BenchmarkLogPageUnfiltered(b *testing.B) {
	a := benchAPI(b)
	for _, c := range []struct {
		name, key, query string
		cached           bool
	}{{"superuser", benchAdminKey, "", false}, {"constrained", benchViewKey, "", false},
		{"superuser-no-output", benchAdminKey, "&exclude=output", false}, {"constrained-no-output", benchViewKey, "&exclude=output", false},
		{"superuser-no-output-cached", benchAdminKey, "&exclude=output", true}, {"constrained-no-output-cached", benchViewKey, "&exclude=output", true},
		{"superuser-fields", benchAdminKey, "&fields=" + benchFields, false}, {"constrained-fields", benchViewKey, "&fields=" + benchFields, false}} {
		b.Run(c.name, func(b *testing.B) {
			setListCache(a, c.cached)
			defer setListCache(a, false)
			loopCPU(b, func() { serve(b, a, httptest.NewRecorder(), pathCommandLogs+"?limit=50"+c.query, c.key) })
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkLogPageWrites is the constrained viewer's first page without output while
// the file is written to between pages: a write before every page ("every-1"), every
// 4th and every 16th, and the writes alone. The write changes the data version and no
// data (the file header's user_version, which nothing reads), so that the window of
// recent logs the pages are picked from between writes is read again after it; its
// cost is the case's less "writes-alone" times its share of writes.
func BenchmarkLogPageWrites(b *testing.B) {
	a := benchAPI(b)
	ctx := context.Background()
	write := func(n int) {
		if err := bench.db.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", n%1000+1))
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	defer write(-1) // back to 0
	for _, every := range []int{1, 4, 16, 0} {
		name := fmt.Sprintf("every-%d", every)
		if every == 0 {
			name = "writes-alone"
		}
		b.Run(name, func(b *testing.B) {
			i := 0
			loopCPU(b, func() {
				i++
				if every == 0 || i%every == 0 {
					write(i)
				}
				if every != 0 {
					serve(b, a, httptest.NewRecorder(), pathCommandLogs+"?limit=50&exclude=output", benchViewKey)
				}
			})
		})
	}
}

// setListCache turns the list cache on or off.
func setListCache(a *API, on bool) {
	a.lists.mu.Lock()
	defer a.lists.mu.Unlock()
	a.lists.off = !on
}

// BenchmarkLogSearch is ?q= over the million logs, through the full-text indexes: a
// word of one log's output, a phrase of 0.75 % of the error messages, a substring of
// 0.2 % of the device names, and a word every output holds (the worst case: every log
// matches and is counted).
func BenchmarkLogSearch(b *testing.B) {
	a := benchAPI(b)
	for _, c := range []struct{ name, q string }{
		{"one_output", "654321"}, {"error_phrase", "case 7"}, {"device_substring", "dev-123"},
		{"every_log", "GigabitEthernet0"},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := pathCommandLogs + "?limit=50&q=" + url.QueryEscape(c.q)
			loopCPU(b, func() { serve(b, a, httptest.NewRecorder(), path, benchAdminKey) })
		})
	}
}

// BenchmarkLogWalk is the cost of one page of a walk over every log, 100 logs per page,
// at its start and 100 logs before its end: by offset (each page skips all the rows
// before it) and by cursor (each page seeks to where the last one stopped).
func BenchmarkLogWalk(b *testing.B) {
	a := benchAPI(b)
	var created string
	const before = 100
	if err := bench.db.Reader().QueryRow(`SELECT created FROM command_logs WHERE id = ?`, before).Scan(&created); err != nil {
		b.Fatal(err)
	}
	end := encodeCursor("", []any{created, int64(before)})
	for _, c := range []struct{ name, query string }{
		{"offset-start", "limit=100"},
		{"offset-end", fmt.Sprintf("limit=100&offset=%d", benchLogs()-before)},
		{"cursor-start", "limit=100&cursor="},
		{"cursor-end", "limit=100&cursor=" + end},
	} {
		b.Run(c.name, func(b *testing.B) {
			loopCPU(b, func() { serve(b, a, httptest.NewRecorder(), pathCommandLogs+"?"+c.query, benchAdminKey) })
		})
	}
}

// BenchmarkLogPageConstrained is a viewer who sees one site's logs (a fifth): their
// first page, a page 100,000 logs in by offset and by cursor, the page 100 logs before
// the end by offset, a device filter, and searches of names, an error phrase, a word of
// every error message (15 % of the logs) and a word every output holds (at the first
// page and 10,000 logs in).
func BenchmarkLogPageConstrained(b *testing.B) {
	a := benchAPI(b)
	var created string
	var id int64
	if err := bench.db.Reader().QueryRow(`SELECT created, id FROM command_logs
		WHERE device_id IN (SELECT d.id FROM devices d JOIN sites s ON s.id = d.site_id WHERE s.slug = 'site-1')
		ORDER BY created DESC, id DESC LIMIT 1 OFFSET 99999`).Scan(&created, &id); err != nil {
		b.Fatal(err)
	}
	var visible int
	if err := bench.db.Reader().QueryRow(`SELECT sum(n) FROM command_log_counts
		WHERE device_key IN (SELECT d.id FROM devices d JOIN sites s ON s.id = d.site_id WHERE s.slug = 'site-1')`).Scan(&visible); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, query string }{
		{"first", "limit=50"},
		{"offset-100k", "limit=50&offset=100000"},
		{"offset-end", fmt.Sprintf("limit=50&offset=%d", visible-100)},
		{"cursor-100k", "limit=50&cursor=" + encodeCursor("", []any{created, id})},
		{"device", "limit=50&device_id=2"},
		{"device-no-output", "limit=50&device_id=7&exclude=output"},
		{"q", "limit=50&q=command%20042"},
		{"q_error", "limit=50&q=case%207"},
		{"q_every_log", "limit=50&q=GigabitEthernet0"},
		{"q_error_word", "limit=50&q=Invalid"},
		{"q_every_log_offset", "limit=50&offset=10000&q=GigabitEthernet0"},
	} {
		b.Run(c.name, func(b *testing.B) {
			loopCPU(b, func() { serve(b, a, httptest.NewRecorder(), pathCommandLogs+"?"+c.query, benchViewKey) })
		})
	}
}

// BenchmarkLogPageOrdered is a page of logs sorted by a column other than created, as a
// click on a table's header asks, for the superuser and the viewer of one site: the
// first page, and the same by a device (its 0.2 % of the logs) or a day.
func BenchmarkLogPageOrdered(b *testing.B) {
	pagesForBoth(b, []benchPage{
		{"username", "ordering=-username"},
		{"duration", "ordering=execution_duration"},
		{"duration-desc", "ordering=-execution_duration"},
		{"success", "ordering=success"},
		{"duration-device", "ordering=-execution_duration&device_id=7"},
		{"username-day", "ordering=username&created__gte=2026-11-05T00:00:00Z&created__lte=2026-11-06T00:00:00Z"},
	})
}

// BenchmarkLogPageUser is a page of one user's logs, or of the failed or successful
// ones, for the superuser and the viewer of one site (every log of the data set is the
// one user's): the count of such a list is the per-user counters' sum.
func BenchmarkLogPageUser(b *testing.B) {
	pagesForBoth(b, []benchPage{
		{"user", "user_id=1"}, {"username", "username=bench"}, {"failed", "success=false"}, {"successful", "success=true"},
		{"user-failed-by-duration", "user_id=1&success=false&ordering=-execution_duration"},
	})
}

// benchPage is a page of logs without output: its name and its query.
type benchPage struct{ name, query string }

// benchViewers are who the log pages are asked as: everything, and one site's logs.
var benchViewers = []struct{ name, key string }{{"superuser", benchAdminKey}, {"constrained", benchViewKey}}

// pagesForBoth runs each page as a sub-benchmark, for the superuser and for the viewer
// of one site.
func pagesForBoth(b *testing.B, pages []benchPage) {
	a := benchAPI(b)
	for _, c := range pages {
		for _, who := range benchViewers {
			b.Run(c.name+"/"+who.name, func(b *testing.B) {
				loopCPU(b, func() {
					serve(b, a, httptest.NewRecorder(), pathCommandLogs+"?limit=50&exclude=output&"+c.query, who.key)
				})
			})
		}
	}
}

// BenchmarkLogBudget checks the log views' budget once per iteration, as the superuser
// and as the viewer of one site (100 of the 500 devices), timing each request in CPU time
// (the machine is shared, so wall time says more about its load; wall time is shown
// beside it): the statistics (limit 100 ms); the first page of every filter and
// ordering, a search's among them (50 ms); a cursor page 100,000 logs deep (or the list's last page)
// in each (50 ms); and, best effort (1 s), the pages 10,000 and 100,000 logs in by
// offset. It reports, for each, how many requests went over their limit and the
// slowest; FIELDKIT_SWEEP_OUT names a file that gets every request's time, slowest
// first, and FIELDKIT_SWEEP_MATCH, a regular expression, keeps the requests whose viewer
// and path ("constrained /api/…") it matches. With FIELDKIT_SWEEP_WRITE=1 a log is
// written before each request (untimed), as on a site where executions never stop:
// run it on a copy of the data set. The list cache is off: every page is read.
func BenchmarkLogBudget(b *testing.B) {
	a := benchAPI(b)
	orders := []string{"", "created", "id", "-id", "execution_duration", "-execution_duration", "success", "-success", "username", "-username"}
	filters := []string{"", "device_id=7", "device_id=7&device_id=9", "command_id=42", "user_id=1", "username=bench", "user_id=2",
		"success=false", "success=true", "created__gte=2026-11-10T00:00:00Z", "created__lte=2026-11-01T00:00:00Z",
		"created__gte=2026-11-05T00:00:00Z&created__lte=2026-11-06T00:00:00Z", "q=case%207", "q=dev-123", "device_id=7&success=false",
		"command_id=42&created__gte=2026-11-19T00:00:00Z", "q=Invalid&success=false", "q=GigabitEthernet0&device_id=7"}
	type request struct {
		kind, path string
		took, cpu  time.Duration
	}
	limits := map[string]time.Duration{"statistics": 100 * time.Millisecond, "first": 50 * time.Millisecond,
		"cursor": 50 * time.Millisecond, "offset": time.Second}
	var match *regexp.Regexp
	if expr := os.Getenv("FIELDKIT_SWEEP_MATCH"); expr != "" {
		match = regexp.MustCompile(expr)
	}
	write, written, after := os.Getenv("FIELDKIT_SWEEP_WRITE") == "1", 0, time.Time{}
	if write {
		after = benchNewest(b)
	}
	var reqs []request
	ask := func(who struct{ name, key string }, kind, path string) {
		if match != nil && !match.MatchString(who.name+" "+path) {
			return
		}
		if write {
			written++
			writeBenchLog(b, written, after)
		}
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Token "+who.key)
		w := httptest.NewRecorder()
		start, startCPU := time.Now(), processCPU()
		a.ServeHTTP(w, req)
		took, cpu := time.Since(start), time.Duration((processCPU()-startCPU)*float64(time.Second))
		if w.Code != http.StatusOK && w.Code != http.StatusNotFound { // 404: an offset past the list's end
			b.Fatalf("GET %s: %d %s", path, w.Code, w.Body.String())
		}
		reqs = append(reqs, request{kind, who.name + " " + path, took, cpu})
		if cpu > limits[kind] {
			fmt.Fprintf(os.Stderr, "over its limit: %9.1f ms CPU %9.1f ms wall  %-10s %s %s\n", float64(cpu.Microseconds())/1000,
				float64(took.Microseconds())/1000, kind, who.name, path)
		}
	}
	for b.Loop() {
		reqs = reqs[:0]
		for _, who := range benchViewers {
			ask(who, "statistics", pathCommandLogs+"statistics/")
			for _, o := range orders {
				for _, f := range filters {
					base := fmt.Sprintf("%s?limit=50&exclude=output&ordering=%s&%s", pathCommandLogs, o, f)
					ask(who, "first", base)
					b.StopTimer()
					cursor := benchCursor(b, a, who.key, o, f, 100_000)
					b.StartTimer()
					ask(who, "cursor", base+"&cursor="+cursor)
					for _, offset := range []int{10_000, 100_000} {
						ask(who, "offset", fmt.Sprintf("%s&offset=%d", base, offset))
					}
				}
			}
		}
	}
	slices.SortFunc(reqs, func(x, y request) int { return cmp.Compare(y.cpu, x.cpu) })
	var out strings.Builder
	over, slowest, count := map[string]int{}, map[string]time.Duration{}, map[string]int{}
	for _, r := range reqs {
		count[r.kind]++
		if r.cpu > limits[r.kind] {
			over[r.kind]++
		}
		slowest[r.kind] = max(slowest[r.kind], r.cpu)
		fmt.Fprintf(&out, "%9.1f ms CPU %9.1f ms wall  %-10s %s\n", float64(r.cpu.Microseconds())/1000,
			float64(r.took.Microseconds())/1000, r.kind, r.path)
	}
	if name := os.Getenv("FIELDKIT_SWEEP_OUT"); name != "" {
		if err := os.WriteFile(name, []byte(out.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, kind := range []string{"statistics", "first", "cursor", "offset"} {
		b.ReportMetric(float64(count[kind]), kind+"-requests")
		b.ReportMetric(float64(over[kind]), kind+"-over-limit")
		b.ReportMetric(float64(slowest[kind].Microseconds())/1000, kind+"-slowest-cpu-ms")
	}
}

// benchCursor is the cursor of the page depth logs into a list (its query: an ordering
// and filters), or of its last page when it holds fewer: the sort key of the log before
// it, as the page before would have given it.
func benchCursor(b *testing.B, a *API, key, ordering, filters string, depth int) string {
	b.Helper()
	req := httptest.NewRequest("GET", pathCommandLogs+"?"+filters+"&ordering="+ordering, nil)
	req.Header.Set("Authorization", "Token "+key)
	p, err := a.authenticate(req)
	if err != nil {
		b.Fatal(err)
	}
	scope, err := a.DB.Scope(req.Context(), p, store.TypeCommandLog, "view")
	if err != nil {
		b.Fatal(err)
	}
	q, _, err := logResource.parseList(req)
	if err != nil {
		b.Fatal(err)
	}
	q.Where = append(q.Where, scope.Expr)
	_, total, err := a.DB.ListIDs(req.Context(), q)
	if err != nil {
		b.Fatal(err)
	}
	q.Keyed, q.Limit, q.Offset = true, 1, max(0, min(depth, total-50)-1)
	_, _, next, err := a.DB.ListKeyed(req.Context(), q)
	if err != nil || next == nil {
		return "" // a list of one page or none: its first page
	}
	return encodeCursor(ordering, next)
}

// benchNewest is the created stamp of the data set's newest log, which an earlier run's
// writes (writeBenchLog) may have moved past benchEnd, and benchEnd at least.
func benchNewest(b *testing.B) time.Time {
	b.Helper()
	var newest string
	if err := bench.db.Reader().QueryRow(`SELECT max(created) FROM command_logs`).Scan(&newest); err != nil {
		b.Fatal(err)
	}
	if t, err := time.Parse(store.TimeFormat, newest); err == nil && t.After(benchEnd) {
		return t
	}
	return benchEnd
}

// writeBenchLog writes the nth log of a sweep's writes, as the generator makes them, a
// millisecond after each other and after: logs stay in created order.
func writeBenchLog(b *testing.B, n int, after time.Time) {
	b.Helper()
	dev, cmd, ok := n*7919%benchDevices+1, n*104729%benchCommands+1, n%7 != 0
	v := store.Values{"command": int64(cmd), "command_name": fmt.Sprintf("command %03d", cmd-1), "device": int64(dev),
		"device_name": fmt.Sprintf("dev-%03d", dev-1), "user": int64(1), "username": "bench", "success": ok,
		"output":             fmt.Sprintf("Interface GigabitEthernet0/1 is up, line protocol is up %d", n),
		"execution_duration": float64(n%5000) / 1000, "created": after.Add(time.Duration(n) * time.Millisecond)}
	if !ok {
		v["error_message"] = fmt.Sprintf("%% Invalid input detected at '^' marker (case %d)", n%20)
	}
	if _, err := bench.db.CreateLog(context.Background(), v); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPruneHour is the retention job deleting the oldest hour of logs from a copy
// of the data set (each iteration the next hour), with their counters; then, once, the
// first pages of five searches, superuser and constrained.
func BenchmarkPruneHour(b *testing.B) {
	if testing.Short() {
		b.Skip("the million-log benchmarks do not run under -short")
	}
	src := benchDBPath(benchLogs())
	if _, err := os.Stat(src); err != nil {
		b.Skipf("no data set at %s: run -bench LogPageFiltered first", src)
	}
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "fieldkit.db")
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(src+suffix, path+suffix); err != nil && !(suffix != "" && os.IsNotExist(err)) {
			b.Fatal(err)
		}
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetClock(func() time.Time { return benchEnd })
	a := New(Options{DB: db, Logger: slog.New(slog.DiscardHandler), Version: "bench"})
	setListCache(a, false)
	hour := benchEnd.Add(-benchSpan)
	var pruned int64
	start := processCPU()
	for b.Loop() {
		hour = hour.Add(time.Hour)
		n, err := db.PruneLogs(ctx, hour)
		if err != nil {
			b.Fatal(err)
		}
		pruned += n
	}
	b.ReportMetric((processCPU()-start)*1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(pruned)/float64(b.N), "logs/op")
	start = processCPU()
	for _, q := range []string{"q=command%20042", "q=case%207", "q=Invalid", "q=dev-123", "q=GigabitEthernet0"} {
		for _, key := range []string{benchAdminKey, benchViewKey} {
			serve(b, a, httptest.NewRecorder(), pathCommandLogs+"?limit=50&exclude=output&"+q, key)
		}
	}
	b.ReportMetric((processCPU()-start)*1000, "searches-after-cpu-ms")
}

// copyFile copies the file at from to to.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
