package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldkit/web/webtest"
)

// oldLogFixture makes a database as FieldKit made it before migration 0063, with
// outputs in the middle of each log: logs with large outputs, parsed output,
// variables and failures, some deleted, one device deleted. It returns the file's
// path and its size in pages.
func oldLogFixture(t *testing.T) (string, int64) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fieldkit.db")
	db, err := open(ctx, path, openOptions{}, "0062_log_moves")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if cols := logColumnOrder(t, db); cols[8] != "output" || cols[9] != "parsed_output" {
		t.Fatalf("before 0063 the outputs are columns 8 and 9: %v", cols)
	}
	devices := siteDevices(t, db, 3)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var logs []Values
	for i := range 300 {
		v := Values{"command_name": fmt.Sprintf("show thing %d", i%7), "device": devices[i%3], "device_name": fmt.Sprintf("d%d", i%3),
			"username": "alice", "success": i%4 != 0, "created": at.Add(time.Duration(i) * time.Minute),
			"output":        strings.Repeat(fmt.Sprintf("Interface Gi0/%d is up, line protocol is up\n", i), 150),
			"parsed_output": []map[string]any{{"interface": fmt.Sprintf("Gi0/%d", i), "status": "up"}},
			"variables":     map[string]any{"interface": fmt.Sprintf("Gi0/%d", i)}, "sent_command": fmt.Sprintf("show int Gi0/%d", i)}
		if i%4 == 0 {
			v["error_message"] = fmt.Sprintf("%% Invalid input (case %d)", i%5)
			v["failure"] = map[string]any{"phase": "command", "detail": "refused"}
		}
		logs = append(logs, v)
	}
	// One by one: InsertLogs restores the insert triggers of the newest schema.
	for _, v := range logs {
		if _, err := db.CreateLog(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	// A prune as it was before 0064: the delete drops the counts over the logs.
	db.search.pruneKeep = 0
	if _, err := db.PruneLogs(ctx, at.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, Devices, devices[1]); err != nil {
		t.Fatal(err)
	}
	var pages int64
	if err := db.w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	return path, pages
}

// logColumnOrder is command_logs' columns in their stored order.
func logColumnOrder(t *testing.T, db *DB) []string {
	t.Helper()
	return plainRows(t, db, func(r *sql.Rows) (string, error) {
		var s string
		return s, r.Scan(&s)
	}, `SELECT name FROM pragma_table_info('command_logs') ORDER BY cid`)
}

// logSnapshot is what a rebuild of command_logs must keep: every log's every column,
// the table's indexes and triggers, every table the triggers keep, and a search.
func logSnapshot(t *testing.T, db *DB) []string {
	t.Helper()
	var out []string
	dump := func(query string) {
		t.Helper()
		rows := dumpRows(t, db.r.DB, fmt.Sprintf("%.40s", query), query)
		slices.Sort(rows)
		out = append(out, rows...)
	}
	cols := logColumnOrder(t, db)
	slices.Sort(cols) // the same list before a rebuild and after, whatever their order
	dump(`SELECT ` + strings.Join(cols, ", ") + ` FROM command_logs ORDER BY id`)
	dump(`SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'command_logs' AND type IN ('index', 'trigger') ORDER BY name`)
	for _, table := range plainRows(t, db, func(r *sql.Rows) (string, error) {
		var s string
		return s, r.Scan(&s)
	}, `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'command\_log\_%' ESCAPE '\' ORDER BY name`) {
		dump(`SELECT * FROM ` + table)
	}
	dump(`SELECT rowid FROM command_logs_text WHERE command_logs_text MATCH 'Invalid' ORDER BY rowid`)
	if len(out) < 250 {
		t.Fatalf("snapshot of %d lines: the fixture is missing", len(out))
	}
	return out
}

func TestLogOutputsMovedLast(t *testing.T) {
	ctx := context.Background()
	path, _ := oldLogFixture(t)
	old, err := open(ctx, path, openOptions{}, "0062_log_moves")
	if err != nil {
		t.Fatal(err)
	}
	before := logSnapshot(t, old)
	old.Close()

	// The copy goes in many batches, each after the last id the one before copied.
	defer func(n int) { logRebuildBatch = n }(logRebuildBatch)
	logRebuildBatch = 7
	var logged bytes.Buffer
	db, err := open(ctx, path, openOptions{logger: slog.New(slog.NewTextHandler(&logged, nil))}, "0063_log_outputs_last")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := logColumnOrder(t, db)
	if n := len(cols); n != 24 || cols[n-2] != "output" || cols[n-1] != "parsed_output" {
		t.Fatalf("after 0063 the outputs are the last columns: %v", cols)
	}
	if after := logSnapshot(t, db); !slices.Equal(after, before) {
		for i := range min(len(after), len(before)) {
			if after[i] != before[i] {
				t.Fatalf("the rebuild changed %d lines to %d; first difference:\n%s\n%s", len(before), len(after), before[i], after[i])
			}
		}
		t.Fatalf("the rebuild changed %d lines to %d", len(before), len(after))
	}
	for _, want := range []string{"rewriting the command logs once", "logs=290", "command logs rewritten"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("progress log lacks %q:\n%s", want, logged.String())
		}
	}
	// The file and the word index agree with the new table, and references are
	// checked again.
	var check string
	if err := db.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO command_logs_text (command_logs_text, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("the word index does not match the rewritten logs: %v", err)
	}
	var fk, temp int
	if err := db.w.QueryRowContext(ctx, `SELECT * FROM pragma_foreign_keys, pragma_temp_store`).Scan(&fk, &temp); err != nil || fk != 1 || temp != 2 {
		t.Fatalf("the writer after the rebuild: foreign_keys %d, temp_store %d, %v; want 1 and 2 (memory)", fk, temp, err)
	}
	if _, err := db.CreateLog(ctx, Values{"command_name": "show zebra", "device": 999, "device_name": "x", "username": "u", "success": true}); err == nil {
		t.Fatal("a log of a device that does not exist was written after the rebuild")
	}

	// The triggers came back: a new log is counted and found by its words.
	if _, err := db.CreateLog(ctx, Values{"command_name": "show zebra", "device_name": "x", "username": "u", "success": true,
		"output": "zebrafish here"}); err != nil {
		t.Fatal(err)
	}
	var total, found int
	if err := db.r.QueryRowContext(ctx, `SELECT total, (SELECT count(*) FROM command_logs_text WHERE command_logs_text MATCH 'zebrafish')
		FROM command_log_totals`).Scan(&total, &found); err != nil || total != 291 || found != 1 {
		t.Fatalf("after one more log: total %d, found %d, %v; want 291 and 1", total, found, err)
	}

	// Opened again, it is not done twice.
	db.Close()
	logged.Reset()
	again, err := Open(ctx, path, Logger(slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if strings.Contains(logged.String(), "rewrit") {
		t.Fatalf("a second open rewrote the logs again:\n%s", logged.String())
	}
}

// A column that a migration after 0063 added survives 0063 run late (a full disk put it
// off to a later start than that migration's): the rebuild copies the columns the table
// has, not those it had at 0063.
func TestLogOutputsLastKeepsLaterColumns(t *testing.T) {
	ctx := context.Background()
	path, _ := oldLogFixture(t)
	old, err := open(ctx, path, openOptions{}, "0062_log_moves")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.w.ExecContext(ctx, `ALTER TABLE command_logs ADD COLUMN zz_later TEXT NOT NULL DEFAULT 'none';
		UPDATE command_logs SET zz_later = 'kept ' || id WHERE id % 3 = 0`); err != nil {
		t.Fatal(err)
	}
	before := logSnapshot(t, old)
	old.Close()
	db, err := open(ctx, path, openOptions{}, "0063_log_outputs_last")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := logColumnOrder(t, db)
	if n := len(cols); cols[n-3] != "zz_later" || cols[n-2] != "output" || cols[n-1] != "parsed_output" {
		t.Fatalf("after 0063: %v; want the later column kept, before the outputs", cols)
	}
	if after := logSnapshot(t, db); !slices.Equal(after, before) {
		t.Fatal("the rebuild changed the logs or lost the later column's values")
	}
}

// A disk that fills while the logs are rewritten leaves them as they were and the
// server starting; the next start, with room, rewrites them.
func TestLogOutputsLastDiskFull(t *testing.T) {
	ctx := context.Background()
	path, pages := oldLogFixture(t)
	var logged bytes.Buffer
	// Room for the later migrations' tables and indexes (a page each at least), not for
	// the log table's copy.
	full, err := open(ctx, path, openOptions{logger: slog.New(slog.NewTextHandler(&logged, nil)),
		writerPragmas: []string{fmt.Sprintf("max_page_count(%d)", pages+80)}}, "")
	if err != nil {
		t.Fatalf("a full disk kept the server from starting: %v", err)
	}
	if cols := logColumnOrder(t, full); cols[8] != "output" {
		t.Fatalf("a rebuild that failed changed the table: %v", cols)
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "disk is full") {
		t.Fatalf("the failed rebuild is not reported:\n%s", logged.String())
	}
	before := logSnapshot(t, full)
	if done, err := applied(ctx, full.w, "0063_log_outputs_last"); err != nil || done {
		t.Fatalf("a failed rebuild was recorded as applied: %v %v", done, err)
	}
	full.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if cols := logColumnOrder(t, db); cols[len(cols)-1] != "parsed_output" {
		t.Fatalf("the next start did not rewrite the logs: %v", cols)
	}
	if after := logSnapshot(t, db); !slices.Equal(after, before) {
		t.Fatal("the rebuild after a full disk changed the logs")
	}
}

// Two processes that start on the old file at once rewrite it once: the second waits
// for the first's transaction and finds the migration recorded.
func TestLogOutputsLastTwoAtOnce(t *testing.T) {
	ctx := context.Background()
	path, _ := oldLogFixture(t)
	var logs [2]bytes.Buffer
	errs := make(chan error, 2)
	for i := range logs {
		go func() {
			db, err := Open(ctx, path, Logger(slog.New(slog.NewTextHandler(&logs[i], nil))))
			if err == nil {
				err = db.Close()
			}
			errs <- err
		}()
	}
	for range logs {
		if err := <-errs; err != nil {
			t.Fatalf("one of two opens at once failed: %v", err)
		}
	}
	if n := strings.Count(logs[0].String()+logs[1].String(), "command logs rewritten"); n != 1 {
		t.Fatalf("the logs were rewritten %d times:\n%s\n%s", n, logs[0].String(), logs[1].String())
	}

	// A process that found the migration missing before another recorded it does
	// nothing once it holds the write lock.
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var late bytes.Buffer
	if err := db.rebuildLogs(ctx, slog.New(slog.NewTextHandler(&late, nil)), "0063_log_outputs_last"); err != nil {
		t.Fatalf("a late rebuild of a recorded migration: %v", err)
	}
	if late.Len() != 0 {
		t.Fatalf("a late rebuild of a recorded migration rewrote the logs:\n%s", late.String())
	}
}

// siteDevices makes a site and n devices in it, d0, d1…, and returns the devices' ids.
func siteDevices(t *testing.T, db *DB, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	id := mustID[int64](t)
	site := id(db.Create(ctx, Sites, Values{"name": "S", "slug": "s"}, All))
	var devices []int64
	for i := range n {
		devices = append(devices, id(db.Create(ctx, Devices, Values{"name": fmt.Sprintf("d%d", i), "site": site}, All)))
	}
	return devices
}

// A start that finds another process writing past the busy timeout (the server
// rewriting the logs at an upgrade, with fieldkit export started beside it) waits for
// that write, says so, and migrates once it is done; a start with nothing to migrate
// does not wait at all; past migrateWaitMost a start fails.
func TestOpenWaitsForAnotherWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fieldkit.db")
	old, err := open(ctx, path, openOptions{}, "0063_log_outputs_last")
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	// The other process's long write: a connection of its own holding the write lock.
	hold := func() *sql.Conn {
		t.Helper()
		other, err := sql.Open("sqlite", dsn(path, true))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		conn, err := other.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
			t.Fatal(err)
		}
		return conn
	}
	start := func(logged *webtest.Buffer) <-chan error {
		done := make(chan error, 1)
		go func() {
			db, err := open(ctx, path, openOptions{logger: slog.New(slog.NewTextHandler(logged, nil)),
				writerPragmas: []string{"busy_timeout(50)"}}, "")
			if err == nil {
				err = db.Close()
			}
			done <- err
		}()
		return done
	}

	conn := hold()
	var logged webtest.Buffer
	done := start(&logged)
	for !strings.Contains(logged.String(), "another process is writing to the database") {
		select {
		case err := <-done:
			t.Fatalf("the start ended while another process held the write lock: %v\n%s", err, logged.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the start failed after the other write ended: %v", err)
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if done, err := applied(ctx, db.r, "0064_log_prune_counts"); err != nil || !done {
		t.Fatalf("the migration after the wait: %v %v", done, err)
	}

	// With every migration applied, a start needs no write lock: it opens at once.
	defer func(d time.Duration) { migrateWaitMost = d }(migrateWaitMost)
	migrateWaitMost = 200 * time.Millisecond
	conn = hold()
	var quiet webtest.Buffer
	if err := <-start(&quiet); err != nil || quiet.String() != "" {
		t.Fatalf("a migrated database beside another writer: %v\n%s", err, quiet.String())
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}

	// Past migrateWaitMost, the start gives up with SQLite's own error.
	if _, err := db.w.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = '0064_log_prune_counts'`); err != nil {
		t.Fatal(err)
	}
	conn = hold()
	defer conn.ExecContext(ctx, `ROLLBACK`)
	if err := <-start(&webtest.Buffer{}); !isBusy(err) {
		t.Fatalf("a start past migrateWaitMost: %v, want database is locked", err)
	}
}
