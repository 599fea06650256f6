package store

import (
	"context"
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
		ids, found, err := db.logPageByWalk(ctx, where.SQL, where.Args, true, total, Query{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if found != c.walked || (found && len(ids) != 50) {
			t.Errorf("device %d: walk found %v (%d ids), want %v", c.device, found, len(ids), c.walked)
		}
	}
}
