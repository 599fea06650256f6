package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"fieldkit/store"
)

// BenchmarkImport1000Devices imports a CSV of 1,000 devices (site and platform by name,
// a management address and an SSH port each: every device also gets its interface and
// address) into a fresh database, in one transaction:
//
//	go test ./handlers -run '^$' -bench Import1000Devices -benchtime 5x
func BenchmarkImport1000Devices(b *testing.B) {
	var csv strings.Builder
	csv.WriteString("name,site,platform,status,mgmt_ip,ssh_port,description\n")
	for i := range 1000 {
		fmt.Fprintf(&csv, "dev-%04d,Paris 1,cisco_ios,active,10.%d.%d.1/24,%d,imported\n", i, i/250, i%250, 2200+i%100)
	}
	data := []byte(csv.String())
	ctx := context.Background()
	admin := store.Principal{ID: 1, Username: "bench", IsSuperuser: true}
	for b.Loop() {
		b.StopTimer()
		db, err := store.Open(ctx, filepath.Join(b.TempDir(), "fieldkit.db"))
		if err != nil {
			b.Fatal(err)
		}
		a := New(Options{DB: db, Logger: slog.New(slog.DiscardHandler), Version: "bench"})
		if _, err := db.Create(ctx, store.Sites, store.Values{"name": "Paris 1", "slug": "paris-1"}, store.All); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Create(ctx, store.Platforms, store.Values{"name": "Cisco IOS", "slug": "cisco_ios"}, store.All); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := a.Import(ctx, admin, ImportInput{Name: "devices.csv", Data: data})
		b.StopTimer()
		if err != nil || rep.Created != 1000 {
			b.Fatalf("import: %v %+v", err, rep)
		}
		db.Close()
		b.StartTimer()
	}
}
