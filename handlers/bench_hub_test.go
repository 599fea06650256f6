package handlers

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/store"
	"fieldkit/store/pgtest"
)

// The log views of a hub on PostgreSQL (issue 40: the cross-site page and statistics
// within 100 ms at 10M logs), through the API's handler as the SQLite benchmarks
// (bench_test.go) go through it. The data set is benchLogs() logs (FIELDKIT_BENCH_LOGS,
// a million unless set) over hubSites sites of hubSiteDevices devices each, as a hub
// holds them after its sites pushed: the logs' user is the edge's user name (no hub
// user), their device and command the hub's. It is made once, in the server
// FIELDKIT_TEST_PG_DSN names, in a schema of its own (hubBenchSchema) that later runs
// reuse and nothing drops: at 10M it takes about 7 GB and minutes to make. Drop it with
// `DROP SCHEMA fk_bench_hub_10m CASCADE`.
//
//	FIELDKIT_BENCH_LOGS=10000000 go test ./handlers -run '^$' -bench HubLog -benchtime 5x
const (
	hubSites       = 50
	hubSiteDevices = 100
	hubDevices     = hubSites * hubSiteDevices
	hubUsers       = 8
	hubViewSite    = "site-07" // the site the viewer (benchViewKey) is confined to
)

// hubBenchSchema is the schema of the data set of n logs.
func hubBenchSchema(n int) string {
	name := fmt.Sprint(n)
	if n%1_000_000 == 0 {
		name = fmt.Sprint(n/1_000_000, "m")
	}
	return "fk_bench_hub_" + name
}

var hubBench struct {
	once sync.Once
	db   *store.DB
	api  *API
	err  error
}

// hubBenchAPI is the API over the hub's data set, made the first time.
func hubBenchAPI(b *testing.B) *API {
	b.Helper()
	if testing.Short() {
		b.Skip("the hub's log benchmarks do not run under -short")
	}
	base := os.Getenv("FIELDKIT_TEST_PG_DSN")
	if base == "" {
		b.Skip("FIELDKIT_TEST_PG_DSN is not set: no PostgreSQL for the hub's data set")
	}
	hubBench.once.Do(func() {
		ctx := context.Background()
		n := benchLogs()
		schema := hubBenchSchema(n)
		dsn := pgtest.WithSearchPath(b, base, schema)
		if hubBench.err = fillHubBench(ctx, base, dsn, schema, n); hubBench.err != nil {
			return
		}
		// Opening migrates the data set to the schema of today (an index added since).
		hubBench.db, hubBench.err = store.OpenPostgres(ctx, dsn, store.Logger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
		if hubBench.err != nil {
			return
		}
		hubBench.db.SetClock(func() time.Time { return benchEnd })
		hubBench.api = New(Options{DB: hubBench.db, Logger: slog.New(slog.DiscardHandler), Version: "bench"})
		setListCache(hubBench.api, false)
	})
	if hubBench.err != nil {
		b.Fatal(hubBench.err)
	}
	b.ReportMetric(float64(benchLogs()), "logs")
	return hubBench.api
}

// fillHubBench makes the data set in schema unless a complete one is there: the
// store's schema (OpenPostgres), the users, tokens and the viewer's permission through
// the store, the sites, devices and commands in SQL, then the logs and the counters the
// store keeps beside them (store/logcounts.go) each in one INSERT … SELECT, checked
// against each other, and the table analysed.
func fillHubBench(ctx context.Context, base, dsn, schema string, n int) error {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer admin.Close()
	var done bool
	if err := admin.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.tables
		WHERE table_schema = $1 AND table_name = 'bench_complete')`, schema).Scan(&done); err != nil || done {
		return err
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "making %d logs in PostgreSQL schema %s\n", n, schema)
	if _, err := admin.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE; CREATE SCHEMA `+schema); err != nil {
		return err
	}
	db, err := store.OpenPostgres(ctx, dsn)
	if err != nil {
		return err
	}
	if err := seedHubBench(ctx, db); err != nil {
		db.Close()
		return err
	}
	db.Close()
	pg, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer pg.Close()
	pg.SetMaxOpenConns(1) // the session's settings hold for every statement
	step := func(what, query string, args ...any) error {
		t := time.Now()
		if _, err := pg.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		fmt.Fprintf(os.Stderr, "  %-28s %s\n", what, time.Since(t).Round(time.Millisecond))
		return nil
	}
	if err := step("settings", `SET maintenance_work_mem = '1GB'; SET work_mem = '256MB'; SET synchronous_commit = off`); err != nil {
		return err
	}
	// The indexes of command_logs are made after its rows: built once, far faster.
	rows, err := pg.QueryContext(ctx, `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1
		AND tablename = 'command_logs' AND indexname <> 'command_logs_pkey'`, schema)
	if err != nil {
		return err
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			rows.Close()
			return err
		}
		names, defs = append(names, name), append(defs, def)
	}
	rows.Close()
	if err := step("drop indexes", `DROP INDEX `+strings.Join(names, ", ")); err != nil {
		return err
	}
	if err := step("logs", hubBenchLogsSQL, n, benchEnd.Unix(), benchSpan.Seconds()); err != nil {
		return err
	}
	for i, def := range defs {
		if err := step("index "+names[i], def); err != nil {
			return err
		}
	}
	for _, c := range hubBenchCounters {
		if err := step(c.what, c.sql); err != nil {
			return err
		}
	}
	// Each counter sums to the logs it counts, as the store keeps them.
	var logs, counts, hours, commands, errs, failed int64
	if err := pg.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM command_logs), (SELECT sum(n) FROM command_log_counts),
		(SELECT sum(n) FROM command_log_hours), (SELECT sum(n) FROM command_log_commands),
		(SELECT sum(n) FROM command_log_errors), (SELECT sum(n) FROM command_log_counts WHERE outcome = 0)`).
		Scan(&logs, &counts, &hours, &commands, &errs, &failed); err != nil {
		return err
	}
	if logs != int64(n) || counts != logs || hours != logs || commands != logs || errs != failed {
		return fmt.Errorf("the data set's counters do not hold its logs: %d logs (want %d), counted %d, by hour %d, "+
			"by command %d, errors %d of %d failed", logs, n, counts, hours, commands, errs, failed)
	}
	if err := step("vacuum analyze", `VACUUM (ANALYZE) command_logs, command_log_counts, command_log_hours,
		command_log_commands, command_log_errors, command_log_names, devices, sites`); err != nil {
		return err
	}
	if err := step("done", `CREATE TABLE bench_complete (logs BIGINT NOT NULL)`); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "made %d logs in %s\n", n, time.Since(start).Round(time.Second))
	return nil
}

// seedHubBench makes the users and their tokens (the superuser bench, the viewer of
// hubViewSite's logs), the sites, platforms, devices and commands.
func seedHubBench(ctx context.Context, db *store.DB) error {
	if err := seedBenchUsers(ctx, db, hubViewSite); err != nil {
		return err
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		for _, s := range []string{
			`INSERT INTO platforms (id, name, slug, created, last_updated)
				SELECT i, 'platform-' || i, 'platform-' || i, '` + tkNow + `', '` + tkNow + `' FROM generate_series(1, 4) i`,
			fmt.Sprintf(`INSERT INTO sites (id, name, slug, created, last_updated)
				SELECT i, 'site-' || lpad((i - 1)::text, 2, '0'), 'site-' || lpad((i - 1)::text, 2, '0'), '%s', '%s'
				FROM generate_series(1, %d) i`, tkNow, tkNow, hubSites),
			// Device d (from 0) is at site d mod hubSites, so that a site's devices are spread.
			fmt.Sprintf(`INSERT INTO devices (id, name, site_id, platform_id, created, last_updated)
				SELECT d + 1, 'dev-' || lpad(d::text, 4, '0'), d %% %d + 1, d %% 4 + 1, '%s', '%s'
				FROM generate_series(0, %d) d`, hubSites, tkNow, tkNow, hubDevices-1),
			fmt.Sprintf(`INSERT INTO commands (id, name, command, command_type, created, last_updated)
				SELECT c + 1, 'command ' || lpad(c::text, 3, '0'), 'show thing ' || c,
					CASE WHEN c %% 5 = 0 THEN 'config' ELSE 'show' END, '%s', '%s' FROM generate_series(0, %d) c`,
				tkNow, tkNow, benchCommands-1),
			`SELECT setval(pg_get_serial_sequence('platforms', 'id'), 4), setval(pg_get_serial_sequence('sites', 'id'), 100),
				setval(pg_get_serial_sequence('devices', 'id'), 10000), setval(pg_get_serial_sequence('commands', 'id'), 1000)`,
		} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// hubBenchLogsSQL makes the logs ($1 of them over the $3 seconds before $2, in created
// order, as insertBenchLogs does on SQLite): device, command, user, outcome, error and
// duration from a quadratic hash of i; 85 % successful, 1 % cancelled, 20 error messages,
// 8 user names.
var hubBenchLogsSQL = func() string {
	const p = 2147483647
	hash := func(a, c int) string { // ((i² mod p)·a + i·c + 1) mod p
		return fmt.Sprintf("(((i * i) %% %d) * %d + i * %d + 1) %% %d", p, a, c, p)
	}
	return `INSERT INTO command_logs (id, command_id, command_name, command_type, device_id, device_name, user_id, username,
			output, success, failure, error_message, execution_duration, execution_time, created, last_updated, source)
		SELECT i + 1, cmd + 1, 'command ' || lpad(cmd::text, 3, '0'), CASE WHEN cmd % 5 = 0 THEN 'config' ELSE 'show' END,
			dev + 1, 'dev-' || lpad(dev::text, 4, '0'), NULL, 'noc-' || usr,
			'Interface GigabitEthernet0/1 is up, line protocol is up ' || i, CASE WHEN ok < 85 THEN 1 ELSE 0 END,
			CASE WHEN ok < 85 THEN NULL WHEN ok = 99 THEN '{"reason": "cancelled", "stage": "run"}'
				ELSE '{"reason": "device", "stage": "run"}' END,
			CASE WHEN ok < 85 THEN '' WHEN ok = 99 THEN 'cancelled'
				ELSE '% Invalid input detected at ''^'' marker (case ' || err || ')' END,
			ms / 1000.0, at, at, at, 'api'
		FROM (SELECT i, ` + hash(48271, 69621) + fmt.Sprintf(` %% %d AS dev, `, hubDevices) +
		hash(16807, 40692) + fmt.Sprintf(` %% %d AS cmd, `, benchCommands) +
		hash(39373, 52774) + ` % 100 AS ok, ` + hash(22695, 75679) + ` % 20 AS err, ` +
		hash(31337, 27183) + ` % 5000 AS ms, ` + hash(10007, 33331) + fmt.Sprintf(` %% %d AS usr, `, hubUsers) +
		`to_char(to_timestamp($2::float8 - $3::float8 * ($1::bigint - i) / $1::bigint) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at
			FROM generate_series(0, $1::bigint - 1) i) r`
}()

// hubBenchOutcome is a log's outcome as the store counts it (logcounts.go): 1
// succeeded, 2 cancelled, 0 failed.
const hubBenchOutcome = `(CASE WHEN success = 1 THEN 1 WHEN failure::jsonb ->> 'reason' = 'cancelled' THEN 2 ELSE 0 END)`

// hubBenchCounters fill the counters from the logs, as migration 0130 does on SQLite.
var hubBenchCounters = []struct{ what, sql string }{
	{"counts", `INSERT INTO command_log_counts (device_key, user_key, username, outcome, n)
		SELECT coalesce(device_id, 0), coalesce(user_id, 0), username, ` + hubBenchOutcome + `, count(*)
		FROM command_logs GROUP BY 1, 2, 3, 4`},
	{"hours", `INSERT INTO command_log_hours (hour, device_key, outcome, n)
		SELECT substr(created, 1, 13), coalesce(device_id, 0), ` + hubBenchOutcome + `, count(*) FROM command_logs GROUP BY 1, 2, 3`},
	{"commands", `INSERT INTO command_log_commands (command_key, command_name, device_key, n)
		SELECT coalesce(command_id, 0), command_name, coalesce(device_id, 0), count(*) FROM command_logs GROUP BY 1, 2, 3`},
	{"errors", `INSERT INTO command_log_errors (device_key, error, n)
		SELECT coalesce(device_id, 0), substr(error_message, 1, 100), count(*) FROM command_logs
		WHERE ` + hubBenchOutcome + ` = 0 GROUP BY 1, 2`},
	{"names", `INSERT INTO command_log_names (kind, name)
		SELECT 0, command_name FROM command_logs UNION SELECT 1, device_name FROM command_logs
		UNION SELECT 2, username FROM command_logs`},
}

// BenchmarkHubLogPages is the hub's log views, each a sub-benchmark for the superuser
// and for the viewer of one site (2 % of the logs): the statistics, the first page of
// each filter and ordering, a cursor page deep in, offset pages, and the count alone
// (limit=1). The wall time of a request is the figure: on PostgreSQL most of a
// request's work is the server's, not this process's.
func BenchmarkHubLogPages(b *testing.B) {
	a := hubBenchAPI(b)
	ctx := context.Background()
	// A cursor 100,000 logs into the viewer's list and into everything (or half way in a
	// smaller data set).
	rq := hubBench.db.Reader()
	cursorAt := func(where string, depth int) string {
		var visible int
		if err := rq.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE `+where).Scan(&visible); err != nil {
			b.Fatal(err)
		}
		var created string
		var id int64
		if err := rq.QueryRowContext(ctx, `SELECT created, id FROM command_logs t WHERE `+where+
			` ORDER BY created DESC, id DESC LIMIT 1 OFFSET `+fmt.Sprint(min(depth, visible/2))).Scan(&created, &id); err != nil {
			b.Fatal(err)
		}
		return encodeCursor("", []any{created, id})
	}
	siteDevices := `device_id IN (SELECT d.id FROM devices d JOIN sites s ON s.id = d.site_id WHERE s.slug = '` + hubViewSite + `')`
	cursors := map[string]string{benchAdminKey: cursorAt("TRUE", 100_000), benchViewKey: cursorAt(siteDevices, 100_000)}
	day := "created__gte=2026-11-05T00:00:00Z&created__lte=2026-11-06T00:00:00Z"
	for _, c := range []benchPage{
		{"statistics", ""},
		{"first", ""},
		{"first-with-output", ""},
		{"count", "limit=1"},
		{"site", "site=" + hubViewSite},
		{"site-id", "site_id=8"},
		{"device", "device_id=8"},
		{"devices", "device_id=8&device_id=58&device_id=108"},
		{"username", "username=noc-3"},
		{"failed", "success=false"},
		{"failed-device", "success=false&device_id=8"},
		{"command", "command_id=42"},
		{"day", day},
		{"oldest", "ordering=created"},
		{"by-id", "ordering=id"},
		{"by-username", "ordering=-username"},
		{"by-duration", "ordering=-execution_duration"},
		{"by-success", "ordering=success"},
		{"by-duration-device", "ordering=-execution_duration&device_id=8"},
		{"by-username-day", "ordering=username&" + day},
		{"cursor-100k", "cursor="},
		{"offset-10k", "offset=10000"},
		{"offset-100k", "offset=100000"},
	} {
		for _, who := range benchViewers {
			b.Run(c.name+"/"+who.name, func(b *testing.B) {
				path := pathCommandLogs + "?limit=50&exclude=output&" + c.query
				// The viewer sees one site's logs: at fewer logs than the offset, no page.
				if off, ok := strings.CutPrefix(c.query, "offset="); ok && who.key == benchViewKey && benchLogs()/hubSites <= atoi(off) {
					b.Skipf("the viewer sees %d logs: no page at %s", benchLogs()/hubSites, c.query)
				}
				switch c.name {
				case "statistics":
					path = pathCommandLogs + "statistics/"
				case "first-with-output":
					path = pathCommandLogs + "?limit=50"
				case "cursor-100k":
					path += cursors[who.key]
				}
				for b.Loop() {
					serve(b, a, httptest.NewRecorder(), path, who.key)
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
			})
		}
	}
}

// TestHubBenchCounters: the hub benchmarks' data set counts its logs as the store
// does. A few thousand logs made by hubBenchLogsSQL are counted by the store in Go
// (BulkLogs), then by hubBenchCounters in SQL: every counter row is the same.
func TestHubBenchCounters(t *testing.T) {
	ctx := context.Background()
	db, err := store.OpenPostgres(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := seedHubBench(ctx, db); err != nil {
		t.Fatal(err)
	}
	const n = 3000
	if got, err := db.BulkLogs(ctx, func(tx *sql.Tx) (int, error) {
		res, err := tx.ExecContext(ctx, hubBenchLogsSQL, n, benchEnd.Unix(), benchSpan.Seconds())
		if err != nil {
			return 0, err
		}
		m, err := res.RowsAffected()
		return int(m), err
	}); err != nil || got != n {
		t.Fatalf("BulkLogs: %d, %v", got, err)
	}
	tables := []string{"command_log_counts", "command_log_hours", "command_log_commands", "command_log_errors", "command_log_names"}
	snapshot := func() map[string][]string {
		out := map[string][]string{}
		for _, table := range tables {
			rows, err := db.Reader().QueryContext(ctx, `SELECT row_to_json(c)::text FROM `+table+` c ORDER BY 1`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				out[table] = append(out[table], s)
			}
			rows.Close()
		}
		return out
	}
	byStore := snapshot()
	if len(byStore["command_log_errors"]) == 0 || len(byStore["command_log_counts"]) < 3 {
		t.Fatalf("the logs have too few failures or outcomes to compare: %v", byStore["command_log_counts"])
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		for _, table := range tables {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table); err != nil {
				return err
			}
		}
		for _, c := range hubBenchCounters {
			if _, err := tx.ExecContext(ctx, c.sql); err != nil {
				return fmt.Errorf("%s: %w", c.what, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	bySQL := snapshot()
	for _, table := range tables {
		if !slices.Equal(byStore[table], bySQL[table]) {
			t.Errorf("%s: the store counted %d rows, the benchmark's SQL %d, first differing:\n%s",
				table, len(byStore[table]), len(bySQL[table]), firstDiff(byStore[table], bySQL[table]))
		}
	}
	// A cancelled log is counted as one (outcome 2), a failed one under its error.
	var cancelled int
	if err := db.Reader().QueryRowContext(ctx, `SELECT coalesce(sum(n), 0) FROM command_log_counts WHERE outcome = 2`).Scan(&cancelled); err != nil || cancelled == 0 {
		t.Fatalf("no cancelled log counted: %d, %v", cancelled, err)
	}
}

// firstDiff is the first place where a and b differ, as text.
func firstDiff(a, b []string) string {
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("store: %s\nsql:   %s", x, y)
		}
	}
	return ""
}

// atoi is s's integer (0 when s is none).
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
