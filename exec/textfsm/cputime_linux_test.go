package textfsm

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling OS thread has used, for a
// goroutine locked to its thread. Unlike wall time it does not grow while
// other processes hold the cores.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
