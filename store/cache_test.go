package store

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"
)

// TestEveryTableBumpsTheGeneration: a table a check might read and whose writes did not
// change the generation would let the check cache answer from before the write. Every
// table but the uncounted ones must have its insert, update and delete triggers.
func TestEveryTableBumpsTheGeneration(t *testing.T) {
	db := testDB(t)
	rows, err := db.r.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(ddl, "CREATE VIRTUAL TABLE") {
			tables = append(tables, name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	counted := 0
	for _, table := range tables {
		if uncounted(table) {
			continue
		}
		counted++
		for _, event := range []string{"INSERT", "UPDATE", "DELETE"} {
			var n int
			err := db.r.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?
				AND sql LIKE '%AFTER ' || ? || ' ON%' AND sql LIKE '%UPDATE generation SET n = n + 1%'`, table, event).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Errorf("table %s: no AFTER %s trigger bumps the generation; add it in the table's migration", table, event)
			}
		}
	}
	if counted < 30 {
		t.Fatalf("only %d tables counted: the check is not looking at the schema", counted)
	}
}

// TestGenerationMovesWithWritesNotStamps: a committed change moves the generation, from
// this DB or another opening of the file; the last_used stamps written by requests
// themselves do not, or every minute's stamp would empty the cache.
func TestGenerationMovesWithWritesNotStamps(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	other, err := Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	uid, err := db.CreateUser(ctx, UserInput{Username: ptr("alice")}, All)
	if err != nil {
		t.Fatal(err)
	}
	tokenID, key, err := db.CreateToken(ctx, TokenInput{UserID: uid, WriteEnabled: true}, All)
	if err != nil {
		t.Fatal(err)
	}
	gen := func() int64 {
		t.Helper()
		c, err := db.Fresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		g, ok := db.Snapshot(c)
		if !ok {
			t.Fatal("a fresh context carries no generation")
		}
		return g
	}
	g0 := gen()
	c, _ := db.Fresh(ctx)
	if _, err := db.Authenticate(c, key); err != nil { // writes last_used
		t.Fatal(err)
	}
	var lastUsed sql.NullString
	db.r.QueryRow(`SELECT last_used FROM tokens WHERE id = ?`, tokenID).Scan(&lastUsed)
	if !lastUsed.Valid {
		t.Fatal("last_used not written")
	}
	if g := gen(); g != g0 {
		t.Fatalf("a last_used stamp moved the generation %d -> %d", g0, g)
	}
	err = other.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE tokens SET description = 'changed elsewhere' WHERE id = ?`, tokenID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	g1 := gen()
	if g1 == g0 {
		t.Fatal("another opening's write left the generation as it was")
	}
	// A context read before this DB's own write is no longer used for the cache.
	if _, err := db.CreateUser(ctx, UserInput{Username: ptr("bob")}, All); err != nil {
		t.Fatal(err)
	}
	if _, ok := db.Snapshot(c); ok {
		t.Fatal("a context from before this process's write may still use the cache")
	}
	if _, ok := db.Snapshot(ctx); ok {
		t.Fatal("a context that never read the generation may use the cache")
	}
}

// TestStampsAtMostOncePerMinute: with the token cached, last_used is still written
// once a minute, not on every request and not never.
func TestStampsAtMostOncePerMinute(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	db.SetClock(func() time.Time { return now })
	uid, _ := db.CreateUser(ctx, UserInput{Username: ptr("alice")}, All)
	tokenID, key, err := db.CreateToken(ctx, TokenInput{UserID: uid, WriteEnabled: true}, All)
	if err != nil {
		t.Fatal(err)
	}
	stamp := func() string {
		var s sql.NullString
		db.r.QueryRow(`SELECT last_used FROM tokens WHERE id = ?`, tokenID).Scan(&s)
		return s.String
	}
	for i, step := range []time.Duration{0, 30 * time.Second, 40 * time.Second, 10 * time.Second} {
		now = now.Add(step)
		c, err := db.Fresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Authenticate(c, key); err != nil {
			t.Fatal(err)
		}
		want := map[int]string{0: "12:00:00", 1: "12:00:00", 2: "12:01:10", 3: "12:01:10"}[i]
		if got := stamp(); !strings.Contains(got, want) {
			t.Fatalf("request %d: last_used %q, want %s", i, got, want)
		}
	}
}
