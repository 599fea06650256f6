//go:build !windows

package main

import (
	"os"
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
