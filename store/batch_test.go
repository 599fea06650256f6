package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestBatch checks that writes made in a Batch commit together or not at all, that a
// failing write undoes only itself, and that Generation moves once per commit.
func TestBatch(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	site := func(name string) Values { return Values{"name": name, "slug": name} }
	count := func() int {
		var n int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM sites`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	stop := errors.New("stop")
	tests := []struct {
		name    string
		fn      func(ctx context.Context) error
		wantErr error
		sites   int // rows after
		genStep uint64
	}{
		{"commit", func(ctx context.Context) error {
			for _, n := range []string{"a", "b"} {
				if _, err := db.Create(ctx, Sites, site(n), All); err != nil {
					return err
				}
			}
			return nil
		}, nil, 2, 1},
		{"rollback", func(ctx context.Context) error {
			if _, err := db.Create(ctx, Sites, site("c"), All); err != nil {
				return err
			}
			return stop
		}, stop, 2, 0},
		{"a failed write undoes itself only", func(ctx context.Context) error {
			if _, err := db.Create(ctx, Sites, site("a"), All); !errors.Is(err, ErrConflict) {
				return err
			}
			// a write the scope refuses after its insert: the insert must be undone
			if _, err := db.Create(ctx, Sites, site("x"), Scope{}); !errors.Is(err, ErrForbidden) {
				return err
			}
			_, err := db.Create(ctx, Sites, site("d"), All)
			return err
		}, nil, 3, 1},
		{"direct statements join the batch", func(ctx context.Context) error {
			done := make(chan error, 1)
			go func() { _, err := db.execer(ctx).ExecContext(ctx, `DELETE FROM sites WHERE slug = 'd'`); done <- err }()
			select {
			case err := <-done:
				if err != nil {
					return err
				}
			case <-time.After(5 * time.Second):
				return errors.New("execer waited for the writer the batch holds")
			}
			return stop
		}, stop, 3, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gen := db.Generation()
			if err := db.Batch(ctx, tc.fn); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Batch: %v, want %v", err, tc.wantErr)
			}
			if n := count(); n != tc.sites {
				t.Errorf("sites = %d, want %d", n, tc.sites)
			}
			if step := db.Generation() - gen; step != tc.genStep {
				t.Errorf("generation moved by %d, want %d", step, tc.genStep)
			}
		})
	}
}
