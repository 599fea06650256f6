package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestLogSpanCount checks the count of logs within bounds on created, taken from the
// hourly counters and the logs of the hours the bounds fall in (countBySpan), against
// a count of the logs: bounds on an hour's first instant, inside an hour and on its
// last microsecond, open and closed, one-sided, both in one hour, in adjacent hours and
// reversed, under conditions on the device (counted from the counters) and on more
// (counted plainly).
func TestLogSpanCount(t *testing.T) {
	db, wheres := hoursFixture(t)
	ctx := context.Background()
	points := []string{"2026-04-28T00:00:00Z", "2026-04-29T10:00:00Z", "2026-04-29T10:17:00Z", "2026-04-29T10:59:59.999999Z",
		"2026-04-29T11:00:00Z", "2026-04-30T05:59:59.999999Z", "2026-04-30T20:00:00Z", "2026-05-02T00:00:00Z"}
	bounds := points
	if testing.Short() {
		// The race detector's run: an hour's first instant, a point inside it, its last
		// microsecond and another hour.
		bounds = []string{points[1], points[2], points[3], points[6]}
	}
	filter := func(key, val string) Expr { return logFilter(t, key, val) }
	var spans [][]Expr
	for _, from := range bounds {
		for _, low := range []string{"created__gte", "created__gt"} {
			spans = append(spans, []Expr{filter(low, from)})
			for _, to := range bounds {
				for _, high := range []string{"created__lte", "created__lt"} {
					spans = append(spans, []Expr{filter(low, from), filter(high, to)})
				}
			}
		}
		for _, high := range []string{"created__lte", "created__lt"} {
			spans = append(spans, []Expr{filter(high, from)})
		}
	}
	counters, nonzero := 0, 0
	defer func(row, device int) { spanRowCost, spanDeviceCost = row, device }(spanRowCost, spanDeviceCost)
	rowCost, deviceCost := spanRowCost, spanDeviceCost
	for i, where := range wheres {
		byDevice := i < len(wheres)-1 && db.mustByDevice(ctx, t, where)
		for _, s := range spans {
			conds := append([]Expr{where}, s...)
			cond := And(conds...)
			var want int
			if err := db.r.QueryRow(`SELECT count(*) FROM command_logs t WHERE `+cond.SQL, cond.Args...).Scan(&want); err != nil {
				t.Fatal(err)
			}
			n, ok := db.countBySpan(ctx, db.r, conds)
			if ok != (byDevice || where.SQL == True.SQL) {
				t.Errorf("%s: counted from the counters: %v", cond.SQL, ok)
			}
			if ok {
				counters++
				if n != want {
					t.Errorf("%s %v: counted %d from the counters, want %d", cond.SQL, cond.Args, n, want)
				}
				// Either way, whatever the estimate chooses.
				rest, sp, _ := splitSpan(conds)
				r, devices := And(rest...), ""
				if r.SQL != True.SQL {
					devices, _ = db.logDevices(ctx, db.r, r)
				}
				for _, cost := range []int{0, 1 << 30} {
					spanRowCost, spanDeviceCost = cost, 0
					if n, err := spanCount(ctx, db.r, devices, r, sp); err != nil || n != want {
						t.Errorf("%s %v, row cost %d: counted %d (%v), want %d", cond.SQL, cond.Args, cost, n, err, want)
					}
				}
				spanRowCost, spanDeviceCost = rowCost, deviceCost
			}
			if want > 0 {
				nonzero++
			}
			ids, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: conds, Limit: 7, Offset: 3,
				Order: []Order{{SQL: "t.created", Desc: true, NotNull: true}}})
			if err != nil || total != want {
				t.Errorf("%s %v: list count %d (%v), want %d", cond.SQL, cond.Args, total, err, want)
			}
			page := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+cond.SQL+` ORDER BY t.created DESC, t.id DESC LIMIT 7 OFFSET 3`, cond.Args...)
			if fmt.Sprint(ids) != fmt.Sprint(page) {
				t.Errorf("%s %v: page %v, want %v", cond.SQL, cond.Args, ids, page)
			}
		}
	}
	if counters < 5*len(spans) || nonzero < len(spans) {
		t.Errorf("only %d spans counted from the counters, %d with logs", counters, nonzero)
	}
	// Two bounds on one side, and a bound that is not a stamp, are counted plainly.
	for _, conds := range [][]Expr{
		{filter("created__gte", points[1]), filter("created__gt", points[2])},
		{{SQL: "t.created >= ?", Args: []any{"2026-04-29"}}},
		{{SQL: "t.created >= ?", Args: []any{int64(3)}}},
	} {
		if _, ok := db.countBySpan(ctx, db.r, conds); ok {
			t.Errorf("%v: counted from the counters", conds)
		}
	}
}

// logFilter is the condition of the log list's filter key=val.
func logFilter(t *testing.T, key, val string) Expr {
	t.Helper()
	e, err := CommandLogs.FilterExpr(key, []string{val})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// mustByDevice reports whether where reads the log's device alone.
func (db *DB) mustByDevice(ctx context.Context, t *testing.T, where Expr) bool {
	t.Helper()
	_, ok := db.logDevices(ctx, db.r, where)
	return ok
}

// TestLogIDOrderInCreated checks that lists ordered by id, which are read as ordered by
// created while every log was written in created order (logsInOrder), are the plain id
// order: with ties in created, under conditions on the device, outcome and created, at
// every offset both ways; and again once a log written out of order ends it.
func TestLogIDOrderInCreated(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	id := mustID[int64](t)
	site := id(db.Create(ctx, Sites, Values{"name": "S", "slug": "s"}, All))
	var devices []int64
	for i := range 4 {
		devices = append(devices, id(db.Create(ctx, Devices, Values{"name": fmt.Sprintf("dev%d", i), "site": site}, All)))
	}
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	mk := func(i int, created time.Time) Values {
		return Values{"command_name": "cmd", "device": devices[i%4], "device_name": fmt.Sprintf("dev%d", i%4),
			"username": "u", "success": i%3 > 0, "created": created}
	}
	var bulk []Values
	for i := range 300 {
		bulk = append(bulk, mk(i, base.Add(time.Duration(i/3)*time.Minute))) // three logs a minute
	}
	if err := db.InsertLogs(ctx, bulk); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		if _, err := db.CreateLog(ctx, mk(i, base.Add(100*time.Minute+time.Duration(i/2)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	var wheres []Expr
	for _, c := range []string{`{"device": ` + fmt.Sprint(devices[1]) + `}`, `{"device__in": [` + fmt.Sprint(devices[0], ",", devices[2]) + `]}`,
		`{"success": false}`, `{"created__gte": "2026-05-01T00:40:00Z"}`} {
		where, err := CompileConstraints(CommandLogs, c, 1)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		wheres = append(wheres, where)
	}
	wheres = append(wheres, True)
	check := func(wantInOrder bool) {
		t.Helper()
		if in, err := db.logsInOrder(ctx); err != nil || in != wantInOrder {
			t.Fatalf("logs in created order: %v (%v), want %v", in, err, wantInOrder)
		}
		for _, where := range wheres {
			for _, desc := range []bool{false, true} {
				all := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+where.SQL+` ORDER BY t.id `+orderDir(desc), where.Args...)
				for _, offset := range []int{0, 7, len(all) / 2, max(len(all)-3, 0)} {
					got, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: []Expr{where}, Limit: 10, Offset: offset,
						Order: []Order{{SQL: "t.id", Desc: desc, NotNull: true, Index: ByRowid}}})
					want := all[offset:min(offset+10, len(all))]
					if err != nil || total != len(all) || fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%s desc=%v offset %d: %v of %d (%v), want %v of %d", where.SQL, desc, offset, got, total, err, want, len(all))
					}
				}
			}
		}
	}
	check(true)
	// An import of an older log: the ids are no longer in created order.
	if _, err := db.CreateLog(ctx, mk(1, base.Add(30*time.Minute))); err != nil {
		t.Fatal(err)
	}
	check(false)
}

// TestLogSpanPagesAgree compares pages of logs bounded on created, under each viewer's
// condition, with the plain query: ordered by a field of few values (user name,
// outcome), whose runs are sought one after another (pageByValues), by the duration,
// walked along its index with the condition tested within it, and by created. Offsets
// run across the list and to either side of each run's end; walks are short enough
// that pageAlong both holds pages and does not.
func TestLogSpanPagesAgree(t *testing.T) {
	db, wheres := orderingsFixture(t)
	ctx := context.Background()
	defer func(least, most int) { alongLeast, alongMost = least, most }(alongLeast, alongMost)
	alongLeast, alongMost = 10, 400
	var spans [][]Expr
	for _, s := range [][]string{{"created__gte", "2026-04-30T20:00:00Z"}, {"created__lt", "2026-04-29T10:17:00Z"},
		{"created__gt", "2026-04-29T11:00:00Z", "created__lte", "2026-04-30T05:59:59.999999Z"},
		// most of the list in the hour the far end falls in, newest first
		{"created__gte", "2026-04-29T10:00:00Z", "created__lte", "2026-04-29T11:05:00Z"},
		// both ends in one hour; the ends the wrong way round
		{"created__gt", "2026-04-29T10:17:00Z", "created__lt", "2026-04-29T10:59:59.999999Z"},
		{"created__gte", "2026-04-30T00:00:00Z", "created__lte", "2026-04-29T00:00:00Z"}} {
		var span []Expr
		for i := 0; i < len(s); i += 2 {
			e, err := CommandLogs.FilterExpr(s[i], []string{s[i+1]})
			if err != nil {
				t.Fatal(err)
			}
			span = append(span, e)
		}
		spans = append(spans, span)
	}
	specs := []string{"username", "-username", "success", "-success", "execution_duration", "-execution_duration", "", "created"}
	walkAll := true
	if testing.Short() {
		// The race detector's run: each field one way, three spans, and the walks by
		// cursor (a page of nine at a time) under the first viewer only.
		specs, spans, walkAll = []string{"username", "-success", "execution_duration", "created"}, spans[:3], false
	}
	byValues, byHours := 0, 0
	for _, spec := range specs {
		order, err := CommandLogs.Ordering(spec)
		if err != nil {
			t.Fatal(err)
		}
		terms := orderBy(keyTerms(order))
		for i, where := range wheres {
			for _, span := range spans {
				conds := append([]Expr{where}, span...)
				cond := And(conds...)
				type row struct {
					id  int64
					key any
				}
				all := plainRows(t, db, func(r *sql.Rows) (v row, err error) { return v, r.Scan(&v.id, &v.key) },
					`SELECT t.id, `+order[0].SQL+` FROM command_logs t WHERE `+cond.SQL+` ORDER BY `+terms, cond.Args...)
				var mostInHour int
				if err := db.r.QueryRow(`SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM command_logs t WHERE `+cond.SQL+`
					GROUP BY substr(t.created, 1, 13))`, cond.Args...).Scan(&mostInHour); err != nil {
					t.Fatal(err)
				}
				offsets := []int{0, 3}
				for j := 1; j < len(all); j++ {
					if all[j].key != all[j-1].key && order[0].Values != "" {
						offsets = append(offsets, max(j-3, 0), j) // across a run's end, and at the next run's start
					}
				}
				offsets = append(offsets, len(all)/3, len(all)/2, len(all)/2+1, max(len(all)-2, 0))
				for _, offset := range offsets {
					var want []int64
					for _, r := range all[min(offset, len(all)):min(offset+7, len(all))] {
						want = append(want, r.id)
					}
					q := Query{Model: TypeCommandLog, Where: conds, Order: order, Limit: 7, Offset: offset}
					got, n, err := db.ListIDs(ctx, q)
					if err != nil || n != len(all) || fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%q, %s %v, offset %d: %v of %d (%v), want %v of %d", spec, cond.SQL, cond.Args, offset, got, n, err, want, len(all))
					}
					if desc, ok := byCreated(order); ok {
						// Through the hourly counters, whatever the offset.
						got, _, found, err := db.logPageByHours(ctx, CommandLogs, cond, desc, q)
						if err != nil || found != (i < 5 || where.SQL == True.SQL) || found && fmt.Sprint(got) != fmt.Sprint(want) {
							t.Errorf("%q, %s %v, offset %d, by hours: %v (%v, %v), want %v", spec, cond.SQL, cond.Args, offset, got, found, err, want)
						}
						byHours++
						// The page is sought to the hour it starts in: what is left to skip is
						// within that hour.
						var devices string
						if where.SQL != True.SQL && found {
							devices, _ = db.logDevices(ctx, db.r, where)
						}
						rq, done, err := db.snapshot(ctx)
						if err != nil {
							t.Fatal(err)
						}
						_, s, _ := splitSpan(conds)
						bound, skip, ok, err := hourStart(ctx, rq, devices, hourTotal, where, s, desc, offset)
						if found && (err != nil || !ok && offset < len(all) || ok && offset < len(all) && skip > mostInHour) {
							t.Errorf("%q, %s %v, offset %d: %d left to skip (%v, %v), more than an hour's %d logs", spec, cond.SQL, cond.Args, offset, skip, ok, err, mostInHour)
						}
						if found && ok {
							// And the page from there, without reading from the far end.
							e, from := And(append([]Expr{where}, bound.conds()...)...), q
							from.Offset = skip
							if got, _, err := db.pageIDs(ctx, rq, CommandLogs, e.SQL, e.Args, from); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
								t.Errorf("%q, %s %v, offset %d, from %+v: %v (%v), want %v", spec, cond.SQL, cond.Args, offset, bound, got, err, want)
							}
						}
						done()
					}
					if order[0].Values != "" && (i < 5 || where.SQL == True.SQL) {
						byValues++
						if got, err := db.pageByValues(ctx, CommandLogs, cond.SQL, cond.Args, q); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
							t.Errorf("%q, %s %v, offset %d, by value: %v (%v), want %v", spec, cond.SQL, cond.Args, offset, got, err, want)
						}
					}
				}
				if !walkAll && i > 0 {
					continue
				}
				// A walk by cursor meets every log once, in order.
				var ids []int64
				for _, r := range all {
					ids = append(ids, r.id)
				}
				walked := walkByCursor(t, db, Query{Model: TypeCommandLog, Where: conds, Order: order, Limit: 9}, len(all))
				if fmt.Sprint(walked) != fmt.Sprint(ids) {
					t.Errorf("%q, %s %v: the walk by cursor met %d logs, want the %d in order", spec, cond.SQL, cond.Args, len(walked), len(ids))
				}
			}
		}
	}
	if byValues < 100 || byHours < 100 {
		t.Errorf("only %d pages sought by value, %d through the hours", byValues, byHours)
	}
}

// TestLogHeldSpanCount checks the counts of logs within bounds on created for a set of
// devices, taken from the held keys (heldSpanCount), against a count of the logs: with
// nothing held, once read, after logs are added (and caught up), after a prune, after
// logs are deleted midway (which the keys still hold: not taken from them), once read
// again, and inside a Batch, whose uncommitted logs the keys never hold. The bounds
// fall before, on and between the logs' stamps, open and closed, and past either end.
func TestLogHeldSpanCount(t *testing.T) {
	ctx := context.Background()
	db, devices, users, commands := heldFixture(t)
	at := func(minute int) string { return Stamp(time.Date(2026, 5, 1, 0, minute, 0, 0, time.UTC)) }
	filter := func(key, val string) Expr { return logFilter(t, key, val) }
	var spans [][]Expr
	for _, m := range []int{-5, 0, 1, 299, 700, 1500} {
		spans = append(spans, []Expr{filter("created__gte", at(m))}, []Expr{filter("created__lt", at(m))})
		for _, m2 := range []int{0, 450, 1000, 2000} {
			spans = append(spans, []Expr{filter("created__gt", at(m)), filter("created__lte", at(m2))})
		}
	}
	sets := []string{"", "[]", fmt.Sprintf("[%d]", devices[1]), fmt.Sprintf("[0, %d, %d]", devices[0], devices[3]), "[0]"}
	check := func(stage string, batch context.Context, wantHeld bool) {
		t.Helper()
		before := db.devices.spans.Load()
		for _, set := range sets {
			r := True
			if set != "" {
				r = Expr{SQL: "coalesce(t.device_id, 0) IN (SELECT value FROM json_each(?))", Args: []any{set}}
			}
			for _, conds := range spans {
				_, s, ok := splitSpan(conds)
				if !ok {
					t.Fatalf("%v: not a span", conds)
				}
				cond := And(append([]Expr{r}, conds...)...)
				var want int
				if err := db.reader(batch).QueryRowContext(batch, `SELECT count(*) FROM command_logs t WHERE `+cond.SQL, cond.Args...).Scan(&want); err != nil {
					t.Fatal(err)
				}
				if n, err := db.countSpan(batch, db.reader(batch), set, r, s); err != nil || n != want {
					t.Errorf("%s: devices %q, %s %v: counted %d (%v), want %d", stage, set, cond.SQL, cond.Args, n, err, want)
				}
			}
		}
		if got, all := db.devices.spans.Load()-before, int64(len(sets)*len(spans)); wantHeld && got != all || !wantHeld && got != 0 {
			t.Errorf("%s: %d of %d counts taken from the held keys, want them held: %v", stage, got, all, wantHeld)
		}
	}
	check("nothing held", ctx, false)
	if err := db.ReadLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	check("read", ctx, true)
	addHeldLogs(t, db, 700, 620, devices, users, commands)
	check("added", ctx, true)
	if _, err := db.PruneLogs(ctx, time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	check("pruned", ctx, true)
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE id % 11 = 0 AND id < (SELECT max(id) FROM command_logs)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	check("deleted midway", ctx, false)
	if err := db.ReadLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	check("read again", ctx, true)
	stop := fmt.Errorf("rolled back")
	if err := db.Batch(ctx, func(ctx context.Context) error {
		if _, err := db.CreateLog(ctx, Values{"command_name": "show c", "device": devices[1], "device_name": "d", "username": "ghost",
			"success": true, "created": time.Date(2026, 5, 1, 0, 1400, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
		check("in a batch", ctx, false)
		return stop
	}); err != stop {
		t.Fatal(err)
	}
	check("after the batch", ctx, true)
}
