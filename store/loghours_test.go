package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// hoursFixture is a database of logs over three days of 12 devices, many of them on
// the first or last microsecond of an hour, written through the bulk path and one by
// one, then some deleted, a few moved in time and a device deleted; and the
// constraints to compare under: by device (answered from the counters), on more than
// the device (answered from the logs), and none. It is built once (buildHours) and each
// test gets a copy.
func hoursFixture(t *testing.T) (*DB, []Expr) {
	t.Helper()
	return hoursImage.open(t, "", buildHours)
}

var hoursImage fixtureImage

func buildHours(t *testing.T, db *DB) []Expr {
	t.Helper()
	ctx := context.Background()
	id := mustID[int64](t)
	var sites, devices []int64
	for i := range 3 {
		sites = append(sites, id(db.Create(ctx, Sites, Values{"name": fmt.Sprintf("S%d", i), "slug": fmt.Sprintf("s%d", i)}, All)))
	}
	for i := range 12 {
		devices = append(devices, id(db.Create(ctx, Devices, Values{"name": fmt.Sprintf("dev%02d", i), "site": sites[i%3]}, All)))
	}
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(5, 6))
	mk := func() Values {
		d := rng.IntN(len(devices))
		created := base.Add(-time.Duration(rng.IntN(72*3600)) * time.Second)
		switch rng.IntN(4) {
		case 0: // the first instant of an hour
			created = created.Truncate(time.Hour)
		case 1: // the last microsecond of an hour
			created = created.Truncate(time.Hour).Add(time.Hour - time.Microsecond)
		}
		if rng.IntN(50) == 0 { // after "now"
			created = base.Add(time.Duration(rng.IntN(3*3600)) * time.Second)
		}
		v := Values{"command_name": fmt.Sprintf("cmd-%d", rng.IntN(8)), "device": devices[d], "device_name": fmt.Sprintf("dev%02d", d),
			"username": fmt.Sprintf("u%d", rng.IntN(2)), "success": rng.IntN(4) > 0, "created": created}
		if !v["success"].(bool) {
			v["error_message"] = "failed"
		}
		return v
	}
	var bulk []Values
	for range 2500 {
		bulk = append(bulk, mk())
	}
	if err := db.InsertLogs(ctx, bulk); err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if _, err := db.CreateLog(ctx, mk()); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE id % 9 = 0`); err != nil {
			return err
		}
		// Logs are never updated by the API; the hourly counters follow if one ever is.
		_, err := tx.ExecContext(ctx, `UPDATE command_logs SET created = ? WHERE id % 31 = 0`,
			Stamp(base.Add(-5*time.Hour)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, Devices, devices[4]); err != nil {
		t.Fatal(err)
	}
	var wheres []Expr
	for _, c := range []string{
		`{"device__site__slug": "s1"}`,
		fmt.Sprintf(`{"device": %d}`, devices[2]),
		fmt.Sprintf(`{"device__in": [%d, %d]}`, devices[1], devices[4]),
		`{"device__isnull": true}`,
		`{"device__site__slug": "nowhere"}`,
		`{"success": false}`,
		`{"device__isnull": false, "success": true}`,
		fmt.Sprintf(`[{"device": %d, "success": false}, {"device": %d}]`, devices[1], devices[2]),
		`[{"device__site__slug": "s2"}, {"username": "u1"}]`,
	} {
		where, err := CompileConstraints(CommandLogs, c, 1)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		wheres = append(wheres, where)
	}
	return append(wheres, True)
}

// TestLogHoursCounters checks the hourly counters against a count of the logs after
// bulk and single inserts, deletes, updates and a deleted device.
func TestLogHoursCounters(t *testing.T) {
	db, _ := hoursFixture(t)
	read := func(query string) [][4]any {
		rows, err := db.r.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out [][4]any
		for rows.Next() {
			var r [4]any
			if err := rows.Scan(&r[0], &r[1], &r[2], &r[3]); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	got := read(`SELECT hour, device_id, total, successful FROM command_log_device_hours ORDER BY 1, 2`)
	want := read(`SELECT substr(created, 1, 13), coalesce(device_id, 0), count(*), sum(success) FROM command_logs
		GROUP BY 1, 2 ORDER BY 1, 2`)
	if len(want) < 100 || !reflect.DeepEqual(got, want) {
		t.Errorf("hourly counters (%d rows) differ from the logs (%d rows)", len(got), len(want))
	}
}

// TestLogHoursWindowAgree compares the last 24 hours of statistics with a count over
// the logs, for a "now" on, just before and just after an hour's first instant.
func TestLogHoursWindowAgree(t *testing.T) {
	db, wheres := hoursFixture(t)
	hour := time.Date(2026, 4, 30, 7, 0, 0, 0, time.UTC)
	for _, now := range []time.Time{hour, hour.Add(time.Microsecond), hour.Add(-time.Microsecond),
		hour.Add(23*time.Minute + 17*time.Second), time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)} {
		for _, where := range wheres {
			got, err := db.LogStatistics(context.Background(), where, now)
			if err != nil {
				t.Fatal(err)
			}
			if want := slowStats(t, db, where, now); !reflect.DeepEqual(got, want) {
				t.Errorf("now %s, %s: statistics\n got %+v\nwant %+v", Stamp(now), where.SQL, got, want)
			}
		}
	}
}

// TestLogPageByHoursAgree compares every kind of page of logs ordered by created (deep
// offsets found through the hourly counters included) with the plain query.
func TestLogPageByHoursAgree(t *testing.T) {
	db, wheres := hoursFixture(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	byOutcomes := 0
	for _, where := range wheres {
		var total int
		if err := db.r.QueryRow(`SELECT count(*) FROM command_logs t WHERE `+where.SQL, where.Args...).Scan(&total); err != nil {
			t.Fatal(err)
		}
		_, byDevice := db.logDevices(ctx, db.r, where)
		_, _, byOutcome := db.outcomeDevices(ctx, db.r, where)
		if byOutcome && !byDevice {
			byOutcomes++
		}
		if _, _, done, err := db.logPageByHours(ctx, CommandLogs, where, true, Query{Limit: 7, Offset: hourWalkFrom}); err != nil ||
			done != (byDevice || byOutcome || where.SQL == True.SQL) {
			t.Errorf("%s: page through the hourly counters: %v (%v), want %v", where.SQL, done, err, byDevice || byOutcome || where.SQL == True.SQL)
		}
		offsets := []int{0, 1, hourWalkFrom - 1, hourWalkFrom, hourWalkFrom + 1, total - 1, total, total + 3}
		random := 15
		if testing.Short() {
			random = 2 // the race detector's run
		}
		for range random {
			offsets = append(offsets, rng.IntN(total+1))
		}
		for _, desc := range []bool{true, false} {
			dir := "ASC"
			if desc {
				dir = "DESC"
			}
			for _, offset := range offsets {
				if offset < 0 {
					continue
				}
				want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+where.SQL+
					` ORDER BY t.created `+dir+`, t.id `+dir+` LIMIT 7 OFFSET ?`, append(slices.Clone(where.Args), offset)...)
				for _, keyed := range []bool{false, true} {
					q := Query{Model: TypeCommandLog, Where: []Expr{where}, Order: []Order{{SQL: "t.created", Desc: desc, NotNull: true}},
						Limit: 7, Offset: offset, Keyed: keyed}
					got, n, next, err := db.ListKeyed(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if n != total || !slices.Equal(got, want) {
						t.Errorf("%s %s offset %d keyed %v: %v (count %d), want %v (count %d)",
							where.SQL, dir, offset, keyed, got, n, want, total)
					}
					if keyed && next != nil && next[len(next)-1] != want[len(want)-1] {
						t.Errorf("%s %s offset %d: cursor %v, want one ending in %d", where.SQL, dir, offset, next, want[len(want)-1])
					}
				}
				// Ordered by the outcome, then created: for a list of one outcome, the
				// page ordered by created.
				spec := map[bool]string{false: "success", true: "-success"}[desc]
				order, err := CommandLogs.Ordering(spec)
				if err != nil {
					t.Fatal(err)
				}
				want = plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+where.SQL+` ORDER BY `+orderBy(keyTerms(order))+` LIMIT 7 OFFSET ?`,
					append(slices.Clone(where.Args), offset)...)
				got, n, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: []Expr{where}, Order: order, Limit: 7, Offset: offset})
				if err != nil || n != total || !slices.Equal(got, want) {
					t.Errorf("%s ordering %s offset %d: %v (count %d, %v), want %v (count %d)", where.SQL, spec, offset, got, n, err, want, total)
				}
			}
		}
	}
	if byOutcomes != 2 {
		t.Errorf("%d conditions paged through the counters of one outcome, want 2", byOutcomes)
	}
}

func plainIDs(t *testing.T, db *DB, query string, args ...any) []int64 {
	t.Helper()
	return plainRows(t, db, func(r *sql.Rows) (id int64, err error) { return id, r.Scan(&id) }, query, args...)
}

// plainRows are the rows of query, each scanned by scan.
func plainRows[T any](t *testing.T, db *DB, scan func(*sql.Rows) (T, error), query string, args ...any) []T {
	t.Helper()
	rows, err := db.r.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// orderingsFixture is hoursFixture with durations of five values, many logs sharing
// each, so that ties in the duration are broken as its index holds them.
func orderingsFixture(t *testing.T) (*DB, []Expr) {
	t.Helper()
	db, wheres := hoursFixture(t)
	if err := db.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(context.Background(), `UPDATE command_logs SET execution_duration = (id * 7 % 5) * 0.25`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return db, wheres
}

// TestLogOrderingsAgree compares pages of logs ordered by a field with an index of its
// own (user name, success, duration: Field.SortIndex) with the plain query ordered by
// the field, then created, then id: read along that index and sorted, by offset, and a
// walk by cursor over the whole list.
func TestLogOrderingsAgree(t *testing.T) {
	db, wheres := orderingsFixture(t)
	ctx := context.Background()
	for _, c := range [][2]string{{"username", "u1"}, {"created__gte", "2026-04-30T20:00:00Z"}} {
		e, err := CommandLogs.FilterExpr(c[0], []string{c[1]})
		if err != nil {
			t.Fatal(err)
		}
		wheres = append(wheres, e)
	}
	// Walks short enough that some pages are not held whole by them.
	defer func(least, most int) { alongLeast, alongMost = least, most }(alongLeast, alongMost)
	alongLeast, alongMost = 10, 400
	alongs := map[bool]int{}
	specs := []string{"username", "-username", "success", "-success", "execution_duration", "-execution_duration", "id", "-id"}
	if testing.Short() {
		specs = []string{"username", "-success", "execution_duration", "-id"} // the race detector's run: each field, one way
	}
	for _, spec := range specs {
		order, err := CommandLogs.Ordering(spec)
		if err != nil {
			t.Fatal(err)
		}
		col := "t." + strings.TrimPrefix(spec, "-")
		dir := "ASC"
		if spec[0] == '-' {
			dir = "DESC"
		}
		terms := col + ` ` + dir + `, t.created ` + dir + `, t.id ` + dir
		if col == "t.id" {
			// the id's order is the table's own, with no tie to break
			if len(order) != 1 || order[0].Index != ByRowid {
				t.Fatalf("%s: ordering %+v, want the id along the table", spec, order)
			}
			terms = col + ` ` + dir
		} else if len(order) != 2 || order[0].SQL != col || order[0].Index == "" || order[1].SQL != "t.created" || order[1].Desc != (dir == "DESC") {
			t.Fatalf("%s: ordering %+v, want %s then t.created %s along an index", spec, order, col, dir)
		}
		for _, where := range wheres {
			all := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+where.SQL+` ORDER BY `+terms, where.Args...)
			total := len(all)
			for _, offset := range []int{0, 3, total / 2, max(total-2, 0)} {
				want := all[min(offset, total):min(offset+7, total)]
				q := Query{Model: TypeCommandLog, Where: []Expr{where}, Order: order, Limit: 7, Offset: offset}
				got, n, err := db.ListIDs(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if n != total || len(got) != len(want) || (len(want) > 0 && !slices.Equal(got, want)) {
					t.Errorf("%s, %s, offset %d: %v (count %d), want %v (count %d)", spec, where.SQL, offset, got, n, want, total)
				}
				// The page along the index, when the walk holds it, and the same taken as a
				// condition on the device alone, so that the unbounded walk is tried too.
				w := And(q.Where...)
				for _, byDevice := range []bool{false, true} {
					along, _, held, err := db.pageAlong(ctx, CommandLogs, w.SQL, w.Args, True, q, total, byDevice)
					if err != nil {
						t.Fatal(err)
					}
					alongs[held]++
					if held && !slices.Equal(along, want) {
						t.Errorf("%s, %s, offset %d, along %s (by device %v): %v, want %v", spec, where.SQL, offset, order[0].Index, byDevice, along, want)
					}
				}
			}
			// A walk by cursor meets every log once, in order.
			walked := walkByCursor(t, db, Query{Model: TypeCommandLog, Where: []Expr{where}, Order: order, Limit: 50}, total)
			if !slices.Equal(walked, all) {
				t.Errorf("%s, %s: the walk by cursor met %d logs, want the %d in order", spec, where.SQL, len(walked), len(all))
			}
		}
	}
	if alongs[true] == 0 || alongs[false] == 0 {
		t.Errorf("pages the walk along the index held / did not: %d / %d, want some of each", alongs[true], alongs[false])
	}
}

// walkByCursor walks q's list page by page by cursor (Keyed), for a list of total
// logs, and returns every log it met in order.
func walkByCursor(t *testing.T, db *DB, q Query, total int) []int64 {
	t.Helper()
	q.Keyed = true
	var walked []int64
	for range total/q.Limit + 2 {
		ids, _, next, err := db.ListKeyed(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, ids...)
		if next == nil {
			break
		}
		q.After = next
	}
	return walked
}

// TestLogUserCounters checks the per-user counters against a count of the logs (after
// bulk and single inserts, deletes, updates, a deleted device and a deleted user), and
// the counts of lists filtered by user, user name and outcome, within each viewer's
// condition, against a count over the logs.
func TestLogUserCounters(t *testing.T) {
	db, wheres := hoursFixture(t)
	ctx := context.Background()
	name := "gone"
	uid, err := db.CreateUser(ctx, UserInput{Username: &name}, All)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := db.CreateLog(ctx, Values{"command_name": "cmd-1", "device_name": "dev00", "user": uid, "username": name,
			"success": i%3 > 0, "created": time.Date(2026, 4, 30, 1, i, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if _, err := db.CreateLog(ctx, Values{"command_name": "cmd-1", "device_name": "dev00", "user": uid, "username": name,
			"success": true, "created": time.Date(2026, 4, 30, 2, i, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
	}
	// A second user keeps theirs.
	kept := "kept"
	kid, err := db.CreateUser(ctx, UserInput{Username: &kept}, All)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateLog(ctx, Values{"command_name": "cmd-2", "device_name": "dev01", "user": kid, "username": kept,
		"success": false, "created": time.Date(2026, 4, 30, 3, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, Users, uid); err != nil {
		t.Fatal(err)
	}
	read := func(query string) [][5]any {
		return plainRows(t, db, func(r *sql.Rows) (v [5]any, err error) { return v, r.Scan(&v[0], &v[1], &v[2], &v[3], &v[4]) }, query)
	}
	got := read(`SELECT device_id, user_id, username, success, total FROM command_log_user_counts ORDER BY 1, 2, 3, 4`)
	want := read(`SELECT device_id, user_id, username, success, count(*) FROM command_logs GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`)
	if len(want) < 10 || !reflect.DeepEqual(got, want) {
		t.Errorf("per-user counters (%d rows) differ from the logs (%d rows):\n got %v\nwant %v", len(got), len(want), got, want)
	}
	conds := map[string][]string{"user_id": {fmt.Sprint(kid)}, "username": {"u1"}, "success": {"false"}, "username__n": {"u0"}}
	var filters []Expr
	for key, vals := range conds {
		e, err := CommandLogs.FilterExpr(key, vals)
		if err != nil {
			t.Fatal(err)
		}
		filters = append(filters, e)
	}
	filters = append(filters, Expr{SQL: "t.user_id IS NULL"}, And(filters[1], filters[2]))
	created, err := CommandLogs.FilterExpr("created__gte", []string{"2026-04-30T20:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	for _, where := range wheres {
		for _, f := range filters {
			cond := And(where, f)
			var want int
			if err := db.r.QueryRow(`SELECT count(*) FROM command_logs t WHERE `+cond.SQL, cond.Args...).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if n, ok := db.countByUser(ctx, db.r, cond); !ok || n != want {
				t.Errorf("%s: counted %d from the counters (%v), want %d", cond.SQL, n, ok, want)
			}
			if _, n, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: []Expr{where, f}, Limit: 5}); err != nil || n != want {
				t.Errorf("%s: list count %d (%v), want %d", cond.SQL, n, err, want)
			}
		}
		if _, ok := db.countByUser(ctx, db.r, And(where, created)); ok {
			t.Errorf("%s: a condition on created was counted from the per-user counters", where.SQL)
		}
	}
}
