package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/store/pgtest"
)

// Two hub processes on one PostgreSQL match events and send webhooks at once: each
// event makes its deliveries once (Dispatched refuses the events the other took), and
// each delivery's try is one process's (ClaimDelivery).
func TestPostgresEventsReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	a, b := openPG(t, dsn), openPG(t, dsn)
	var hooks []int64
	for i := range 3 {
		id, err := a.Create(ctx, Webhooks, Values{"name": fmt.Sprintf("hook %d", i), "payload_url": "http://127.0.0.1:1/"}, All)
		if err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, id)
	}
	const events = 30
	for i := range events {
		if err := a.QueueEvent(ctx, Event{ObjectType: TypeCommandLog, ObjectID: int64(i + 1), EventType: "object_created",
			At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// Matching: each worker takes the oldest events and makes one delivery of each.
	var mu sync.Mutex
	var wg sync.WaitGroup
	taken := 0
	for _, db := range []*DB{a, b, a, b} {
		wg.Go(func() {
			for {
				evs, err := db.Outbox(ctx, 4)
				if err != nil || len(evs) == 0 {
					return
				}
				var ds []NewDelivery
				var done []int64
				for _, e := range evs {
					ds = append(ds, NewDelivery{WebhookID: hooks[e.ObjectID%3], ObjectType: e.ObjectType, ObjectID: e.ObjectID,
						EventType: e.EventType, State: "firing", Context: json.RawMessage(`{}`)})
					done = append(done, e.ID)
				}
				err = db.Dispatched(ctx, ds, map[[2]string]bool{{"rule:1", fmt.Sprint("log:", evs[0].ObjectID)}: true}, done)
				if errors.Is(err, ErrEventsTaken) {
					mu.Lock()
					taken++
					mu.Unlock()
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	made := map[int64]int{}
	rows, err := a.Reader().QueryContext(ctx, `SELECT object_id FROM webhook_deliveries`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		made[id]++
	}
	rows.Close()
	if len(made) != events {
		t.Fatalf("deliveries for %d events, want %d", len(made), events)
	}
	for id, n := range made {
		if n != 1 {
			t.Errorf("event of log %d made %d deliveries", id, n)
		}
	}
	t.Logf("%d passes found their events taken by the other process", taken)

	// Sending: each worker claims the due heads and records them delivered.
	tried := map[int64]int{}
	for _, db := range []*DB{a, b, a, b} {
		wg.Go(func() {
			for {
				ds, err := db.DueDeliveries(ctx)
				if err != nil || len(ds) == 0 {
					return
				}
				for _, d := range ds {
					ok, err := db.ClaimDelivery(ctx, d, time.Now(), time.Now().Add(time.Minute))
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						continue
					}
					mu.Lock()
					tried[d.ID]++
					mu.Unlock()
					if err := db.RecordAttempt(ctx, d.ID, Attempt{Status: "delivered", HTTPStatus: 200}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if len(tried) != events {
		t.Fatalf("%d deliveries tried, want %d", len(tried), events)
	}
	for id, n := range tried {
		if n != 1 {
			t.Errorf("delivery %d tried %d times", id, n)
		}
	}
}

// BenchmarkLogEventTrigger: what the command logs' event trigger (pgschema 0008, one
// per statement, no rule subscribed) adds to an insert of 1,000 logs of 1 KB, as
// PostgreSQL's EXPLAIN ANALYZE times it, the trigger on and off alternating, each
// insert rolled back: the medians of on-ms and off-ms.
func BenchmarkLogEventTrigger(b *testing.B) {
	db, err := OpenPostgres(context.Background(), pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	out := strings.Repeat("GigabitEthernet0/1 is up, line protocol is up\n", 22)
	times := map[bool][]float64{}
	for i := range 2 * b.N {
		on := i%2 == 0
		ms, err := insertTimed(ctx, db, on, out)
		if err != nil {
			b.Fatal(err)
		}
		times[on] = append(times[on], ms)
	}
	for on, unit := range map[bool]string{true: "on-ms", false: "off-ms"} {
		slices.Sort(times[on])
		b.ReportMetric(times[on][len(times[on])/2], unit)
	}
}

// insertTimed inserts 1,000 logs in one statement, the event trigger on or off, and
// rolls back: the statement's execution time (ms) as PostgreSQL measured it.
func insertTimed(ctx context.Context, db *DB, on bool, out string) (float64, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if !on {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE command_logs DISABLE TRIGGER command_logs_event_ai`); err != nil {
			return 0, err
		}
	}
	rows, err := tx.QueryContext(ctx, `EXPLAIN (ANALYZE) INSERT INTO command_logs (command_name, device_name, username, success,
		execution_time, created, last_updated, output) SELECT 'show version', 'r1', 'alice', 1, '2030-01-02T03:04:05.000006Z',
		'2030-01-02T03:04:05.000006Z', '2030-01-02T03:04:05.000006Z', ? || g FROM generate_series(1, 1000) g`, out)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		var ms float64
		if err := rows.Scan(&line); err != nil {
			return 0, err
		}
		if n, _ := fmt.Sscanf(line, "Execution Time: %f ms", &ms); n == 1 {
			return ms, nil
		}
	}
	return 0, errors.Join(rows.Err(), errors.New("no execution time in the plan"))
}
