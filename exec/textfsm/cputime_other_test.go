//go:build !linux

package textfsm

import "time"

var clockStart = time.Now()

// threadCPU falls back to wall time where a thread's CPU time is not at
// hand: under load it overstates a match's cost.
func threadCPU() time.Duration { return time.Since(clockStart) }
