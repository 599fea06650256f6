package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCreateLog is the cost of recording one execution, one at a time as an
// execute does, with the triggers that keep the counters and the search indexes, in a
// database that already holds 20,000 logs over 50 devices.
func BenchmarkCreateLog(b *testing.B) {
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
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	mk := func() Values {
		n++
		d := n % len(devices)
		return Values{"command_name": fmt.Sprintf("command %03d", n%200), "device": devices[d], "device_name": fmt.Sprintf("dev-%03d", d),
			"username": "bench", "success": n%7 != 0, "output": fmt.Sprintf("Interface GigabitEthernet0/1 is up %d", n),
			"created": at.Add(time.Duration(n) * time.Second)}
	}
	var seed []Values
	for range 20000 {
		seed = append(seed, mk())
	}
	if err := db.InsertLogs(ctx, seed); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.CreateLog(ctx, mk()); err != nil {
			b.Fatal(err)
		}
	}
}
