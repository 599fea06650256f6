package store

import (
	"context"
	"fmt"
	"testing"
)

// Kept statements answer as unprepared ones do, past the cache's bound too, and a text
// of several statements still runs all of them.
func TestStatementCache(t *testing.T) {
	db := testDB(t)
	ctx := context.Background()
	for i := range stmtCacheMax + 20 {
		for range 2 {
			var got int
			if err := db.r.QueryRowContext(ctx, fmt.Sprintf("SELECT %d + ?", i), 1).Scan(&got); err != nil || got != i+1 {
				t.Fatalf("query %d: %d, %v", i, got, err)
			}
		}
	}
	if n := len(db.r.stmts); n != stmtCacheMax {
		t.Errorf("%d statements kept, want %d", n, stmtCacheMax)
	}
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE cache_a (x); CREATE TABLE cache_b (x);`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name IN ('cache_a', 'cache_b')`).Scan(&n); err != nil || n != 2 {
		t.Errorf("tables made by one text of two statements: %d, %v", n, err)
	}
}
