//go:build !windows

package main

import (
	"os"
	"strconv"
	"syscall"
)

// fileOwner is a file's owning user and group.
func fileOwner(st os.FileInfo) (uid, gid int, ok bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(s.Uid), int(s.Gid), true
}

// isJournal tells whether f is the journal stream systemd connected: JOURNAL_STREAM
// holds its "device:inode", and a child that redirected stderr elsewhere keeps the
// variable, so both must match.
func isJournal(f *os.File, stream string) bool {
	if stream == "" {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && stream == strconv.FormatUint(uint64(s.Dev), 10)+":"+strconv.FormatUint(s.Ino, 10)
}
