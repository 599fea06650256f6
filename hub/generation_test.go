package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"fieldkit/store"
)

// BenchmarkIngestGeneration: does every push to a hub on PostgreSQL wait for the one
// generation row? The row (pgschema 0005) moves with every statement writing a table the
// store's cache reads, through a statement trigger, and its row lock is held until the
// transaction commits: two pushes that both move it commit one after the other. Two
// sites push at once, batches of 1,000 records: "logs" of their known devices alone, or
// "inventory", 20 device changes besides 980 logs; each with the generation's triggers
// ("bump") and without them ("no-bump", disabled for the run). gen-moves/batch says how
// often a batch moved the row.
//
//	go test ./hub -run '^$' -bench IngestGeneration -benchtime 20x -count 3
func BenchmarkIngestGeneration(b *testing.B) {
	for _, kind := range []string{"logs", "inventory"} {
		for _, mode := range []string{"bump", "no-bump"} {
			b.Run(kind+"/"+mode, func(b *testing.B) { benchmarkGeneration(b, kind, mode == "bump") })
		}
	}
}

func benchmarkGeneration(b *testing.B, kind string, bump bool) {
	const sites, devices = 2, 20
	r := newPGRig(b)
	ctx := context.Background()
	if !bump {
		triggers, err := r.db.Reader().QueryContext(ctx, `SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			JOIN pg_proc p ON p.oid = t.tgfoid WHERE p.proname = 'generation_bump' AND c.relnamespace = current_schema()::regnamespace`)
		if err != nil {
			b.Fatal(err)
		}
		var off []string
		for triggers.Next() {
			var table, name string
			if err := triggers.Scan(&table, &name); err != nil {
				b.Fatal(err)
			}
			off = append(off, `ALTER TABLE `+table+` DISABLE TRIGGER `+name)
		}
		triggers.Close()
		for _, s := range off {
			if _, err := r.db.Reader().ExecContext(ctx, s); err != nil {
				b.Fatal(err)
			}
		}
	}
	device := func(id, n int) Record {
		return Record{Kind: store.KindDevice, Op: store.OpUpsert, ID: int64(id), Body: body(fmt.Sprintf(`{"id": %d, "name": "r%d",
			"platform": {"id": 3, "name": "Cisco IOS", "slug": "cisco_ios"}, "status": {"value": "active"},
			"description": "change %d"}`, id, id, n))}
	}
	tokens := make([]string, sites)
	seq := make([]int64, sites)
	for s := range sites {
		var err error
		if _, tokens[s], err = r.db.CreateHubSite(ctx, fmt.Sprint("gen-", s), "", "", store.All); err != nil {
			b.Fatal(err)
		}
		recs := []Record{platformIOS, commandVer}
		for d := range devices {
			recs = append(recs, device(d+1, 0))
		}
		seq[s] = pushAs(b, r, tokens[s], s, 1, recs)
	}
	generation := func() int64 {
		var n int64
		if err := r.db.Reader().QueryRowContext(ctx, `SELECT n FROM generation WHERE id = 1`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	before := generation()
	var took time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		batches := make([][]Record, sites)
		for s := range sites {
			var recs []Record
			if kind == "inventory" {
				for d := range devices {
					recs = append(recs, device(d+1, i+1))
				}
			}
			for len(recs) < MaxRecords {
				id := seq[s] + int64(len(recs))
				recs = append(recs, Record{Kind: store.KindLog, Op: store.OpUpsert, ID: id, UID: fmt.Sprint("u", id),
					Body: body(fmt.Sprintf(`{"id": %d, "command": {"id": 8, "name": "Version"}, "device": {"id": %d, "name": "r%d"},
					"username": "alice", "success": true, "output": "IOS 15", "created": "2030-01-02T03:04:05.000006Z"}`,
						id, int(id)%devices+1, int(id)%devices+1))})
			}
			batches[s] = recs
		}
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for s := range sites {
			wg.Go(func() { seq[s] = pushAs(b, r, tokens[s], s, seq[s], batches[s]) })
		}
		wg.Wait()
		took += time.Since(start)
	}
	b.ReportMetric(float64(b.N*sites)/took.Seconds(), "batches/s")
	b.ReportMetric(float64(generation()-before)/float64(b.N*sites), "gen-moves/batch")
}

// pushAs pushes recs as site s from sequence first and returns the next sequence.
func pushAs(b *testing.B, r *rig, token string, s int, first int64, recs []Record) int64 {
	for i := range recs {
		recs[i].Seq = first + int64(i)
	}
	raw, _ := json.Marshal(Batch{Protocol: Protocol, Instance: fmt.Sprint("gen", s), Epoch: "e", EpochStart: 1,
		SentAt: time.Now(), Records: recs})
	if st, ans := r.post(token, raw); st != 200 || ans.Applied != len(recs) {
		b.Errorf("site %d: %d %+v", s, st, ans)
	}
	return first + int64(len(recs))
}
