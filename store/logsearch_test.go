package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A database upgraded with logs in it has them indexed by the migration: ?q= finds
// the logs written before the search existed.
func TestLogSearchIndexesExistingLogs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fieldkit.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := db.InsertLogs(ctx, []Values{
		{"command_name": "show version", "device_name": "edge-router-7", "username": "alice", "success": true,
			"output": "Software Version 17.9.4a", "created": at},
		{"command_name": "show clock", "device_name": "core-1", "username": "bob", "success": false,
			"error_message": "authentication failed", "created": at},
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Take the database back to before the migration: no indexes, no new columns.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TRIGGER command_logs_fts_ai`, `DROP TRIGGER command_logs_fts_ad`, `DROP TRIGGER command_logs_fts_au`,
		`DROP TABLE command_logs_text`, `DROP INDEX command_logs_source`,
		`ALTER TABLE command_logs DROP COLUMN sent_command`, `ALTER TABLE command_logs DROP COLUMN variables`,
		`ALTER TABLE command_logs DROP COLUMN credential_set_id`, `ALTER TABLE command_logs DROP COLUMN credential_set_name`,
		`ALTER TABLE command_logs DROP COLUMN source`, `ALTER TABLE command_logs DROP COLUMN client_address`,
		`DELETE FROM schema_migrations WHERE version IN ('0016_log_audit', '0058_log_insert')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The logs written before read as such: nothing sent recorded, no variables, set or
	// source, no address; the rest of each log is as it was.
	ids, _, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Limit: 10})
	if err != nil || len(ids) != 2 {
		t.Fatalf("logs after the upgrade: %v %v", ids, err)
	}
	rows, err := db.Rows(ctx, CommandLogs, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r["sent_command"] != "" || r["variables"] != nil || r["credential_set"] != nil || r["source"] != nil ||
			r["client_address"] != "" || (r["output"] == "" && r["error_message"] == "") {
			t.Errorf("a log written before the upgrade reads %v", r)
		}
	}
	for q, want := range map[string]int{"17.9.4a": 1, "router-7": 1, "authentication": 1, "ALICE": 1, "version": 1, "nothing": 0} {
		ids, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: []Expr{CommandLogs.Search(q)}, Limit: 10})
		if err != nil || total != want || len(ids) != want {
			t.Errorf("q=%q: %v %d %v, want %d", q, ids, total, err, want)
		}
	}
}

// TestLogSearchWaysAgree compares every way of reading a search's page, with its count
// kept and added to, against the plain match over every log: for every log and for
// viewers of some devices, both orders, several offsets and a cursor, as logs are
// added after a kept count, deleted, and a device is deleted.
//
// It runs twice: with every log's device held in memory (ReadLogDevices, as the
// search_counts job does), read again after logs move as the job would, and walks'
// windows of ids smaller than the walks; and without, each match read for its device,
// the windows holding every log.
func TestLogSearchWaysAgree(t *testing.T) {
	t.Run("devices held", func(t *testing.T) { testLogSearchWays(t, true) })
	if testing.Short() {
		return // the race detector's run: the held devices, whose catch-ups run beside the counts
	}
	t.Run("devices read", func(t *testing.T) { testLogSearchWays(t, false) })
}

func testLogSearchWays(t *testing.T, held bool) {
	db := searchFixture(t, filepath.Join(t.TempDir(), "fieldkit.db"))
	ctx := context.Background()
	readDevices := func() {
		t.Helper()
		if !held {
			db.search.keysInline = -1
			return
		}
		if err := db.ReadLogDevices(ctx); err != nil {
			t.Fatal(err)
		}
	}
	readDevices()
	if held {
		// Walks test the logs past their window's ids each against the word index: the
		// windows are small and may spread over any ids.
		db.search.windowLogs, db.search.windowSpread = 20, 1<<40
	}
	// First with nothing kept, then every count kept.
	db.search.keep = 1 << 40
	// Every count from the word index in halves, on a helper, even on one core.
	db.search.halvesMin, db.help.slots = 1, make(chan struct{}, 1)
	// One segment: testing each log against the word index seeks into every segment.
	if _, err := db.w.Exec(`INSERT INTO command_logs_text (command_logs_text) VALUES ('optimize')`); err != nil {
		t.Fatal(err)
	}
	d := plainIDs(t, db, `SELECT id FROM devices ORDER BY id`)
	var scopes []Expr
	constraints := []string{`{}`, `{"device__site__slug": "s"}`, fmt.Sprintf(`{"device": %d}`, d[0]),
		`{"device__isnull": true}`, fmt.Sprintf(`[{"device": %d}, {"device__isnull": true}]`, d[1])}
	if testing.Short() {
		constraints = constraints[:2]
	}
	for _, c := range constraints {
		where, err := CompileConstraints(CommandLogs, c, 1)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		scopes = append(scopes, where)
	}
	// Testing each log against the word index is slow on a small index of many segments:
	// the walk that does it gets the first queries only.
	// "Invalid" is in a quarter of the logs written last, in created order: deep enough
	// for a page past its start to be read from them (tailPage).
	queries := []string{"Interface", "is UP", "command 042", "ÉCH", "case 7", "Gi0/4 is", "dev-123", "核心-", "nothing at all", "Invalid"}
	walked := 5 // the first queries, which the walk that tests each log gets
	orders, offsets := []bool{true, false}, func(n int) []int { return []int{0, 3, n / 2, n - 3} }
	if testing.Short() {
		// A word in every log, a name and a phrase of a few logs, newest first, from the
		// start: a few seconds under the race detector rather than many minutes.
		queries, orders, offsets = []string{"Interface", "command 042", "case 7", "Invalid"}, []bool{true}, func(int) []int { return []int{0, 3} }
		walked = 2
	}
	compare := func(when string) {
		t.Helper()
		for _, q := range queries {
			for _, scope := range scopes {
				for _, desc := range orders {
					dir := "ASC"
					if desc {
						dir = "DESC"
					}
					all := And(scope, logSearch(q))
					want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+all.SQL+` ORDER BY t.created `+dir+`, t.id `+dir, all.Args...)
					// The names' newest logs are read whole, and given up after three logs.
					for _, w := range []struct {
						way       searchWay
						namedRows int64
					}{{searchByRow, 0}, {searchBySet, 0}, {searchFromSet, 0}, {searchByNamed, 1 << 40}, {searchByNamed, 3}, {searchByTail, 0}} {
						way := w.way
						if way == searchByRow && slices.Index(queries, q) >= walked {
							continue
						}
						db.search.way, db.search.namedRows = way, w.namedRows
						for _, offset := range offsets(len(want)) {
							if offset < 0 || (offset > 0 && offset >= len(want)) {
								continue
							}
							query := Query{Model: TypeCommandLog, Where: []Expr{scope, CommandLogs.Search(q)},
								Order: []Order{{SQL: "t.created", Desc: desc, NotNull: true}}, Limit: 5, Offset: offset, Keyed: true}
							got, n, next, err := db.ListKeyed(ctx, query)
							page := want[offset:min(offset+5, len(want))]
							if err != nil || n != len(want) || !slices.Equal(got, page) {
								t.Errorf("%s: q %q, scope %s, %s, way %d (%d), offset %d: %v, count %d (%v); want %v, count %d",
									when, q, scope.SQL, dir, way, w.namedRows, offset, got, n, err, page, len(want))
								continue
							}
							if next == nil {
								continue
							}
							// The page after this one by cursor.
							query.Offset, query.After = 0, next
							got, n, _, err = db.ListKeyed(ctx, query)
							page = want[offset+5 : min(offset+10, len(want))]
							if err != nil || n != len(want) || !slices.Equal(got, page) {
								t.Errorf("%s: q %q, scope %s, %s, way %d, after offset %d by cursor: %v, count %d (%v); want %v",
									when, q, scope.SQL, dir, way, offset, got, n, err, page)
							}
						}
					}
				}
			}
		}
		db.search.way, db.search.namedRows = searchByCost, 0
		// With an outcome filter: counted over the (device, outcome) pairs.
		for _, q := range queries {
			for _, scope := range scopes {
				for _, outcome := range []string{"true", "false"} {
					f, err := CommandLogs.FilterExpr("success", []string{outcome})
					if err != nil {
						t.Fatal(err)
					}
					all := And(scope, f, logSearch(q))
					want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+all.SQL+` ORDER BY t.created DESC, t.id DESC`, all.Args...)
					for _, offset := range []int{0, len(want) / 2} {
						query := Query{Model: TypeCommandLog, Where: []Expr{scope, f, CommandLogs.Search(q)},
							Order: []Order{{SQL: "t.created", Desc: true, NotNull: true}}, Limit: 5, Offset: offset}
						got, n, err := db.ListIDs(ctx, query)
						page := want[min(offset, len(want)):min(offset+5, len(want))]
						if err != nil || n != len(want) || !slices.Equal(got, page) {
							t.Errorf("%s: q %q, scope %s, success %s, offset %d: %v, count %d (%v); want %v, count %d",
								when, q, scope.SQL, outcome, offset, got, n, err, page, len(want))
						}
					}
				}
			}
		}
	}
	kept := func() int {
		// The pages' counts are kept after they answered.
		db.Settle()
		var n int
		if err := db.r.QueryRow(`SELECT count(*) FROM command_log_search_counts`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	compare("first")
	if kept() != 0 {
		t.Fatalf("few matches kept")
	}
	db.search.keep = 1
	compare("keeping")
	if kept() == 0 {
		t.Fatalf("no count kept")
	}
	var failedKept int
	if err := db.r.QueryRow(`SELECT count(*) FROM command_log_search_counts WHERE device_id <= ?`, searchCountFailed).Scan(&failedKept); err != nil || failedKept == 0 {
		t.Fatalf("no device's failed matches kept: %d (%v)", failedKept, err)
	}
	compare("from the kept counts")
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 150 {
		v := Values{"command_name": searchCommands[rng.IntN(len(searchCommands))], "device_name": searchDevices[rng.IntN(len(searchDevices))],
			"username": searchUsers[rng.IntN(len(searchUsers))], "success": i%4 > 0,
			"output": fmt.Sprintf("Interface Gi0/%d is up", rng.IntN(50)), "created": time.Date(2026, 5, 1, 0, 0, i, 0, time.UTC)}
		if i%3 > 0 {
			v["device"] = d[i%len(d)]
		}
		if i%4 == 0 {
			v["error_message"] = fmt.Sprintf("%% Invalid input (case %d)", rng.IntN(12))
		}
		if _, err := db.CreateLog(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	// Those logs are newer than every other, in created order: the first pages of a word
	// they hold are read from the word index's matches, highest id first.
	tailPages := db.tailPages.Load()
	compare("with logs after the kept counts")
	if db.tailPages.Load() == tailPages {
		t.Errorf("no page read from the logs in created order")
	}
	// A prune of the oldest logs keeps the counts, less the logs it deletes; not those
	// after every kept count, some of which are older than the cut.
	for i := range 6 {
		v := Values{"command_name": searchCommands[i], "device_name": searchDevices[i], "username": searchUsers[i%len(searchUsers)],
			"success": i%2 == 0, "output": fmt.Sprintf("Interface Gi0/%d is up, command 042", i),
			"created": time.Date(2026, 4, 30, 20+i, 0, 0, 0, time.UTC)}
		if i%3 > 0 {
			v["device"] = d[i%len(d)]
		}
		if _, err := db.CreateLog(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	before := kept()
	// In several transactions, each taking its logs off the counts. The fixture wrote
	// its logs in no created order, so each batch's ids spread over every id; a server
	// writes them as they run.
	db.search.pruneKeepBatch, db.search.windowSpread = 50, 1<<40
	if n, err := db.PruneLogs(ctx, time.Date(2026, 4, 30, 22, 30, 0, 0, time.UTC)); err != nil || n < 100 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if kept() < before/2 {
		t.Errorf("a prune dropped the kept counts: %d of %d left", kept(), before)
	}
	compare("after a prune")
	db.Settle()
	if _, err := db.w.Exec(`DELETE FROM command_logs WHERE id % 7 = 3`); err != nil {
		t.Fatal(err)
	}
	if kept() != 0 {
		t.Errorf("counts kept over deleted logs: %d", kept())
	}
	compare("after deletes")
	if err := db.Delete(ctx, Devices, d[0]); err != nil {
		t.Fatal(err)
	}
	compare("after a device's deletion")
	// Outcomes changed: the kept counts go, and the devices held are read again.
	if _, err := db.w.Exec(`UPDATE command_logs SET success = NOT success WHERE id % 9 = 4`); err != nil {
		t.Fatal(err)
	}
	compare("after outcomes changed")
	if held {
		readDevices()
		compare("with the devices read again")
	}
	if used := db.devices.used.Load(); held != (used > 0) {
		t.Errorf("devices held %v, counts taken from them: %d", held, used)
	}
	if db.help.split.Load() == 0 {
		t.Errorf("no count taken in halves")
	}
	// Every failed log holds "Invalid", every log "Interface": with the outcome that
	// keeps them, such a page is its list's own.
	if db.pairsDropped.Load() == 0 {
		t.Errorf("no search with an outcome filter read as its list's own")
	}
}

// A count taken in halves gives the count of the asking snapshot whatever is written
// while its helper starts: a log added after it is in neither half; a log deleted makes
// the helper's snapshot another, and the asking one counts both halves.
func TestLogSearchHalvesSnapshot(t *testing.T) {
	db := searchFixture(t, filepath.Join(t.TempDir(), "fieldkit.db"))
	ctx := context.Background()
	db.search.halvesMin, db.help.slots = 1, make(chan struct{}, 1)
	devices := plainIDs(t, db, `SELECT id FROM devices ORDER BY id`)
	list, _ := json.Marshal(devices[:2])
	const q = "case 7"
	count := func(devices string) int {
		t.Helper()
		var n int
		where := ""
		if devices != "" {
			where = ` AND device_id IN (SELECT value FROM json_each('` + devices + `'))`
		}
		if err := db.r.QueryRow(`SELECT count(*) FROM command_logs WHERE id IN (SELECT rowid FROM command_logs_text
			WHERE command_logs_text MATCH '"case" "7"')` + where).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		name, devices string
	}{{"every log", ""}, {"by device", string(list)}} {
		for _, w := range []struct {
			name  string
			write func()
			stale bool
		}{
			{"a log added", func() {
				if _, err := db.CreateLog(ctx, Values{"command_name": "show logging", "device": devices[0], "device_name": "edge-1",
					"username": "alice", "success": false, "output": "", "error_message": "% Invalid input (case 7)"}); err != nil {
					t.Error(err)
				}
			}, false},
			{"a log deleted", func() {
				if _, err := db.w.Exec(`DELETE FROM command_logs WHERE id = (SELECT max(rowid) FROM command_logs_text
					WHERE command_logs_text MATCH '"case" "7"')`); err != nil {
					t.Error(err)
				}
			}, true},
		} {
			// Deleting the newest log gives up the devices held.
			if err := db.ReadLogDevices(ctx); err != nil {
				t.Fatal(err)
			}
			want := count(c.devices)
			if want == 0 {
				t.Fatalf("no log matches %q", q)
			}
			split, stale := db.help.split.Load(), db.help.stale.Load()
			db.help.before = w.write
			got, _, err := db.countLogSearch(ctx, q, searchScope{devices: c.devices})
			db.help.before = nil
			if err != nil || got != want {
				t.Errorf("%s, %s: count %d (%v), want %d as it was asked", c.name, w.name, got, err, want)
			}
			if db.help.split.Load() != split+1 || (db.help.stale.Load() != stale) != w.stale {
				t.Errorf("%s, %s: %d counts in halves, %d stale; want one, stale %v", c.name, w.name,
					db.help.split.Load()-split, db.help.stale.Load()-stale, w.stale)
			}
			if after := count(c.devices); after == want {
				t.Fatalf("%s, %s: the write changed nothing", c.name, w.name)
			}
			if got, _, err := db.countLogSearch(ctx, q, searchScope{devices: c.devices}); err != nil || got != count(c.devices) {
				t.Errorf("%s, %s: count after %d (%v), want %d", c.name, w.name, got, err, count(c.devices))
			}
		}
	}
}

// A count read in a snapshot from before a log's deletion is not kept after it.
func TestLogSearchCountNotKeptOverDelete(t *testing.T) {
	db := searchFixture(t, filepath.Join(t.TempDir(), "fieldkit.db"))
	ctx := context.Background()
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := readSearchCount(ctx, tx, "Interface", searchCountAll)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := db.searchCountAfter(ctx, tx, "Interface", searchCountAll, s.upto, s.newest)
	tx.Rollback()
	if err != nil || tail[searchCountAll] == 0 {
		t.Fatalf("count %v %v", tail, err)
	}
	s.totals = tail
	if _, err := db.w.Exec(`DELETE FROM command_logs WHERE id = (SELECT max(id) FROM command_logs)`); err != nil {
		t.Fatal(err)
	}
	if err := db.keepSearchCount(ctx, "Interface", searchCountAll, s); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.r.QueryRow(`SELECT count(*) FROM command_log_search_counts`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d counts kept (%v) over a deleted log", n, err)
	}
	// Without the delete in between, it is kept.
	tx, _ = db.r.BeginTx(ctx, nil)
	s, _ = readSearchCount(ctx, tx, "Interface", searchCountAll)
	s.totals, _ = db.searchCountAfter(ctx, tx, "Interface", searchCountAll, s.upto, s.newest)
	tx.Rollback()
	if err := db.keepSearchCount(ctx, "Interface", searchCountAll, s); err != nil {
		t.Fatal(err)
	}
	var total int64
	if err := db.r.QueryRow(`SELECT total FROM command_log_search_counts WHERE q = 'Interface' AND device_id = -1`).Scan(&total); err != nil ||
		total != tail[searchCountAll]-1 {
		t.Errorf("kept %d (%v), want %d", total, err, tail[searchCountAll]-1)
	}
}

// TestLogSearchRowWindow tests every log against a search through logSearchRow with
// windows whose edges are matching logs, a single log, and none, with and without the
// names (without only when no name holds the search): each must select exactly the logs
// the plain search matches.
func TestLogSearchRowWindow(t *testing.T) {
	db := searchFixture(t, filepath.Join(t.TempDir(), "fieldkit.db"))
	for _, q := range []string{"command 042", "Invalid", "ÉCH", "dev-123"} {
		plain := logSearch(q)
		want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+plain.SQL+` ORDER BY t.id`, plain.Args...)
		if len(want) < 2 {
			t.Fatalf("q %q: %d matches; the fixture should hold more", q, len(want))
		}
		first, last := want[0], want[len(want)-1]
		mid := want[len(want)/2]
		named, err := searchNamed(context.Background(), db.r, q)
		if err != nil {
			t.Fatal(err)
		}
		windows := [][2]int64{noWindow, {first, last}, {mid, mid}, {first, mid}, {mid, last}, {first + 1, last - 1}, {0, 1 << 40}}
		if testing.Short() {
			windows = windows[:3] // the race detector's run
		}
		for _, w := range windows {
			// The names are tested when some name holds q, and may be either way else.
			for _, test := range []bool{named, true} {
				row := logSearchRow(q, w, test)
				got := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+row.SQL+` ORDER BY t.id`, row.Args...)
				if !slices.Equal(got, want) {
					t.Errorf("q %q, window %v, names tested %v: %d logs, want %d", q, w, test, len(got), len(want))
				}
			}
		}
	}
}

// namedNewest finds, for each name that holds a search, the first logs of the viewer's
// devices in created order, as many as asked for, and gives up when reading them would
// pass its budget.
func TestLogSearchNamedNewest(t *testing.T) {
	db := searchFixture(t, filepath.Join(t.TempDir(), "fieldkit.db"))
	ctx := context.Background()
	d := plainIDs(t, db, `SELECT id FROM devices ORDER BY id`)
	// A command name, device names, a user name, and a word in no name.
	for _, q := range []string{"command 042", "dev-123", "ÉCH", "alice", "Interface"} {
		for _, keys := range [][]int64{{d[0]}, {0}, {d[0], 0}} {
			for _, desc := range []bool{true, false} {
				dir := orderDir(desc)
				// Each name's logs of the devices, in order, cut to reach.
				const reach = 4
				var want []int64
				var read int64
				for kind, col := range logNameColumns {
					for _, name := range plainRows(t, db, func(r *sql.Rows) (s string, err error) { return s, r.Scan(&s) }, `SELECT name FROM command_log_names WHERE kind = ? AND id IN
						(SELECT rowid FROM command_log_names_fts WHERE command_log_names_fts MATCH ?)`, kind, ftsPhrase(q)) {
						var found int
						for _, r := range plainRows(t, db, func(r *sql.Rows) (p [2]int64, err error) { return p, r.Scan(&p[0], &p[1]) }, `SELECT id, coalesce(device_id, 0) FROM command_logs WHERE `+col+` = ?
							ORDER BY created `+dir+`, id `+dir, name) {
							if found == reach {
								break
							}
							read++
							if slices.Contains(keys, r[1]) {
								want, found = append(want, r[0]), found+1
							}
						}
					}
				}
				got, ok, err := db.namedNewest(ctx, q, keys, desc, True, reach, 1<<40)
				slices.Sort(got)
				slices.Sort(want)
				if err != nil || !ok || !slices.Equal(got, want) {
					t.Errorf("q %q, devices %v, %s: %v %v %v, want %v", q, keys, dir, got, ok, err, want)
				}
				if (q == "Interface") != (len(want) == 0) {
					t.Errorf("q %q: names' logs %v", q, want)
				}
				if read == 0 {
					continue
				}
				// Within the logs it reads, and one short of them.
				if _, ok, err := db.namedNewest(ctx, q, keys, desc, True, reach, read); err != nil || !ok {
					t.Errorf("q %q, devices %v, %s, budget %d: %v %v", q, keys, dir, read, ok, err)
				}
				if got, ok, err := db.namedNewest(ctx, q, keys, desc, True, reach, read-1); err != nil || ok {
					t.Errorf("q %q, devices %v, %s, budget %d: %v %v %v, want given up", q, keys, dir, read-1, got, ok, err)
				}
			}
		}
	}
}

// A page's count is kept after the page is answered, and closing the database waits
// for it: the count is in the file when it is opened again.
func TestLogSearchKeptAfterAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fieldkit.db")
	db := searchFixture(t, path)
	ctx := context.Background()
	db.search.keep = 1
	// The keep starts only once the close is under way.
	db.keeps.before = func() { time.Sleep(100 * time.Millisecond) }
	n, _, err := db.countLogSearch(ctx, "Interface", searchScope{})
	if err != nil || n == 0 {
		t.Fatalf("count %d %v", n, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var total int
	if err := db.r.QueryRow(`SELECT total FROM command_log_search_counts WHERE q = 'Interface' AND device_id = ?`,
		searchCountAll).Scan(&total); err != nil || total != n {
		t.Errorf("kept %d (%v), want %d", total, err, n)
	}
}

// TestLogSearchOrderedByColumn compares searches ordered by a column with the plain
// query. A search every log of the list matches is answered as the list itself, in any
// order: the search is dropped from the page's conditions.
func TestLogSearchOrderedByColumn(t *testing.T) {
	db := searchFixture(t, filepath.Join(t.TempDir(), "fieldkit.db"))
	ctx := context.Background()
	d := plainIDs(t, db, `SELECT id FROM devices ORDER BY id`)
	var scopes []Expr
	for _, c := range []string{`{}`, `{"device__site__slug": "s"}`, fmt.Sprintf(`{"device": %d}`, d[0])} {
		where, err := CompileConstraints(CommandLogs, c, 1)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		scopes = append(scopes, where)
	}
	dropped := 0
	// First counted and paged from the devices' own sets, then with the devices held: a
	// viewer's matches are picked from every log's (pickSearch).
	for _, held := range []bool{false, true} {
		if held {
			if err := db.ReadLogDevices(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for _, spec := range []string{"username", "-success", "execution_duration", "-id", "created"} {
			order, err := CommandLogs.Ordering(spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"Interface", "command 042", "case 7"} {
				for _, scope := range scopes {
					all := And(scope, logSearch(q))
					want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+all.SQL+` ORDER BY `+orderBy(keyTerms(order)), all.Args...)
					query := Query{Model: TypeCommandLog, Where: []Expr{scope, CommandLogs.Search(q)}, Order: order, Limit: 5}
					for _, offset := range []int{0, len(want) / 2} {
						query.Offset = offset
						got, n, err := db.ListIDs(ctx, query)
						page := want[min(offset, len(want)):min(offset+5, len(want))]
						if err != nil || n != len(want) || fmt.Sprint(got) != fmt.Sprint(page) {
							t.Errorf("held %v: q %q, %s, ordering %s, offset %d: %v of %d (%v), want %v of %d", held, q, scope.SQL, spec, offset, got, n, err, page, len(want))
						}
					}
					where, n, counted, err := db.planLogSearch(ctx, query)
					if err != nil || !counted || n != len(want) {
						t.Errorf("q %q, %s: planned count %d (%v, %v), want %d", q, scope.SQL, n, counted, err, len(want))
					}
					if And(where...).SQL == scope.SQL {
						dropped++
						if visible := len(plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+scope.SQL, scope.Args...)); visible != len(want) {
							t.Errorf("q %q, %s: the search was dropped, but it matches %d of %d logs", q, scope.SQL, len(want), visible)
						}
					}
				}
			}
		}
	}
	if dropped < 2*5*len(scopes) {
		t.Errorf("the search was dropped %d times, want every time it matched every log (%d)", dropped, 2*5*len(scopes))
	}
	if db.devices.picked.Load() == 0 {
		t.Errorf("no page's matches picked by the devices held")
	}
}
