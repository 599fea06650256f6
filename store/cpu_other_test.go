//go:build !unix

package store

// processCPU is 0 where the process's CPU time is not read: the benchmarks report no CPU.
func processCPU() float64 { return 0 }
