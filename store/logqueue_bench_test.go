//go:build unix

package store

import (
	"context"
	"fmt"
	"path/filepath"
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
			db, err := Open(ctx, filepath.Join(b.TempDir(), "fieldkit.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			site, err := db.Create(ctx, Sites, Values{"name": "S", "slug": "s"}, All)
			if err != nil {
				b.Fatal(err)
			}
			var devices []int64
			for i := range 50 {
				id, err := db.Create(ctx, Devices, Values{"name": fmt.Sprintf("dev-%03d", i), "site": site}, All)
				if err != nil {
					b.Fatal(err)
				}
				devices = append(devices, id)
			}
			start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			var mu sync.Mutex
			n := 0
			mk := func() Values {
				mu.Lock()
				defer mu.Unlock()
				n++
				d := n % len(devices)
				return Values{"command_name": fmt.Sprintf("command %03d", n%200), "device": devices[d],
					"device_name": fmt.Sprintf("dev-%03d", d), "username": "bench", "success": n%7 != 0,
					"output":  fmt.Sprintf("Interface GigabitEthernet0/%d is up, line protocol is up %d", d, n),
					"created": start.Add(time.Duration(n) * time.Second)}
			}
			seed := make([]Values, 20000)
			for i := range seed {
				seed[i] = mk()
			}
			if err := db.InsertLogs(ctx, seed); err != nil {
				b.Fatal(err)
			}
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
