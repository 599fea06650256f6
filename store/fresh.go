package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
)

// fresh keeps the content of a newly migrated database for a process that creates many
// of them: the tests, each in a file of its own. Every migration makes SQLite parse the
// whole schema again, so migrating a new file costs a fifth of a second of CPU, and five
// seconds or more under the race detector. The second new file a process migrates in
// full is copied (VACUUM INTO) and held; every new file after it is written from that
// copy and finds each migration recorded as applied. A server creates one file at most,
// and so never holds a copy.
var fresh struct {
	mu      sync.Mutex
	created int // new files migrated in full
	image   []byte
}

// freshImageAfter is how many new files a process migrates in full before it keeps a
// copy of the last.
const freshImageAfter = 2

// fileExists reports whether path names a file (or anything else).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// writeFreshImage writes the held copy of a new database into path, a file open has
// just created empty; false when no copy is held. A write that fails leaves the file
// empty again.
func writeFreshImage(path string) (bool, error) {
	fresh.mu.Lock()
	image := fresh.image
	fresh.mu.Unlock()
	if image == nil {
		return false, nil
	}
	if err := os.WriteFile(path, image, 0o600); err != nil {
		_ = os.Truncate(path, 0)
		return false, err
	}
	return true, nil
}

// keepFreshImage counts a new file db migrated in full, and copies it to be held once
// it is the freshImageAfter-th. A copy that fails is not held: the next new file is
// migrated in full and tried again.
func (db *DB) keepFreshImage(ctx context.Context) {
	fresh.mu.Lock()
	defer fresh.mu.Unlock()
	if fresh.created++; fresh.created < freshImageAfter || fresh.image != nil {
		return
	}
	tmp := db.path + ".fresh"
	defer os.Remove(tmp)
	if _, err := db.w.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return
	}
	if image, err := os.ReadFile(tmp); err == nil {
		fresh.image = image
	}
}
