package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLogCountersFollowWrites writes and deletes logs every way the store does (one at
// a time, several at once through the queue, in bulk, inside a batch, a retention prune,
// a device, a user and a command deleted) and after each wants the counters to hold
// what counting the logs afresh gives.
func TestLogCountersFollowWrites(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	id := mustID[int64](t)
	devices := siteDevices(t, db, 4)
	alice := id(db.CreateUser(ctx, UserInput{Username: ptr("alice")}, All))
	bob := id(db.CreateUser(ctx, UserInput{Username: ptr("bob")}, All))
	show := id(db.Create(ctx, Commands, Values{"name": "show version", "command": "show version"}, All))
	conf := id(db.Create(ctx, Commands, Values{"name": "set hostname", "command": "hostname x", "command_type": "config"}, All))
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	mk := func() Values {
		n++
		user, name := alice, "alice"
		if n%3 == 0 {
			user, name = bob, "bob"
		}
		cmd, cmdName := show, "show version"
		if n%4 == 0 {
			cmd, cmdName = conf, "set hostname"
		}
		v := Values{"command": cmd, "command_name": cmdName, "device": devices[n%4], "device_name": fmt.Sprintf("d%d", n%4),
			"user": user, "username": name, "success": n%5 != 0, "created": base.Add(time.Duration(n) * 23 * time.Minute)}
		switch {
		case n%10 == 0:
			v["error_message"], v["failure"] = "Cancelled by alice", map[string]any{"reason": "cancelled"}
		case n%5 == 0:
			v["error_message"] = fmt.Sprintf("%% Invalid input %d %s", n%3, strings.Repeat("ü", 110))
		}
		return v
	}
	check := func(step string) {
		t.Helper()
		if got, want := counters(t, db), recount(t, db); !slices.Equal(got, want) {
			t.Fatalf("%s: counters\n%s\nwant\n%s", step, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	for range 30 {
		if _, err := db.CreateLog(ctx, mk()); err != nil {
			t.Fatal(err)
		}
	}
	check("one at a time")
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range 40 {
		mu.Lock()
		v := mk()
		mu.Unlock()
		wg.Go(func() {
			if _, err := db.CreateLog(ctx, v); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	check("at once")
	var bulk []Values
	for range 200 {
		bulk = append(bulk, mk())
	}
	if err := db.InsertLogs(ctx, bulk); err != nil {
		t.Fatal(err)
	}
	check("in bulk")
	if err := db.Batch(ctx, func(ctx context.Context) error {
		_, err := db.CreateLog(ctx, mk())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	check("in a batch")
	defer func(n int) { pruneBatch = n }(pruneBatch)
	pruneBatch = 17
	if pruned, err := db.PruneLogs(ctx, base.Add(40*time.Hour)); err != nil || pruned < 100 {
		t.Fatalf("pruned %d, %v", pruned, err)
	}
	check("after a prune")
	for _, del := range []struct {
		m  *Model
		id int64
	}{{Devices, devices[1]}, {Users, bob}, {Commands, conf}} {
		if err := db.Delete(ctx, del.m, del.id); err != nil {
			t.Fatal(err)
		}
		check("after " + del.m.Type + " deleted")
	}
	var names int
	if err := db.r.QueryRow(`SELECT count(*) FROM command_log_names`).Scan(&names); err != nil || names != 2+4+2 {
		t.Fatalf("%d distinct names (%v), want 8", names, err)
	}
}

// A search's count follows the logs: kept between pages, it takes a new log, a log
// deleted and notes written on a log.
func TestLogSearchCountFollows(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	count := func() int {
		t.Helper()
		_, n, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Search: "flapping", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var ids []int64
	for i := range 6 {
		id, err := db.CreateLog(ctx, Values{"command_name": "show log", "device_name": "r1", "username": "u", "success": true,
			"output": fmt.Sprintf("Gi0/%d is flapping", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if n := count(); n != 6 {
		t.Fatalf("%d matches, want 6", n)
	}
	if _, err := db.CreateLog(ctx, Values{"command_name": "show log", "device_name": "r1", "username": "u", "success": true,
		"output": "still flapping"}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 7 {
		t.Fatalf("after a new log: %d matches, want 7", n)
	}
	if _, err := db.w.ExecContext(ctx, `DELETE FROM command_logs WHERE id = ?`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 6 {
		t.Fatalf("after a log deleted: %d matches, want 6", n)
	}
	if _, err := db.w.ExecContext(ctx, `UPDATE command_logs SET notes = 'the port kept flapping' WHERE output NOT LIKE '%flapping%'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateLog(ctx, Values{"command_name": "show clock", "device_name": "r1", "username": "u", "success": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `UPDATE command_logs SET notes = 'flapping again' WHERE command_name = 'show clock'`); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 7 {
		t.Fatalf("after notes written: %d matches, want 7", n)
	}
	if _, err := db.w.ExecContext(ctx, `UPDATE command_logs SET notes = 'steady' WHERE command_name = 'show clock'`); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 6 {
		t.Fatalf("after notes changed: %d matches, want 6", n)
	}
}

// TestCounterRowsWrittenInOneOrder: two batches counting the same logs in different
// orders write their counter rows in the same order, so that on PostgreSQL two
// concurrent pushes sharing rows (names, an unknown device) wait instead of deadlocking.
func TestCounterRowsWrittenInOneOrder(t *testing.T) {
	var tallies []logTally
	for i := range 40 {
		tallies = append(tallies, logTally{device: int64(i % 7), user: int64(i % 3), username: fmt.Sprint("user", i%5),
			outcome: i % 3, created: "2026-12-07 10:00:00", command: int64(i % 4), commandName: fmt.Sprint("show ", i%4),
			deviceName: fmt.Sprint("sw", i%7), errorMessage: fmt.Sprint("error ", i%2)})
	}
	orderOf := func(ts []logTally) []string {
		c := newCounterRows()
		for _, t := range ts {
			c.add(t, 1)
		}
		var out []string
		for _, k := range inOrder(c.counts, func(k [4]any) []any { return k[:] }) {
			out = append(out, fmt.Sprintf("%#v", k))
		}
		for _, k := range inOrder(c.names, func(k [2]any) []any { return k[:] }) {
			out = append(out, fmt.Sprintf("%#v", k))
		}
		return out
	}
	first := orderOf(tallies)
	if len(first) < 10 {
		t.Fatalf("only %d counter rows: %v", len(first), first)
	}
	for range 5 {
		shuffled := slices.Clone(tallies)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := orderOf(shuffled); !slices.Equal(got, first) {
			t.Fatalf("rows written in another order:\n%v\nwant\n%v", got, first)
		}
	}
}
