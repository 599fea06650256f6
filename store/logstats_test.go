package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestLogStatisticsByDeviceAgree checks that statistics and list counts summed from the
// per-device counters equal what the queries over the logs compute, for random
// constraints on the device (and, falling back, on other columns), after single inserts,
// bulk inserts, deletes and a deleted device whose logs lose their device.
func TestLogStatisticsByDeviceAgree(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	id := mustID[int64](t)
	var sites, platforms, devices []int64
	for i := range 3 {
		sites = append(sites, id(db.Create(ctx, Sites, Values{"name": fmt.Sprintf("S%d", i), "slug": fmt.Sprintf("s%d", i)}, All)))
		platforms = append(platforms, id(db.Create(ctx, Platforms, Values{"name": fmt.Sprintf("P%d", i), "slug": fmt.Sprintf("p%d", i)}, All)))
	}
	for i := range 12 {
		devices = append(devices, id(db.Create(ctx, Devices, Values{"name": fmt.Sprintf("dev%02d", i), "site": sites[i%3],
			"platform": platforms[i%2]}, All)))
	}
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(3, 4))
	msgs := []string{"% Invalid input", "Timed out", "Auth failed"}
	mk := func() Values {
		d := rng.IntN(len(devices))
		v := Values{"command_name": fmt.Sprintf("cmd-%d", rng.IntN(8)), "device": devices[d], "device_name": fmt.Sprintf("dev%02d", d),
			"username": "u", "success": rng.IntN(4) > 0, "created": now.Add(-time.Duration(rng.IntN(72*60)) * time.Minute)}
		if !v["success"].(bool) {
			v["error_message"] = msgs[rng.IntN(len(msgs))]
		}
		return v
	}
	var bulk []Values
	for range 1500 {
		bulk = append(bulk, mk())
	}
	if err := db.InsertLogs(ctx, bulk); err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if _, err := db.CreateLog(ctx, mk()); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE id % 7 = 0`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, Devices, devices[4]); err != nil {
		t.Fatal(err)
	}
	constraints := []string{
		`{"device__site__slug": "s1"}`,
		`{"device__site__slug__in": ["s0", "s2"]}`,
		`{"device__platform__slug": "p1"}`,
		fmt.Sprintf(`{"device": %d}`, devices[2]),
		fmt.Sprintf(`{"device__in": [%d, %d, %d]}`, devices[1], devices[4], devices[7]),
		fmt.Sprintf(`{"device__n": [%d]}`, devices[3]),
		`{"device__isnull": true}`,
		`{"device__name__ic": "dev0"}`,
		`[{"device__site__slug": "s0"}, {"device__platform__slug": "p0"}]`,
		`{"device__site__slug": "nowhere"}`,
		// not by device alone: the queries over the logs answer these
		`{"success": false}`,
		`{"device__site__slug": "s1", "command_name": "cmd-3"}`,
		`[{"device__site__slug": "s2"}, {"username": "u"}]`,
	}
	for _, c := range constraints {
		where, err := CompileConstraints(CommandLogs, c, 1)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		got, err := db.LogStatistics(ctx, where, now)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		want := slowStats(t, db, where, now)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: statistics\n got %+v\nwant %+v", c, got, want)
		}
		_, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: []Expr{where}, Limit: 1})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if int64(total) != want.Total {
			t.Errorf("%s: list count %d, want %d", c, total, want.Total)
		}
		_, byDevice := db.logDevices(ctx, db.r, where)
		if wantFast := c[0] == '[' && c != `[{"device__site__slug": "s2"}, {"username": "u"}]` || c[0] == '{' && c != `{"success": false}` &&
			c != `{"device__site__slug": "s1", "command_name": "cmd-3"}`; byDevice != wantFast {
			t.Errorf("%s: answered from the device counters: %v, want %v", c, byDevice, wantFast)
		}
	}
}

// slowStats is LogStatistics through the queries over the logs.
func slowStats(t *testing.T, db *DB, where Expr, now time.Time) LogStats {
	t.Helper()
	ctx := context.Background()
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var st LogStats
	if err := scopedStats(ctx, tx, where, &st); err != nil {
		t.Fatal(err)
	}
	since := Stamp(now.Add(-24 * time.Hour))
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(success), 0) FROM command_logs t WHERE t.created >= ? AND (`+where.SQL+`)`,
		append([]any{since}, where.Args...)...).Scan(&st.Last24h.Total, &st.Last24h.Successful); err != nil {
		t.Fatal(err)
	}
	st.Last24h.Failed = st.Last24h.Total - st.Last24h.Successful
	if st.Total > 0 {
		st.SuccessRate = float64(int64(float64(st.Successful)*10000/float64(st.Total)+0.5)) / 100
	}
	return st
}

// TestDeviceSumsFollowWrites checks that the list count of logs confined to some devices,
// kept between pages, follows every committed write: a log added through the queue, logs
// deleted, and a log added by another process on the same file (the CLI). And that a
// page asked again with nothing written takes the kept sum.
func TestDeviceSumsFollowWrites(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	devs := siteDevices(t, db, 3)
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	mk := func(d int) Values { return deviceLog(devs, d, now) }
	var bulk []Values
	for i := range 30 {
		bulk = append(bulk, mk(i%3))
	}
	if err := db.InsertLogs(ctx, bulk); err != nil {
		t.Fatal(err)
	}
	where, err := CompileConstraints(CommandLogs, fmt.Sprintf(`{"device__in": [%d, %d]}`, devs[0], devs[1]), 1)
	if err != nil {
		t.Fatal(err)
	}
	count := func(step string, want int) {
		t.Helper()
		for range 2 { // the second is the next page's count, from what the first kept
			_, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: []Expr{where}, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if total != want {
				t.Fatalf("%s: count %d, want %d", step, total, want)
			}
		}
		db.sums.mu.Lock()
		kept := len(db.sums.entries)
		db.sums.mu.Unlock()
		if kept != 1 {
			t.Fatalf("%s: %d sums kept, want the one asked", step, kept)
		}
	}
	count("first", 20)
	if _, err := db.CreateLog(ctx, mk(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateLog(ctx, mk(2)); err != nil {
		t.Fatal(err)
	}
	count("after adding a log of a device in the set and one outside", 21)
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE device_id = ? AND id IN (SELECT id FROM command_logs WHERE device_id = ? LIMIT 4)`,
			devs[1], devs[1])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	count("after deleting four", 17)
	addLogFromOutside(t, db, devs[1], "")
	count("after another process added one", 18)
}

// addLogFromOutside adds a copy of one of device's logs through a connection of its own,
// as another process writing to the file would, created at created ("" keeps the
// copied log's).
func addLogFromOutside(t *testing.T, db *DB, device int64, created string) {
	t.Helper()
	other, err := sql.Open("sqlite", db.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`INSERT INTO command_logs (command_name, device_id, device_name, username, success,
		execution_time, created, last_updated) SELECT command_name, device_id, device_name, username, success, execution_time,
		coalesce(nullif(?, ''), created), last_updated FROM command_logs WHERE device_id = ? LIMIT 1`, created, device); err != nil {
		t.Fatal(err)
	}
}
