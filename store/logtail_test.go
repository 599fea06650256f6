package store

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The logs written in created order (command_log_order, migration 0065): where the
// upgrade finds them to start, and how inserts, updates and deletes move that start.
func TestLogCreatedTail(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fieldkit.db")
	// Logs 1 to 10 at minutes 0 to 9, but log 4 at minute 1: older than log 3.
	devs, at := logsBeforeTail(t, path, []int{0, 1, 2, 1, 4, 5, 6, 7, 8, 9})
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tail := func() int64 {
		t.Helper()
		var n int64
		if err := db.r.QueryRow(`SELECT tail FROM command_log_order WHERE id = 1`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	check := func(when string, want int64) {
		t.Helper()
		if got := tail(); got != want {
			t.Errorf("%s: tail %d, want %d", when, got, want)
		}
		// Whatever moved it, the logs from tail up are newest first in id order, each
		// newer than every log below it.
		if n := plainIDs(t, db, `SELECT a.id FROM command_logs a JOIN command_logs b ON b.id < a.id
			WHERE a.id >= ? AND b.created > a.created`, want); len(n) > 0 {
			t.Errorf("%s: logs %v from tail %d up have older ids newer than they are", when, n, want)
		}
	}
	check("upgraded", 5)
	add := func(minute int) {
		t.Helper()
		if _, err := db.CreateLog(ctx, deviceLog(devs, 0, at.Add(time.Duration(minute)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	add(20) // log 11
	check("a newer log", 5)
	add(20) // log 12, as new as log 11: after it in (created, id)
	check("a log as new as the newest", 5)
	add(15) // log 13, older than log 12
	check("an older log", 14)
	add(30) // log 14
	check("a newer log after an older one", 14)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.w.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`DELETE FROM command_logs WHERE id IN (3, 14)`)
	check("deletes", 14)
	add(40) // log 14 again: SQLite gives the newest's id back
	check("the deleted newest's id given again", 14)
	exec(`UPDATE command_logs SET last_updated = 'x' WHERE id = 14`)
	check("an update of another column", 14)
	exec(`UPDATE command_logs SET created = ? WHERE id = 14`, Stamp(at.Add(50*time.Minute)))
	check("a changed created", 15)
	add(60) // log 15
	// a copy of log 15 with id, created at minute
	addWithID := func(id int64, minute int) {
		t.Helper()
		exec(`INSERT INTO command_logs (id, command_name, device_name, username, success, execution_time, created, last_updated)
			SELECT ?, command_name, device_name, username, success, execution_time, ?, last_updated FROM command_logs WHERE id = 15`,
			id, Stamp(at.Add(time.Duration(minute)*time.Minute)))
	}
	addWithID(1000, 70)
	check("a log of a chosen id, newest", 15)
	addWithID(500, 80)
	check("a log below the highest id", 1001)
	addLogFromOutside(t, db, devs[1], Stamp(at.Add(90*time.Minute)))
	check("a newer log from another process", 1001)
	addLogFromOutside(t, db, devs[1], Stamp(at))
	check("an older log from another process", 1003)
}

// An upgrade of a database with no logs, or with every log in order, starts the tail
// at the first id.
func TestLogCreatedTailUpgrade(t *testing.T) {
	ctx := context.Background()
	for _, minutes := range [][]int{nil, {0, 1, 2, 3, 4}} {
		n := len(minutes)
		path := filepath.Join(t.TempDir(), "fieldkit.db")
		logsBeforeTail(t, path, minutes)
		var logged strings.Builder
		db, err := Open(ctx, path, Logger(slog.New(slog.NewTextHandler(&logged, nil))))
		if err != nil {
			t.Fatal(err)
		}
		// The upgrade says what it does.
		if !strings.Contains(logged.String(), `msg="store: upgrading the database" migration=0065_log_created_tail`) ||
			!strings.Contains(logged.String(), `msg="store: upgraded the database" migration=0065_log_created_tail`) {
			t.Errorf("upgrade logged:\n%s", logged.String())
		}
		var tail int64
		if err := db.r.QueryRow(`SELECT tail FROM command_log_order WHERE id = 1`).Scan(&tail); err != nil || tail != 1 {
			t.Errorf("%d logs in order: tail %d (%v), want 1", n, tail, err)
		}
		db.Close()
	}
}

// logsBeforeTail makes the database at path as migration 0064 left it, with two devices
// and a log at each of minutes after the time it returns, of the two devices in turn.
func logsBeforeTail(t *testing.T, path string, minutes []int) ([]int64, time.Time) {
	t.Helper()
	ctx := context.Background()
	old, err := open(ctx, path, openOptions{}, "0064_log_prune_counts")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	devs := siteDevices(t, old, 2)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for i, minute := range minutes {
		if _, err := old.CreateLog(ctx, deviceLog(devs, i%2, at.Add(time.Duration(minute)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	return devs, at
}
