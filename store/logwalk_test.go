package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestLogPageByWalk: a near page for a condition on the device alone that holds for
// many logs is read along the created index when the newest logs hold it, and through
// the device indexes when they do not (a viewer whose devices only logged long ago);
// both give the page the plain query gives. A device whose logs begin past the short
// first walk, but within logWalkRows, is found by the longer one.
func TestLogPageByWalk(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	id := mustID[int64](t)
	site := id(db.Create(ctx, Sites, Values{"name": "S", "slug": "s"}, All))
	old := id(db.Create(ctx, Devices, Values{"name": "old", "site": site}, All))
	busy := id(db.Create(ctx, Devices, Values{"name": "busy", "site": site}, All))
	spread := id(db.Create(ctx, Devices, Values{"name": "spread", "site": site}, All))
	gap := id(db.Create(ctx, Devices, Values{"name": "gap", "site": site}, All))
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var logs []Values
	add := func(device int64, name string, created time.Time) {
		logs = append(logs, Values{"command_name": "show clock", "device": device, "device_name": name,
			"username": "u", "success": true, "created": created})
	}
	// The old device's 1,500 logs come first; then 3,000 of the busy device, one in
	// three of them the spread device's. Ties on created check the id order.
	for i := range 1500 {
		add(old, "old", base.Add(time.Duration(i)*time.Second))
	}
	for i := range 3000 {
		at := base.Add(time.Hour + time.Duration(i/2)*time.Second)
		if i%3 == 0 {
			add(spread, "spread", at)
		} else {
			add(busy, "busy", at)
		}
	}
	// The gap device's 600 logs sort after the newest 1,200 (they tie on created with
	// two older ones and have greater ids): its first page is 1,200 logs in, past the
	// first walk's 850 (twice the page at its share of the 5,100) but within the second.
	for range 600 {
		add(gap, "gap", base.Add(time.Hour+899*time.Second))
	}
	if err := db.InsertLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		device int64
		walked bool // the newest logs hold the first page
	}{{old, false}, {spread, true}, {busy, true}, {gap, true}} {
		where := Expr{SQL: "t.device_id IN (SELECT value FROM json_each(?))", Args: []any{fmt.Sprintf("[%d]", c.device)}}
		var total int
		if err := db.r.QueryRow(`SELECT count(*) FROM command_logs t WHERE `+where.SQL, where.Args...).Scan(&total); err != nil {
			t.Fatal(err)
		}
		for _, desc := range []bool{true, false} {
			dir := "ASC"
			if desc {
				dir = "DESC"
			}
			for _, offset := range []int{0, 1, 49, 60, total - 10, total} {
				want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+where.SQL+
					` ORDER BY t.created `+dir+`, t.id `+dir+` LIMIT 50 OFFSET ?`, append(slices.Clone(where.Args), offset)...)
				q := Query{Model: TypeCommandLog, Where: []Expr{where}, Order: []Order{{SQL: "t.created", Desc: desc, NotNull: true}},
					Limit: 50, Offset: offset}
				got, n, _, err := db.ListKeyed(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if n != total || !slices.Equal(got, want) {
					t.Errorf("device %d %s offset %d: %v (count %d), want %v (count %d)", c.device, dir, offset, got, n, want, total)
				}
			}
		}
		ids, found, err := db.logPageByWalk(ctx, where.SQL, where.Args, fmt.Sprintf("[%d]", c.device), true, total, Query{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if found != c.walked || (found && len(ids) != 50) {
			t.Errorf("device %d: walk found %v (%d ids), want %v", c.device, found, len(ids), c.walked)
		}
	}
}

// TestRecentLogsWindow: once the walks at one data version have read enough logs, the
// near pages of a confined viewer, and of every log, are picked from the window of
// recent logs, and give the page the plain query gives (a page past the window is read
// as before); after a log added, logs deleted, a device deleted (its logs keep key 0)
// and a log written by another process, the next pages follow, and the window is read
// again.
func TestRecentLogsWindow(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	devs := siteDevices(t, db, 4)
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	mk := func(d int, at time.Time) Values { return deviceLog(devs, d, at) }
	var logs []Values
	for i := range 3000 {
		// pairs of logs tie on created, so the id breaks the tie
		logs = append(logs, mk(i%4, base.Add(time.Duration(i/2)*time.Second)))
	}
	if err := db.InsertLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	// every log first: after a write, its count is the first one asked at the new version
	wheres := []struct {
		name  string
		where Expr
	}{
		{"every log", True},
		{"devices 0 and 1", Expr{SQL: "t.device_id IN (SELECT value FROM json_each(?))", Args: []any{fmt.Sprintf("[%d,%d]", devs[0], devs[1])}}},
		{"device 3, or a deleted device", Expr{SQL: "(t.device_id IS NULL OR t.device_id = ?)", Args: []any{devs[3]}}},
	}
	// pages checks every viewer's near pages against the plain query, until the window
	// has served some of them.
	pages := func(step string) {
		t.Helper()
		used := db.recent.used.Load()
		for round := range 4 {
			for _, w := range wheres {
				name, where := w.name, w.where
				for _, offset := range []int{0, 1, 49, 60, 150, recentLogsCap - 20, recentLogsCap + 5} {
					want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+where.SQL+
						` ORDER BY t.created DESC, t.id DESC LIMIT 50 OFFSET ?`, append(slices.Clone(where.Args), offset)...)
					q := Query{Model: TypeCommandLog, Where: []Expr{where}, Order: []Order{{SQL: "t.created", Desc: true, NotNull: true}},
						Limit: 50, Offset: offset}
					got, n, _, err := db.ListKeyed(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					var total int
					if err := db.r.QueryRow(`SELECT count(*) FROM command_logs t WHERE `+where.SQL, where.Args...).Scan(&total); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) || n != total {
						t.Fatalf("%s, round %d, %s, offset %d: %v (count %d), want %v (count %d)", step, round, name, offset, got, n, want, total)
					}
				}
			}
		}
		if db.recent.used.Load() == used {
			t.Fatalf("%s: no page was picked from the window", step)
		}
	}
	pages("first")
	// Another list ordered by created, with the window held, is its own.
	devices := Query{Model: TypeDevice, Order: []Order{{SQL: "t.created", Desc: true, NotNull: true}}, Limit: 50}
	if got, _, _, err := db.ListKeyed(ctx, devices); err != nil || !slices.Equal(got, plainIDs(t, db,
		`SELECT id FROM devices ORDER BY created DESC, id DESC LIMIT 50`)) {
		t.Fatalf("devices by created, the window held: %v, %v", got, err)
	}
	if _, err := db.CreateLog(ctx, mk(0, base.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	pages("after a log added")
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE id IN (SELECT id FROM command_logs ORDER BY created DESC LIMIT 7)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	pages("after the newest seven deleted")
	if err := db.Delete(ctx, Devices, devs[2]); err != nil {
		t.Fatal(err)
	}
	pages("after device 2 deleted")
	addLogFromOutside(t, db, devs[1], base.Add(2*time.Hour).Format("2006-01-02 15:04:05"))
	pages("after another process added one")
}

// TestOneDevice: a set of device keys names one device only when it holds one key that
// is not a deleted device's.
func TestOneDevice(t *testing.T) {
	for keys, want := range map[string]int64{"[12]": 12, "[0]": 0, "[]": 0, "[3,4]": 0, "": 0, "[-1]": 0} {
		got, ok := oneDevice(keys)
		if ok != (want != 0) || (ok && got != want) {
			t.Errorf("oneDevice(%q) = %d, %v; want %d", keys, got, ok, want)
		}
	}
}

// TestRecentLogsConcurrent: pages picked while logs are written, from several
// goroutines, hold only the viewer's logs in order; once the writes stop, every page
// is the plain query's (run with -race for the window's locking).
func TestRecentLogsConcurrent(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	devs := siteDevices(t, db, 4)
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	mk := func(i int) Values { return deviceLog(devs, i%4, base.Add(time.Duration(i)*time.Second)) }
	var logs []Values
	for i := range 2500 {
		logs = append(logs, mk(i))
	}
	if err := db.InsertLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	where := Expr{SQL: "t.device_id IN (SELECT value FROM json_each(?))", Args: []any{fmt.Sprintf("[%d,%d]", devs[0], devs[2])}}
	q := Query{Model: TypeCommandLog, Where: []Expr{where}, Order: []Order{{SQL: "t.created", Desc: true, NotNull: true}}, Limit: 50}
	mine := map[int64]bool{devs[0]: true, devs[2]: true}
	// check is run from the pages' goroutines: it reports, never fails the test itself.
	check := func(ids []int64) error {
		list, _ := json.Marshal(ids)
		rows, err := db.r.Query(`SELECT id, device_id FROM command_logs WHERE id IN (SELECT value FROM json_each(?))`, string(list))
		if err != nil {
			return err
		}
		defer rows.Close()
		found := 0
		for rows.Next() {
			var id, device int64
			if err := rows.Scan(&id, &device); err != nil {
				return err
			}
			if found++; !mine[device] {
				return fmt.Errorf("page %v holds log %d of device %d", ids, id, device)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if found != len(ids) || len(ids) != q.Limit {
			return fmt.Errorf("page %v: %d of its logs found, %d wanted", ids, found, q.Limit)
		}
		if !slices.IsSortedFunc(ids, func(a, b int64) int { return int(b - a) }) {
			return fmt.Errorf("page %v is not newest first", ids)
		}
		return nil
	}
	done := make(chan struct{})
	errs := make(chan error, 5)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				ids, _, _, err := db.ListKeyed(ctx, q)
				if err == nil {
					err = check(ids)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 40 {
		if _, err := db.CreateLog(ctx, mk(2500+i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for range 50 {
		got, _, _, err := db.ListKeyed(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+where.SQL+` ORDER BY t.created DESC, t.id DESC LIMIT 50`, where.Args...)
		if !slices.Equal(got, want) {
			t.Fatalf("after the writes: %v, want %v", got, want)
		}
	}
	if db.recent.used.Load() == 0 {
		t.Fatal("no page was picked from the window")
	}
}

// deviceLog is a log of devs[d], named d<d>, created at at.
func deviceLog(devs []int64, d int, at time.Time) Values {
	return Values{"command_name": "show clock", "device": devs[d], "device_name": fmt.Sprintf("d%d", d),
		"username": "u", "success": true, "created": at}
}
