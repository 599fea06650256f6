//go:build unix

package hub

import "syscall"

// processCPU is the CPU time this process has used so far (user and system), in
// seconds: on a shared machine a better measure of a request's cost than wall time.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
