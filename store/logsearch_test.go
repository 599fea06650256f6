package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// A database upgraded with logs in it has them indexed by the migration: ?q= finds
// the logs written before the search existed.
func TestLogSearchIndexesExistingLogs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fieldkit.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := db.InsertLogs(ctx, []Values{
		{"command_name": "show version", "device_name": "edge-router-7", "username": "alice", "success": true,
			"output": "Software Version 17.9.4a", "created": at},
		{"command_name": "show clock", "device_name": "core-1", "username": "bob", "success": false,
			"error_message": "authentication failed", "created": at},
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Take the database back to before the migration: no indexes, no new columns.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TRIGGER command_logs_fts_ai`, `DROP TRIGGER command_logs_fts_ad`, `DROP TRIGGER command_logs_fts_au`,
		`DROP TABLE command_logs_text`, `DROP INDEX command_logs_source`,
		`ALTER TABLE command_logs DROP COLUMN sent_command`, `ALTER TABLE command_logs DROP COLUMN variables`,
		`ALTER TABLE command_logs DROP COLUMN credential_set_id`, `ALTER TABLE command_logs DROP COLUMN credential_set_name`,
		`ALTER TABLE command_logs DROP COLUMN source`, `ALTER TABLE command_logs DROP COLUMN client_address`,
		`DELETE FROM schema_migrations WHERE version IN ('0016_log_audit', '0058_log_insert')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The logs written before read as such: nothing sent recorded, no variables, set or
	// source, no address; the rest of each log is as it was.
	ids, _, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Limit: 10})
	if err != nil || len(ids) != 2 {
		t.Fatalf("logs after the upgrade: %v %v", ids, err)
	}
	rows, err := db.Rows(ctx, CommandLogs, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r["sent_command"] != "" || r["variables"] != nil || r["credential_set"] != nil || r["source"] != nil ||
			r["client_address"] != "" || (r["output"] == "" && r["error_message"] == "") {
			t.Errorf("a log written before the upgrade reads %v", r)
		}
	}
	for q, want := range map[string]int{"17.9.4a": 1, "router-7": 1, "authentication": 1, "ALICE": 1, "version": 1, "nothing": 0} {
		ids, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: []Expr{CommandLogs.Search(q)}, Limit: 10})
		if err != nil || total != want || len(ids) != want {
			t.Errorf("q=%q: %v %d %v, want %d", q, ids, total, err, want)
		}
	}
}
