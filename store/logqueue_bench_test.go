//go:build unix

package store

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkLogInsert is the cost of recording executions as the execute path does, in
// a database that already holds 20,000 logs over 50 devices: "one" is one CreateLog at
// a time (a kept session's execute), "fifty" is fifty at once from fifty goroutines (an
// op is the fifty), committed together by the log queue. cpu-ms/log is the process's
// CPU (user and system) per log.
func BenchmarkLogInsert(b *testing.B) {
	for _, c := range []struct {
		name string
		at   int
	}{{"one", 1}, {"fifty", 50}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			db, mk := benchLogDB(b)
			cpu := rusage()
			for b.Loop() {
				var wg sync.WaitGroup
				for range c.at {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := db.CreateLog(ctx, mk()); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(rusage()-cpu)/float64(time.Millisecond)/float64(b.N*c.at), "cpu-ms/log")
		})
	}
}

// rusage is the CPU time this process has used so far, user and system.
func rusage() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
