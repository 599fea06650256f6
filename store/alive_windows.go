package store

import "os"

// processAlive reports whether a process with the pid is running: Windows finds a
// process only while it exists.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
