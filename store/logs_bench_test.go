package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BenchmarkCreateLog is the cost of recording one execution, one at a time as an
// execute does, with its counters and word index, in a database that already holds
// 20,000 logs over 50 devices; pages/log is the pages each log's commit writes (the
// write-ahead log's frames, measured over every 100 logs with no checkpoint between).
func BenchmarkCreateLog(b *testing.B) {
	ctx := context.Background()
	db, mk := benchLogDB(b)
	truncate := func() {
		if _, err := db.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			b.Fatal(err)
		}
		db.ckpt.mu.Lock()
		db.ckpt.pending = 0 // no checkpoint in the next 100 logs (checkpointEvery)
		db.ckpt.mu.Unlock()
	}
	var frames, measured, logs int64
	truncate()
	var cpu float64
	for b.Loop() {
		start := processCPU()
		if _, err := db.CreateLog(ctx, mk()); err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - start
		if logs++; logs%100 == 0 {
			b.StopTimer()
			fi, err := os.Stat(db.Path() + "-wal")
			if err != nil {
				b.Fatal(err)
			}
			frames, measured = frames+(fi.Size()-32)/(4096+24), measured+100
			truncate()
			b.StartTimer()
		}
	}
	if measured > 0 {
		b.ReportMetric(float64(frames)/float64(measured), "pages/log")
	}
	b.ReportMetric(cpu*1000/float64(logs), "cpu-ms/log")
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
