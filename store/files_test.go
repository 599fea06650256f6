package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Only the temp files of writers that are gone are removed: a write in progress, in
// this process or another, keeps its file.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	mine := ".a.csv." + strconv.Itoa(os.Getpid()) + "-1" + tempSuffix
	live := ".b.csv.1-2" + tempSuffix // pid 1 always runs
	dead := ".c.db.999999999-3" + tempSuffix
	journal := dead + "-journal"
	other := ".keep.tmp"
	for _, n := range []string{mine, live, dead, journal, other} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	RemoveStaleTemps(dir)
	for n, want := range map[string]bool{mine: true, live: true, dead: false, journal: false, other: true} {
		_, err := os.Stat(filepath.Join(dir, n))
		if got := err == nil; got != want {
			t.Errorf("%s: present %v, want %v", n, got, want)
		}
	}
}

// A failed fill leaves neither the final file nor a temp file; a good one leaves only
// the final file, 0600.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "out.csv")
	if err := WriteAtomic(final, func(tmp string) error { return errors.New("disk full") }); err == nil {
		t.Fatal("a failed fill succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
	if err := WriteAtomic(final, func(tmp string) error { return os.WriteFile(tmp, []byte("x\r\n"), 0) }); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	st, err := os.Stat(final)
	if len(entries) != 1 || err != nil || (st.Mode().Perm() != 0o600 && os.PathSeparator == '/') {
		t.Fatalf("after a good write: %v %v %v", entries, st, err)
	}
}
