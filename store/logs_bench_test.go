package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BenchmarkCreateLog is the cost of recording one execution, one at a time as an
// execute does, with the triggers that keep the counters and the search indexes, in a
// database that already holds 20,000 logs over 50 devices.
func BenchmarkCreateLog(b *testing.B) {
	ctx := context.Background()
	db, mk := benchLogDB(b)
	for b.Loop() {
		if _, err := db.CreateLog(ctx, mk()); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLogDB is a database holding 20,000 logs over 50 devices of one site, and a maker
// of the next log for it, safe to call from several goroutines.
func benchLogDB(b *testing.B) (*DB, func() Values) {
	b.Helper()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "fieldkit.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
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
	return db, mk
}

// BenchmarkRecentLogsRead is reading the window of recent logs (recentLogs) once: what
// a data version's walks pay on top of their own when it outlives them by no more than
// the read that would have served the pages after.
func BenchmarkRecentLogsRead(b *testing.B) {
	ctx := context.Background()
	db, _ := benchLogDB(b)
	for b.Loop() {
		w, err := readRecentLogs(ctx, db, 1)
		if err != nil {
			b.Fatal(err)
		}
		if len(w.ids) != recentLogsCap {
			b.Fatalf("%d logs read, want %d", len(w.ids), recentLogsCap)
		}
	}
}
