package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A new file written from the held copy (fresh.go) is the database a full migration
// makes: the same schema, the same rows in every table, the same header values, mode
// 0600 and the write-ahead log on. A file opened up to a migration (upTo) is never
// written from the copy, nor one that already exists.
func TestFreshImageIsAFullMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Enough new files for the copy to be held, whatever other tests made before.
	for i := range freshImageAfter {
		fresh.mu.Lock()
		held := fresh.image != nil
		fresh.mu.Unlock()
		if held {
			break
		}
		db, err := Open(ctx, filepath.Join(dir, fmt.Sprintf("warm%d.db", i)))
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	fresh.mu.Lock()
	held := fresh.image
	fresh.mu.Unlock()
	if held == nil {
		t.Fatalf("no copy held after %d new files", freshImageAfter)
	}

	copied := filepath.Join(dir, "copied.db")
	fromCopy, err := Open(ctx, copied)
	if err != nil {
		t.Fatal(err)
	}
	defer fromCopy.Close()
	// The same without the copy: migrated in full.
	fresh.mu.Lock()
	fresh.image = nil
	fresh.created = -1000 // no copy is taken while this one migrates
	fresh.mu.Unlock()
	full, err := Open(ctx, filepath.Join(dir, "full.db"))
	fresh.mu.Lock()
	fresh.image, fresh.created = held, freshImageAfter
	fresh.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()

	a, b := dumpDB(t, full), dumpDB(t, fromCopy)
	if len(a) < 50 {
		t.Fatalf("the full migration's dump holds %d lines: %q", len(a), a)
	}
	if d := firstDiff(a, b); d != "" {
		t.Fatalf("the copied file differs from a full migration: %s", d)
	}
	if runtime.GOOS != "windows" {
		if st, err := os.Stat(copied); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("copied file's mode: %v, %v", st.Mode(), err)
		}
	}
	var mode string
	if err := fromCopy.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("copied file's journal mode %q, %v", mode, err)
	}
	// It works as a database: a write and its read.
	if _, err := fromCopy.CreateUser(ctx, UserInput{Username: ptr("alice")}, All); err != nil {
		t.Fatal(err)
	}

	// Up to a migration: migrated step by step, as the upgrade tests need.
	old, err := open(ctx, filepath.Join(dir, "old.db"), openOptions{}, "0062_log_moves")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	var newest string
	if err := old.w.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&newest); err != nil || newest != "0062_log_moves" {
		t.Fatalf("a file opened up to 0062 holds migrations up to %q, %v", newest, err)
	}
	// An existing file is opened as it is: here, an empty one is migrated in full.
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before := fresh.created
	e, err := Open(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if d := firstDiff(a, dumpDB(t, e)); d != "" || fresh.created != before {
		t.Fatalf("an empty file: %s; new files counted %d, then %d", d, before, fresh.created)
	}
}

// dumpDB is db's schema, header values and every table's rows as lines of text, sorted;
// schema_migrations without the time each was applied.
func dumpDB(t *testing.T, db *DB) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	rows, err := db.w.QueryContext(ctx, `SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var typ, name, tbl, text string
		if err := rows.Scan(&typ, &name, &tbl, &text); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join([]string{"schema", typ, name, tbl, text}, "|"))
		if typ == "table" && !strings.HasPrefix(strings.ToUpper(text), "CREATE VIRTUAL") {
			tables = append(tables, name)
		}
	}
	rows.Close()
	for _, p := range []string{"user_version", "application_id", "page_size", "auto_vacuum", "encoding"} {
		var v string
		if err := db.w.QueryRowContext(ctx, `PRAGMA `+p).Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, "pragma|"+p+"|"+v)
	}
	for _, name := range tables {
		query := `SELECT * FROM "` + name + `"`
		if name == "schema_migrations" {
			query = `SELECT version FROM schema_migrations`
		}
		out = append(out, dumpRows(t, db.w.DB, "row "+name, query)...)
	}
	slices.Sort(out)
	return out
}

// dumpRows is each row of query as a line of text, after prefix.
func dumpRows(t *testing.T, q *sql.DB, prefix, query string) []string {
	t.Helper()
	rows, err := q.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s: %q", prefix, vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// firstDiff is the first line that one of a and b holds and the other does not, or "".
func firstDiff(a, b []string) string {
	for i := 0; i < max(len(a), len(b)); i++ {
		switch {
		case i >= len(a):
			return "only in the second: " + b[i]
		case i >= len(b):
			return "only in the first: " + a[i]
		case a[i] != b[i]:
			return fmt.Sprintf("%q against %q", a[i], b[i])
		}
	}
	return ""
}
