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

// beforeLogStore is the last migration before the log store's (0130): the schema an
// upgrade starts from.
const beforeLogStore = "0112_hub_jobs"

// oldLogFixture makes a database as FieldKit made it before migration 0130 (at 0112, the
// logs written by SQL as that version's triggers kept them): logs with large outputs,
// parsed output, variables, failures and cancellations, the oldest pruned, one device
// deleted; the hub's outbox on (each log noted in hub_outbox) and some logs linked to a
// schedule (command_log_schedules, which refers to command_logs). It returns the file's
// path and its size in pages.
func oldLogFixture(t *testing.T) (string, int64) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fieldkit.db")
	db, err := open(ctx, path, openOptions{}, beforeLogStore)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	devices := siteDevices(t, db, 3)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	err = db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE hub_edge SET enabled = 1 WHERE id = 1`); err != nil {
			return err
		}
		for i := range 300 {
			failure, msg := sql.NullString{}, ""
			switch i % 8 {
			case 0, 4:
				msg, failure = fmt.Sprintf("%% Invalid input (case %d) %s", i%5, strings.Repeat("é", 120)),
					sql.NullString{String: `{"phase": "command", "detail": "refused"}`, Valid: true}
			case 6:
				msg, failure = "Cancelled by alice; the output so far is kept.",
					sql.NullString{String: `{"cancelled_by":"alice","phase":"command","reason":"cancelled"}`, Valid: true}
			}
			created := Stamp(at.Add(time.Duration(i) * 7 * time.Minute))
			if _, err := tx.ExecContext(ctx, `INSERT INTO command_logs (command_id, command_name, device_id, device_name,
				user_id, username, output, parsed_output, success, error_message, execution_duration, execution_time, created,
				last_updated, sent_command, variables, failure, source, client_address)
				VALUES (NULL, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				fmt.Sprintf("show thing %d", i%7), devices[i%3], fmt.Sprintf("d%d", i%3), []string{"alice", "bob"}[i%2],
				strings.Repeat(fmt.Sprintf("Interface Gi0/%d is up, line protocol is up\n", i), 150),
				fmt.Sprintf(`[{"interface": "Gi0/%d", "status": "up"}]`, i), msg == "", msg, float64(i%40)/10,
				created, created, created, fmt.Sprintf("show int Gi0/%d", i), fmt.Sprintf(`{"interface": "Gi0/%d"}`, i),
				failure, []any{nil, "api", "ui"}[i%3], "10.0.0.1"); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE created < ?`, Stamp(at.Add(70*time.Minute))); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO command_log_schedules (log_id, schedule_id, schedule_name)
			SELECT id, 7, 'nightly' FROM command_logs WHERE id % 10 = 3`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, devices[1])
		return err
	})
	if err != nil {
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
	cols, err := scalars[string](context.Background(), db.r, `SELECT name FROM pragma_table_info('command_logs') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// logSnapshot is every log's every column (but notes, which 0130 adds), by id.
func logSnapshot(t *testing.T, db *DB) []string {
	t.Helper()
	cols := slices.DeleteFunc(logColumnOrder(t, db), func(c string) bool { return c == "notes" })
	slices.Sort(cols) // the same list before a rewrite and after, whatever their order
	rows := dumpRows(t, db.r.DB, "", `SELECT `+strings.Join(cols, ", ")+` FROM command_logs ORDER BY id`)
	if len(rows) < 250 {
		t.Fatalf("snapshot of %d logs: the fixture is missing", len(rows))
	}
	return rows
}

// recount is what the counters would hold counted afresh from the logs, in Go, as
// the counter tables' rows ("table key… = n"), sorted.
func recount(t *testing.T, db *DB) []string {
	t.Helper()
	ctx := context.Background()
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT `+tallyColumns+` FROM command_logs t`)
	if err != nil {
		t.Fatal(err)
	}
	c := newCounterRows()
	for rows.Next() {
		tally, err := scanTally(rows)
		if err != nil {
			t.Fatal(err)
		}
		c.add(tally, 1)
	}
	rows.Close()
	var out []string
	line := func(table string, key []any, n int64) { out = append(out, fmt.Sprintf("%s %v = %d", table, key, n)) }
	for k, n := range c.counts {
		line("command_log_counts", k[:], n)
	}
	for k, n := range c.hours {
		line("command_log_hours", k[:], n)
	}
	for k, n := range c.commands {
		line("command_log_commands", k[:], n)
	}
	for k, n := range c.errors {
		line("command_log_errors", k[:], n)
	}
	slices.Sort(out)
	return out
}

// counters is what the counter tables hold, as recount gives it.
func counters(t *testing.T, db *DB) []string {
	t.Helper()
	var out []string
	for _, ct := range counterTables {
		rows, err := db.r.Query(`SELECT ` + ct.keys + `, n FROM ` + ct.table)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(ct.keys, ",") + 1
		for rows.Next() {
			vals := make([]any, n+1)
			dest := make([]any, n+1)
			for i := range vals {
				dest[i] = &vals[i]
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s %v = %d", ct.table, vals[:n], vals[n]))
		}
		rows.Close()
	}
	slices.Sort(out)
	return out
}

func TestLogStoreMigration(t *testing.T) {
	ctx := context.Background()
	path, _ := oldLogFixture(t)
	old, err := open(ctx, path, openOptions{}, beforeLogStore)
	if err != nil {
		t.Fatal(err)
	}
	before := logSnapshot(t, old)
	// What refers to a log and what a log's triggers noted stay as they were.
	const beside = `SELECT 'schedule', log_id, schedule_id, schedule_name FROM command_log_schedules
		UNION ALL SELECT 'hub', seq, ref, kind FROM hub_outbox ORDER BY 1, 2`
	besideBefore := dumpRows(t, old.r.DB, "", beside)
	if len(besideBefore) < 300 {
		t.Fatalf("the fixture lacks schedule links or hub records: %d rows", len(besideBefore))
	}
	old.Close()

	// The copy goes in many batches, each after the last id the one before copied.
	defer func(n int) { logRebuildBatch = n }(logRebuildBatch)
	logRebuildBatch = 7
	var logged bytes.Buffer
	db, err := open(ctx, path, openOptions{logger: slog.New(slog.NewTextHandler(&logged, nil))}, "0130_log_store")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := logColumnOrder(t, db)
	if n := len(cols); n != 25 || cols[n-3] != "notes" || cols[n-2] != "output" || cols[n-1] != "parsed_output" {
		t.Fatalf("after 0130: %v; want notes, then the outputs last", cols)
	}
	if after := logSnapshot(t, db); !slices.Equal(after, before) {
		t.Fatalf("the migration changed the logs (%d lines before, %d after)", len(before), len(after))
	}
	for _, want := range []string{"rewriting the command logs once", "logs=290", "command logs rewritten"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("progress log lacks %q:\n%s", want, logged.String())
		}
	}
	if after := dumpRows(t, db.r.DB, "", beside); !slices.Equal(after, besideBefore) {
		t.Fatal("the migration changed the logs' schedule links or hub records")
	}
	if broken := dumpRows(t, db.r.DB, "", `SELECT * FROM pragma_foreign_key_check`); len(broken) > 0 {
		t.Fatalf("foreign keys broken after the migration: %v", broken)
	}
	if got, want := counters(t, db), recount(t, db); !slices.Equal(got, want) {
		t.Fatalf("counters after the migration:\n%s\nwant (counted again):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var triggers, cancelled int
	if err := db.r.QueryRow(`SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'command_logs'),
		(SELECT sum(n) FROM command_log_counts WHERE outcome = 2)`).Scan(&triggers, &cancelled); err != nil || triggers != 7 || cancelled != 36 {
		t.Fatalf("after 0130: %d triggers on command_logs, %d cancelled logs counted (%v); want 7 (the store's 5, the event's, the hub's) and 36",
			triggers, cancelled, err)
	}
	var check string
	if err := db.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO command_log_words (command_log_words, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("the word index does not match the logs: %v", err)
	}
	var fk, temp int
	if err := db.w.QueryRowContext(ctx, `SELECT * FROM pragma_foreign_keys, pragma_temp_store`).Scan(&fk, &temp); err != nil || fk != 1 || temp != 2 {
		t.Fatalf("the writer after the rewrite: foreign_keys %d, temp_store %d, %v; want 1 and 2 (memory)", fk, temp, err)
	}
	if _, err := db.CreateLog(ctx, Values{"command_name": "show zebra", "device": 999, "device_name": "x", "username": "u", "success": true}); err == nil {
		t.Fatal("a log of a device that does not exist was written after the rewrite")
	}
	// A new log is counted and found by its words; the old ones by theirs. The triggers
	// kept fire: its hub record and its event are noted.
	if _, err := db.w.ExecContext(ctx, `INSERT INTO webhooks (name, payload_url, content_types, type_create, created, last_updated)
		VALUES ('w', 'http://127.0.0.1:9/', '["netbox_toolkit_plugin.commandlog"]', 1, '', '')`); err != nil {
		t.Fatal(err)
	}
	zebra, err := db.CreateLog(ctx, Values{"command_name": "show zebra", "device_name": "x", "username": "u", "success": true,
		"output": "zebrafish here"})
	if err != nil {
		t.Fatal(err)
	}
	var hubRecords, events int
	if err := db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM hub_outbox WHERE kind = 'log' AND ref = ?1),
		(SELECT count(*) FROM event_outbox WHERE object_type = 'netbox_toolkit_plugin.commandlog' AND object_id = ?1)`,
		zebra).Scan(&hubRecords, &events); err != nil || hubRecords != 1 || events != 1 {
		t.Fatalf("a log written after the migration: %d hub records, %d events (%v); want 1 and 1", hubRecords, events, err)
	}
	ids, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Search: "zebrafish", Limit: 10})
	if err != nil || total != 1 || len(ids) != 1 {
		t.Fatalf("search after one more log: %v %d %v", ids, total, err)
	}
	if _, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Search: "Invalid case", Limit: 10}); err != nil || total != 72 {
		t.Fatalf("search of the migrated logs: %d %v; want 72", total, err)
	}

	// A log's schedule link still follows it: deleted with it.
	var linked int64
	if err := db.r.QueryRowContext(ctx, `SELECT min(log_id) FROM command_log_schedules`).Scan(&linked); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `DELETE FROM command_logs WHERE id = ?`, linked); err != nil {
		t.Fatal(err)
	}
	if n := len(dumpRows(t, db.r.DB, "", fmt.Sprintf(`SELECT 1 FROM command_log_schedules WHERE log_id = %d`, linked))); n != 0 {
		t.Fatal("a deleted log's schedule link stayed")
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

// A column that is on the table when 0130 runs (one another migration added) is kept,
// before the outputs: the rewrite copies the columns the table has.
func TestLogStoreKeepsOtherColumns(t *testing.T) {
	ctx := context.Background()
	path, _ := oldLogFixture(t)
	old, err := open(ctx, path, openOptions{}, beforeLogStore)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.w.ExecContext(ctx, `ALTER TABLE command_logs ADD COLUMN zz_later TEXT NOT NULL DEFAULT 'none';
		UPDATE command_logs SET zz_later = 'kept ' || id WHERE id % 3 = 0`); err != nil {
		t.Fatal(err)
	}
	before := logSnapshot(t, old)
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := logColumnOrder(t, db)
	if n := len(cols); cols[n-4] != "zz_later" || cols[n-3] != "notes" || cols[n-1] != "parsed_output" {
		t.Fatalf("after 0130: %v; want the other column kept, before the outputs", cols)
	}
	if after := logSnapshot(t, db); !slices.Equal(after, before) {
		t.Fatal("the rewrite changed the logs or lost the other column's values")
	}
}

// A disk that fills while the logs are rewritten leaves the file as it was, and the
// start fails saying why; the next start, with room, migrates.
func TestLogStoreDiskFull(t *testing.T) {
	ctx := context.Background()
	path, pages := oldLogFixture(t)
	old, err := open(ctx, path, openOptions{}, beforeLogStore)
	if err != nil {
		t.Fatal(err)
	}
	before := logSnapshot(t, old)
	old.Close()
	_, err = open(ctx, path, openOptions{writerPragmas: []string{fmt.Sprintf("max_page_count(%d)", pages+20)}}, "")
	if err == nil || !strings.Contains(err.Error(), "disk is full") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("a full disk: %v; want an error saying so", err)
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if after := logSnapshot(t, db); !slices.Equal(after, before) {
		t.Fatal("the migration after a full disk changed the logs")
	}
}

// Two processes that start on the old file at once rewrite it once: the second waits
// for the first's transaction and finds the migration recorded.
func TestLogStoreTwoAtOnce(t *testing.T) {
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
