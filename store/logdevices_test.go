package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestLogDevicesFollowMoves holds every log's device, then changes the logs in each way
// that could make what is held wrong: what is held must either agree with the table,
// log by log, as a reader's snapshot sees it, or be given up until read again.
func TestLogDevicesFollowMoves(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fieldkit.db")
	db := searchFixture(t, path)
	site := plainIDs(t, db, `SELECT id FROM sites`)[0]
	for i := range 3 {
		mustID[int64](t)(db.Create(ctx, Devices, Values{"name": fmt.Sprintf("moved%d", i), "site": site}, All))
	}
	d := plainIDs(t, db, `SELECT id FROM devices ORDER BY id`)
	add := func(db *DB, n int, device any) {
		t.Helper()
		for i := range n {
			v := Values{"command_name": "show version", "device_name": "r1", "username": "u", "success": i%3 > 0,
				"output": fmt.Sprintf("Interface Gi0/%d is up", i), "created": time.Date(2026, 6, 1, 0, 0, i, 0, time.UTC)}
			if device != nil {
				v["device"] = device
			}
			if _, err := db.CreateLog(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(when string, held bool) {
		t.Helper()
		if got := checkHeld(t, db, when); got != held {
			t.Fatalf("%s: held %v, want %v", when, got, held)
		}
	}
	check("nothing read", false)
	if err := db.ReadLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	check("read", true)

	add(db, 20, d[1])
	add(db, 5, nil)
	check("new logs", true)

	// Another process writes logs: they come after the newest held too.
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	add(other, 7, d[2])
	other.Close()
	check("another process's logs", true)

	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := db.w.Exec(query, args...); err != nil {
			t.Fatal(err)
		}
	}
	reread := func(when string) {
		t.Helper()
		check(when, false)
		if err := db.ReadLogDevices(ctx); err != nil {
			t.Fatal(err)
		}
		check(when+", read again", true)
	}
	// The newest log deleted: SQLite gives its id to the next log, of another device.
	exec(`DELETE FROM command_logs WHERE id = (SELECT max(id) FROM command_logs)`)
	add(db, 1, d[0])
	reread("newest deleted, its id given again")

	// A log written below the newest, into a gap.
	var gap int64
	if err := db.r.QueryRow(`SELECT min(id) + 1 FROM command_logs a
		WHERE NOT EXISTS (SELECT 1 FROM command_logs b WHERE b.id = a.id + 1) AND a.id < (SELECT max(id) FROM command_logs)`).Scan(&gap); err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO command_logs (id, command_name, device_id, device_name, username, success, execution_time, created, last_updated)
		SELECT ?, command_name, ?, device_name, username, success, execution_time, created, last_updated FROM command_logs LIMIT 1`, gap, d[2])
	reread("a log inserted below the newest")

	exec(`UPDATE command_logs SET device_id = ? WHERE id = (SELECT min(id) FROM command_logs)`, d[2])
	reread("a log's device changed")

	exec(`UPDATE command_logs SET success = NOT success WHERE id = (SELECT min(id) FROM command_logs)`)
	reread("a log's outcome changed")

	if err := db.Delete(ctx, Devices, d[0]); err != nil {
		t.Fatal(err)
	}
	reread("a device deleted")

	// A prune: the oldest deleted, nothing moved; the next catch-up lets the front go.
	var newest int64
	if err := db.r.QueryRow(`SELECT max(id) FROM command_logs`).Scan(&newest); err != nil {
		t.Fatal(err)
	}
	exec(`DELETE FROM command_logs WHERE id < ?`, newest-40)
	check("a prune", true)
	add(db, 3, d[1])
	check("a prune, then new logs", true)
	if base := db.devices.cur.Load().base; base < newest-40 {
		t.Errorf("after a prune, held from %d; the oldest log is %d", base, newest-40)
	}

	// The job follows what is held: the new logs alone when nothing moved, every log
	// after a move.
	add(db, 2, d[2])
	held := db.devices.cur.Load()
	if err := db.followLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	if now := db.devices.cur.Load(); now.moves != held.moves || now.base != held.base || now.upto <= held.upto {
		t.Errorf("followed new logs: held %d..%d at %d, before %d..%d at %d", now.base, now.upto, now.moves, held.base, held.upto, held.moves)
	}
	check("followed", true)
	exec(`UPDATE command_logs SET device_id = ? WHERE id = (SELECT max(id) FROM command_logs)`, d[1])
	if err := db.followLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	check("followed after a move", true)

	// More new logs than a count reads inline: not held for that count, held after a
	// read.
	db.search.keysInline = 2
	add(db, 3, d[2])
	tx := readTx(t, db)
	if keys, err := db.devices.at(ctx, tx, db.search.keysInline); err != nil || keys != nil {
		t.Errorf("3 logs to read past an inline bound of 2: held %v (%v)", keys != nil, err)
	}
	tx.Rollback()
}

// TestLogDevicesConcurrent has readers catch up what is held while a writer adds logs:
// each sees what is held agree with its own snapshot (run it with -race).
func TestLogDevicesConcurrent(t *testing.T) {
	ctx := context.Background()
	db := searchFixture(t, filepath.Join(t.TempDir(), "fieldkit.db"))
	d := plainIDs(t, db, `SELECT id FROM devices ORDER BY id`)
	if err := db.ReadLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		var err error
		for i := range 200 {
			v := Values{"command_name": "show clock", "device_name": "r", "username": "u", "success": true,
				"created": time.Date(2026, 6, 2, 0, 0, i, 0, time.UTC)}
			if i%3 > 0 {
				v["device"] = d[i%len(d)]
			}
			if _, err = db.CreateLog(ctx, v); err != nil {
				break
			}
		}
		done <- err
	}()
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			for i := 0; i < 40; i++ {
				if !checkHeld(t, db, fmt.Sprintf("reader %d, pass %d", r, i)) {
					t.Errorf("reader %d: not held", r)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !checkHeld(t, db, "after") {
		t.Error("not held after")
	}
}

// checkHeld compares what db holds, caught up in a reader's snapshot, with the logs in
// that snapshot, and the counts by device it gives with those of the table; it says
// whether anything was held.
func checkHeld(t *testing.T, db *DB, when string) bool {
	t.Helper()
	ctx := context.Background()
	tx := readTx(t, db)
	defer tx.Rollback()
	keys, err := db.devices.at(ctx, tx, 1<<20)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if keys == nil {
		return false
	}
	rows, err := tx.Query(`SELECT id, coalesce(device_id, 0), success FROM command_logs`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]int64{}
	for rows.Next() {
		var id, key int64
		var ok bool
		if err := rows.Scan(&id, &key, &ok); err != nil {
			t.Fatal(err)
		}
		want[key]++
		held := key << 1
		if !ok {
			want[failedKey(key)]++
			held |= 1
		}
		if id < keys.base || id > keys.upto || int64(keys.keys[id-keys.base]) != held {
			t.Fatalf("%s: log %d of device %d (success %v) not held so (held %d..%d)", when, id, key, ok, keys.base, keys.upto)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if keys.held() {
		checkHeldCols(t, tx, keys, when)
	}
	got, ok, err := db.devices.counts(ctx, tx, keys, `SELECT id FROM command_logs`, nil, false)
	if err != nil || !ok || !maps.Equal(got, want) {
		t.Fatalf("%s: counts %v %v %v, want %v", when, got, ok, err, want)
	}
	return true
}

// checkHeldCols fails unless the held columns of keys are every log's in tx.
func checkHeldCols(t *testing.T, tx *sql.Tx, keys *heldKeys, when string) {
	t.Helper()
	rows, err := tx.Query(`SELECT id, execution_duration, coalesce(command_id, 0), coalesce(user_id, 0), username FROM command_logs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, command, user int64
		var dur float64
		var name string
		if err := rows.Scan(&id, &dur, &command, &user, &name); err != nil {
			t.Fatal(err)
		}
		i := id - keys.base
		if c := keys.classes.list[keys.cls[i]]; keys.dur[i] != dur || int64(keys.cmd[i]) != command || c != (userClass{user, name}) {
			t.Fatalf("%s: log %d (%v, %d, %d %q) held as %v, %d, %v", when, id, dur, command, user, name, keys.dur[i], keys.cmd[i], c)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// readTx is a read transaction on db's readers, with its snapshot taken.
func readTx(t *testing.T, db *DB) *sql.Tx {
	t.Helper()
	tx, err := db.r.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM command_log_moves`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestHeldKeysRoom checks that the held keys and columns, once read, take the next logs
// in place: the first catch-ups after a read append to the same arrays rather than copy
// every log held (100 MB at five million logs, inside the request that caught up), and
// what they hold is still the table's.
func TestHeldKeysRoom(t *testing.T) {
	ctx := context.Background()
	db, devices, users, commands := heldFixture(t)
	if err := db.ReadLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	before := db.devices.cur.Load()
	if before == nil || !before.held() {
		t.Fatal("nothing held")
	}
	addHeldLogs(t, db, 700, 40, devices, users, commands)
	if err := db.followLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	after := db.devices.cur.Load()
	if got, want := len(after.keys), len(before.keys)+40; got != want {
		t.Fatalf("%d logs held after the catch-up, want %d", got, want)
	}
	if &after.keys[0] != &before.keys[0] || &after.dur[0] != &before.dur[0] || &after.cmd[0] != &before.cmd[0] ||
		&after.durb[0] != &before.durb[0] || &after.cls[0] != &before.cls[0] {
		t.Error("the catch-up copied the held keys or columns")
	}
	if !checkHeld(t, db, "caught up") {
		t.Error("nothing held after the catch-up")
	}
}

// TestWarmReaders checks that WarmReaders leaves every connection of the readers' pool
// and of the count helpers open and idle, so that the first requests after start-up do
// not open them.
func TestWarmReaders(t *testing.T) {
	db := testDB(t)
	if err := db.WarmReaders(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*sql.DB{"readers": db.r.DB, "helpers": db.help.db} {
		st := p.Stats()
		if st.OpenConnections != st.MaxOpenConnections || st.Idle != st.MaxOpenConnections {
			t.Errorf("%s: %d open, %d idle, want %d of each", name, st.OpenConnections, st.Idle, st.MaxOpenConnections)
		}
	}
}

// TestPagePool checks that SQLite's page caches take their pages from the process's
// pool (pagecache.go) rather than from malloc: installed before any connection, and
// holding the pages a read brought in.
func TestPagePool(t *testing.T) {
	if pagePoolErr != nil {
		t.Fatal(pagePoolErr)
	}
	db := testDB(t)
	var n int
	if err := db.r.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("reading the schema: %d tables, %v", n, err)
	}
	if slots, _ := pagePoolUse(); slots == 0 {
		t.Error("no page cache slot is in use after a read")
	}
}
