package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentLogsStayInOrder checks that the logs of executions finishing at once,
// stamped by the store's clock, are written in created order: a list ordered by id
// and one ordered by created then agree.
func TestConcurrentLogsStayInOrder(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 40 {
				if _, err := db.CreateLog(ctx, Values{"command_name": "show version", "device_name": fmt.Sprintf("r%d", g),
					"username": "u", "success": i%3 > 0}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var out int
	if err := db.r.QueryRow(`SELECT count(*) FROM command_logs a JOIN command_logs b ON b.id > a.id AND b.created < a.created`).
		Scan(&out); err != nil || out != 0 {
		t.Fatalf("%d pairs of logs out of created order (%v)", out, err)
	}
}

// TestLogStampsSlack checks the stamps of logs the store's clock gives when the clock
// reads back: within stampSlack of the last stamp, a log takes that stamp again and the
// logs stay in created order; set back further, it takes the clock's reading.
func TestLogStampsSlack(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var now time.Time
	db.SetClock(func() time.Time { return now })
	add := func(at time.Time) string {
		t.Helper()
		now = at
		id, err := db.CreateLog(ctx, Values{"command_name": "show version", "device_name": "r1", "username": "u", "success": true})
		if err != nil {
			t.Fatal(err)
		}
		var created, updated, executed string
		if err := db.r.QueryRow(`SELECT created, last_updated, execution_time FROM command_logs WHERE id = ?`, id).
			Scan(&created, &updated, &executed); err != nil {
			t.Fatal(err)
		}
		if updated != created || executed != created {
			t.Errorf("created %s, last_updated %s, execution_time %s: want them equal", created, updated, executed)
		}
		return created
	}
	if got := add(t0); got != Stamp(t0) {
		t.Errorf("first log: %s, want %s", got, Stamp(t0))
	}
	if got := add(t0.Add(-500 * time.Millisecond)); got != Stamp(t0) {
		t.Errorf("half a second back: %s, want the last stamp %s", got, Stamp(t0))
	}
	if got := add(t0.Add(2 * time.Second)); got != Stamp(t0.Add(2*time.Second)) {
		t.Errorf("forward: %s, want %s", got, Stamp(t0.Add(2*time.Second)))
	}
	back := t0.Add(-time.Hour)
	if got := add(back); got != Stamp(back) {
		t.Errorf("an hour back: %s, want the clock's %s", got, Stamp(back))
	}
}
