//go:build !windows

package store

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with the pid is running (signal 0 checks
// without sending; EPERM means it runs as another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
