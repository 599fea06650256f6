package handlers

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/store"
)

// The benchmarks run against a million logs over 500 devices and 200 commands. The
// database is generated once into the temp directory and reused by later runs:
//
//	go test ./handlers -run '^$' -bench . -benchtime 2s
const (
	benchLogs     = 1_000_000
	benchDevices  = 500
	benchCommands = 200
	benchAdminKey = "0000000000000000000000000000000000b3nc4a"
	benchViewKey  = "0000000000000000000000000000000000b3nc4b"
)

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
		path := filepath.Join(os.TempDir(), "fieldkit-bench-1m.db")
		if _, err := os.Stat(path); err != nil {
			if bench.err = generateBenchDB(path); bench.err != nil {
				return
			}
		}
		bench.db, bench.err = store.Open(context.Background(), path)
		bench.api = New(Options{DB: bench.db, Logger: slog.New(slog.DiscardHandler), Version: "bench"})
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.api
}

// generateBenchDB builds the database under a temporary name and renames it when
// complete, so an interrupted run never leaves a half-filled cache behind.
func generateBenchDB(path string) error {
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
	n, err := db.InsertLogSeq(ctx, benchLogSeq(db))
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "generated %d logs into %s in %s\n", n, path, time.Since(start).Round(time.Millisecond))
	return os.Rename(tmp, path)
}

func seedBench(ctx context.Context, db *store.DB) error {
	admin, viewer := "bench", "viewer"
	super := true
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
	pname, cons := "site-1 logs", json.RawMessage(`{"device__site__slug": "site-1"}`)
	if _, err := db.CreatePermission(ctx, store.PermissionInput{Name: &pname, ObjectTypes: &[]string{store.TypeCommandLog},
		Actions: &[]string{"view"}, Constraints: &cons, Users: &[]int64{vid}}, store.All); err != nil {
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

// benchLogSeq makes the million logs on the fly: 30 days, 85 % successful.
func benchLogSeq(db *store.DB) iter.Seq[store.Values] {
	errs := make([]string, 20)
	for i := range errs {
		errs[i] = fmt.Sprintf("%% Invalid input detected at '^' marker (case %d)", i)
	}
	end := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	span := int64(30 * 24 * time.Hour)
	return func(yield func(store.Values) bool) {
		rng := rand.New(rand.NewPCG(42, 42))
		for i := range benchLogs {
			dev, cmd := rng.IntN(benchDevices), rng.IntN(benchCommands)
			ok := rng.IntN(100) < 85
			in := store.Values{"command": int64(cmd + 1), "command_name": fmt.Sprintf("command %03d", cmd),
				"device": int64(dev + 1), "device_name": fmt.Sprintf("dev-%03d", dev), "user": 1, "username": "bench",
				"output": "Interface GigabitEthernet0/1 is up, line protocol is up " + strconv.Itoa(i), "success": ok,
				"execution_duration": float64(rng.IntN(5000)) / 1000,
				"created":            end.Add(-time.Duration(span * int64(benchLogs-i) / benchLogs))}
			if cmd%5 == 0 {
				in["command_type"] = "config"
			}
			if !ok {
				in["error_message"] = errs[rng.IntN(len(errs))]
			}
			if !yield(in) {
				return
			}
		}
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
	for b.Loop() {
		i++
		serve(b, a, httptest.NewRecorder(), fmt.Sprintf("%s?device_id=%d&limit=50", pathCommandLogs, i%benchDevices+1), benchAdminKey)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func BenchmarkStatistics(b *testing.B) {
	a := benchAPI(b)
	for _, c := range []struct{ name, key string }{{"superuser", benchAdminKey}, {"constrained", benchViewKey}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				serve(b, a, httptest.NewRecorder(), pathCommandLogs+"statistics/", c.key)
			}
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
func BenchmarkLogPageUnfiltered(b *testing.B) {
	a := benchAPI(b)
	for _, c := range []struct{ name, key string }{{"superuser", benchAdminKey}, {"constrained", benchViewKey}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				serve(b, a, httptest.NewRecorder(), pathCommandLogs+"?limit=50", c.key)
			}
		})
	}
}
