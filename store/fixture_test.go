package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// fixtureImage is a database that several tests start from, built once by the first
// of them and held as its file's bytes: each test writes them to a file of its own and
// opens that, as a server restarted on it would. Building thousands of logs takes
// seconds, and tens of seconds under the race detector; copying them takes a few
// milliseconds.
type fixtureImage struct {
	once   sync.Once
	file   []byte
	wheres []Expr
}

// open is a database of the fixture's content at path (a new file in t's temporary
// directory when ""), closed when t ends, and the conditions build returned. build
// fills db, in the first test to ask, and returns conditions of the fixture's own that
// the tests compare under.
func (f *fixtureImage) open(t *testing.T, path string, build func(t *testing.T, db *DB) []Expr) (*DB, []Expr) {
	t.Helper()
	ctx := context.Background()
	f.once.Do(func() {
		path := filepath.Join(t.TempDir(), "fixture.db")
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		wheres := build(t, db)
		// Everything in the file itself: no write-ahead log to copy beside it.
		if _, err := db.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f.file, f.wheres = file, wheres
	})
	if f.file == nil {
		t.Fatal("the fixture's build failed in an earlier test")
	}
	if path == "" {
		path = filepath.Join(t.TempDir(), "fieldkit.db")
	}
	if err := os.WriteFile(path, f.file, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// Each test its own slice: some append to it.
	return db, slices.Clone(f.wheres)
}
