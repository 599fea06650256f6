package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// heldFixture is a store of logs written in created order, over four devices (and
// none), three commands (and none), three users and a deleted one's name, with
// durations that tie often; its devices are in the site "s".
func heldFixture(t *testing.T) (*DB, []int64, []int64, []int64) {
	t.Helper()
	ctx := context.Background()
	db := testDB(t)
	devices := siteDevices(t, db, 4)
	var users, commands []int64
	for _, name := range []string{"alice", "bob", "carol"} {
		id, err := db.CreateUser(ctx, UserInput{Username: &name}, All)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, id)
	}
	for i := range 3 {
		commands = append(commands, mustID[int64](t)(db.Create(ctx, Commands, Values{"name": fmt.Sprintf("c%d", i),
			"command": fmt.Sprintf("show c%d", i)}, All)))
	}
	addHeldLogs(t, db, 0, 700, devices, users, commands)
	return db, devices, users, commands
}

// heldEverywhere makes every page the held columns can find be found there (not
// walked), in parts of a few logs each, until the test ends.
func heldEverywhere(t *testing.T) {
	t.Helper()
	cost, part, created := heldWalkCost, heldPartMin, heldCreatedFrom
	t.Cleanup(func() { heldWalkCost, heldPartMin, heldCreatedFrom = cost, part, created })
	heldWalkCost, heldPartMin, heldCreatedFrom = 1e12, 64, 0
}

// addHeldLogs writes n logs from the (from)th on, 600 in one transaction and the rest
// one by one, a minute apart.
func addHeldLogs(t *testing.T, db *DB, from, n int, devices, users, commands []int64) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(from), 7))
	names := []string{"alice", "bob", "carol"}
	var bulk []Values
	for i := from; i < from+n; i++ {
		v := Values{"command_name": "show c", "device_name": "d", "username": "ghost", "success": rng.IntN(3) > 0,
			"created": time.Date(2026, 5, 1, 0, i, 0, 0, time.UTC), "output": fmt.Sprintf("Interface Gi0/%d is up", rng.IntN(20))}
		if !v["success"].(bool) {
			v["error_message"] = fmt.Sprintf("%% Invalid input (case %d)", rng.IntN(5))
		}
		if j := rng.IntN(len(devices) + 1); j < len(devices) {
			v["device"] = devices[j]
		}
		if j := rng.IntN(len(users) + 1); j < len(users) {
			v["user"], v["username"] = users[j], names[j]
		}
		if j := rng.IntN(len(commands) + 1); j < len(commands) {
			v["command"] = commands[j]
		}
		if rng.IntN(3) == 0 {
			v["execution_duration"] = float64(rng.IntN(4)) / 4 // ties
		} else {
			v["execution_duration"] = rng.Float64() * 3
		}
		bulk = append(bulk, v)
	}
	split := min(600, len(bulk))
	if err := db.InsertLogs(ctx, bulk[:split]); err != nil {
		t.Fatal(err)
	}
	for _, v := range bulk[split:] {
		if _, err := db.CreateLog(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLogHeldPagesAgree compares every page ordered by the duration, user name,
// outcome, created or id, under filters on the device, outcome, user, user name,
// command, created and searches, each alone and together and within a viewer's devices,
// with the same page in plain SQL: before the columns are read, after, after logs are
// added (one of a new user), after a user is deleted (which changes logs' user), after a
// prune and after logs are deleted midway. While the columns hold, each page they can
// find must be found there, and never refused by the table; after a delete midway, only
// those of a search's matches.
func TestLogHeldPagesAgree(t *testing.T) {
	ctx := context.Background()
	heldEverywhere(t)
	db, devices, users, commands := heldFixture(t)
	compile := func(c string) Expr {
		t.Helper()
		e, err := CompileConstraints(CommandLogs, c, users[0])
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		return e
	}
	from := Expr{SQL: "t.created >= ?", Args: []any{Stamp(time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC))}}
	to := Expr{SQL: "t.created < ?", Args: []any{Stamp(time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC))}}
	viewer := compile(`{"device__site__slug": "s"}`)
	conds := map[string][]Expr{
		"every log":            nil,
		"failed":               {compile(`{"success": false}`)},
		"a user":               {compile(fmt.Sprintf(`{"user": %d}`, users[1]))},
		"the viewer's own":     {compile(`{"user": "$user"}`)},
		"a user name":          {compile(`{"username": "carol"}`)},
		"the deleted's name":   {compile(`{"username": "ghost"}`)},
		"a command":            {compile(fmt.Sprintf(`{"command": %d}`, commands[2]))},
		"a device":             {compile(fmt.Sprintf(`{"device": %d}`, devices[1]))},
		"a span":               {from, to},
		"from":                 {from},
		"a viewer's":           {viewer},
		"a viewer's failed":    {viewer, compile(`{"success": false}`)},
		"everything":           {viewer, compile(`{"success": true}`), compile(fmt.Sprintf(`{"command": %d}`, commands[0])), from, to},
		"user and command":     {compile(fmt.Sprintf(`{"user": %d}`, users[2])), compile(fmt.Sprintf(`{"command": %d}`, commands[1]))},
		"not held (source)":    {compile(`{"source": "api"}`)},
		"a user and a failure": {compile(fmt.Sprintf(`{"user": %d, "success": false}`, users[0]))},
		"searched":             {CommandLogs.Search("case 3")},
		"a name searched":      {CommandLogs.Search("alic")},
		"a viewer's searched":  {viewer, CommandLogs.Search("case 3")},
		"a search of failures": {CommandLogs.Search("Gi0 is"), compile(`{"success": false}`), from},
	}
	orderings := []string{"execution_duration", "-execution_duration", "username", "-username", "success", "-success", "created", "-created", "id", "-id"}
	offsets := func(n int) []int { return []int{0, 3, n / 3, n - 4, n + 2} }
	if testing.Short() {
		// The race detector's run: each ordering field once, two offsets, a condition
		// of each kind.
		orderings = []string{"execution_duration", "-username", "-success", "-created"}
		offsets = func(n int) []int { return []int{3, n / 3} }
		for name := range conds {
			if !slices.Contains([]string{"failed", "a user name", "a command", "a span", "a viewer's failed", "a user and a failure",
				"a viewer's searched", "everything"}, name) {
				delete(conds, name)
			}
		}
	}
	check := func(stage string, wantHeld bool) {
		t.Helper()
		paged, refused, unsearched, oldestFirst := db.devices.paged.Load(), db.devices.refused.Load(), int64(0), 0
		for name, where := range conds {
			all, before, pages, maybe := And(where...), db.devices.paged.Load(), int64(0), int64(0)
			searched := slices.ContainsFunc(where, func(e Expr) bool { return e.logQ != "" })
			for _, spec := range orderings {
				order, err := CommandLogs.Ordering(spec)
				if err != nil {
					t.Fatal(err)
				}
				want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+all.SQL+` ORDER BY `+orderBy(keyTerms(order)), all.Args...)
				for _, offset := range offsets(len(want)) {
					offset = max(offset, 0)
					tails := db.tailPages.Load()
					got, n, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: where, Order: order, Limit: 7, Offset: offset})
					tailed := db.tailPages.Load() > tails
					page := want[min(offset, len(want)):min(offset+7, len(want))]
					if err != nil || n != len(want) || fmt.Sprint(got) != fmt.Sprint(page) {
						t.Errorf("%s: %s, ordering %s, offset %d: %v of %d (%v), want %v of %d", stage, name, spec, offset, got, n, err, page, len(want))
					}
					// A list of one outcome ordered by it is read ordered by created, as
					// are lists ordered by id, which the held columns find under a
					// search; deep in the list without, when the hours do not serve it.
					byCreated := strings.HasSuffix(spec, "created") || strings.HasSuffix(spec, "id") ||
						strings.HasSuffix(spec, "success") && (name == "failed" || name == "a viewer's failed")
					switch {
					case offset >= len(want):
					case tailed: // the search's newest (or oldest) matches are the page (tailPage)
						if !strings.HasPrefix(spec, "-") {
							oldestFirst++
						}
					case !byCreated || searched:
						pages++
					default:
						maybe++ // as the hours would count it
					}
				}
			}
			// Each condition but these reads the held columns alone.
			if !wantHeld && !searched {
				unsearched += db.devices.paged.Load() - before
			}
			if wantHeld && all.SQL != True.SQL && name != "not held (source)" {
				if got := db.devices.paged.Load() - before; got < pages || got > pages+maybe {
					t.Errorf("%s: %s: %d pages found in the held columns, want %d to %d", stage, name, got, pages, pages+maybe)
				}
			}
		}
		// A search's matches are never deleted logs: found, they may be held still.
		if got := db.devices.paged.Load() - paged; wantHeld && got == 0 || !wantHeld && unsearched != 0 {
			t.Errorf("%s: %d pages found in the held columns (%d without a search), want them held: %v", stage, got, unsearched, wantHeld)
		}
		// The logs are in created order: the first pages oldest first of a search come
		// from its oldest matches (not in the race detector's run, which orders by
		// created newest first only).
		if wantHeld && oldestFirst == 0 && !testing.Short() {
			t.Errorf("%s: no search page oldest first read from the word index's oldest matches", stage)
		}
		if got := db.devices.refused.Load() - refused; got != 0 {
			t.Errorf("%s: %d pages found in the held columns were refused by the table", stage, got)
		}
	}
	check("nothing held", false)
	if err := db.ReadLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, db, "read")
	check("read", true)

	addHeldLogs(t, db, 700, 620, devices, users, commands)
	checkHeld(t, db, "added")
	check("added", true)

	// A new user's logs add a pair of user and name that was not held.
	name := "dave"
	dave, err := db.CreateUser(ctx, UserInput{Username: &name}, All)
	if err != nil {
		t.Fatal(err)
	}
	addHeldLogs(t, db, 1320, 30, devices, []int64{dave}, commands)
	conds["the new user"] = []Expr{compile(fmt.Sprintf(`{"user": %d}`, dave))}
	check("a new user", true)

	// Deleting a user empties its logs' user: what is held is given up until read again.
	if err := db.Delete(ctx, Users, users[1]); err != nil {
		t.Fatal(err)
	}
	if checkHeld(t, db, "a user deleted") {
		t.Fatal("the held columns were kept over a changed user")
	}
	check("a user deleted", false)
	if err := db.followLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, db, "read again")
	check("read again", true)

	// A prune deletes the oldest logs: the rest stay held.
	if _, err := db.PruneLogs(ctx, time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, db, "pruned")
	check("pruned", true)

	// Logs deleted midway stay in what is held; the counts tell, and the table answers.
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE id % 7 = 0 AND id < (SELECT max(id) FROM command_logs)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	check("deleted midway", false)
}

// TestHeldPicksAdded checks that a search's matches picked for a page under a column
// sort are kept across writes: after logs are added, only the new logs are searched and
// their matches added to those kept, and the pages still equal the table's; a log
// deleted (the search epoch moves) makes the next page pick every match again.
func TestHeldPicksAdded(t *testing.T) {
	for _, halves := range []bool{false, true} {
		t.Run(fmt.Sprintf("halves=%v", halves), func(t *testing.T) { testHeldPicksAdded(t, halves) })
	}
}

// testHeldPicksAdded is TestHeldPicksAdded, with every first pick taken in halves on a
// helper (pickHalves) when halves is set, even on one core, and never when not.
func testHeldPicksAdded(t *testing.T, halves bool) {
	ctx := context.Background()
	heldEverywhere(t)
	db, devices, users, commands := heldFixture(t)
	if err := db.ReadLogDevices(ctx); err != nil {
		t.Fatal(err)
	}
	db.search.halvesMin = 1 << 62
	if halves {
		db.search.halvesMin, db.help.slots = 1, make(chan struct{}, 1)
	}
	where := []Expr{CommandLogs.Search("case 3")}
	all := And(where...)
	check := func(stage string, wantAdded int64) {
		t.Helper()
		added, paged := db.picks.added.Load(), db.devices.paged.Load()
		for _, spec := range []string{"execution_duration", "-username", "success"} {
			order, err := CommandLogs.Ordering(spec)
			if err != nil {
				t.Fatal(err)
			}
			want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+all.SQL+` ORDER BY `+orderBy(keyTerms(order)), all.Args...)
			for _, offset := range []int{0, 5, len(want) / 2} {
				got, n, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: where, Order: order, Limit: 7, Offset: offset})
				page := want[min(offset, len(want)):min(offset+7, len(want))]
				if err != nil || n != len(want) || fmt.Sprint(got) != fmt.Sprint(page) {
					t.Errorf("%s: ordering %s, offset %d: %v of %d (%v), want %v of %d", stage, spec, offset, got, n, err, page, len(want))
				}
			}
		}
		if got := db.picks.added.Load() - added; got != wantAdded {
			t.Errorf("%s: %d picks made by adding the new logs' matches, want %d", stage, got, wantAdded)
		}
		// Every page is found in the held columns from the picked matches: one missing
		// from them would leave the count short, and the page to the table.
		if got := db.devices.paged.Load() - paged; got != 9 {
			t.Errorf("%s: %d pages of 9 found in the held columns", stage, got)
		}
	}
	split := db.help.picksSplit.Load()
	check("first", 0)
	if got := db.help.picksSplit.Load() - split; (got > 0) != halves {
		t.Errorf("%d picks taken in halves, want them %v", got, halves)
	}
	addHeldLogs(t, db, 700, 60, devices, users, commands)
	check("logs added", 1)
	addHeldLogs(t, db, 760, 25, devices, users, commands)
	check("more logs added", 1)
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE id = (SELECT min(t.id) FROM command_logs t WHERE `+all.SQL+`)`, all.Args...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	check("a match deleted", 0)
	addHeldLogs(t, db, 785, 10, devices, users, commands)
	check("added after the delete", 1)
}

// TestSortedPage checks a page of entries sorted in part (selectFirst) against the
// same page of all of them sorted, on values with many repeats, sorted, reversed and
// shuffled, both ways, at the start, middle and end.
func TestSortedPage(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 7, 50, 201, 1000, 5000} {
		for _, shape := range []string{"random", "sorted", "reversed", "one value"} {
			es := make([]heldEntry, n)
			for i := range es {
				es[i] = heldEntry{float64(rnd.IntN(max(1, n/10))), int64(i)}
				switch shape {
				case "sorted":
					es[i] = heldEntry{float64(i), int64(i)}
				case "reversed":
					es[i] = heldEntry{float64(n - i), int64(n - i)}
				case "one value":
					es[i].v = 1
				}
			}
			if shape == "random" || shape == "one value" {
				rnd.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
			}
			for _, desc := range []bool{false, true} {
				all := slices.Clone(es)
				slices.SortFunc(all, entryOrder(desc))
				for _, r := range [][2]int{{0, 1}, {0, 50}, {5, 55}, {len(es) / 2, len(es)/2 + 50}, {len(es) - 1, len(es) + 49}} {
					from, to := min(max(r[0], 0), len(es)), min(r[1], len(es))
					var want []int64
					for _, e := range all[from:to] {
						want = append(want, e.id)
					}
					got := sortedPage(slices.Clone(es), desc, from, to)
					if !slices.Equal(got, want) {
						t.Fatalf("%d %s entries, desc %v, [%d:%d]: %v, want %v", len(es), shape, desc, from, to, got, want)
					}
				}
			}
		}
	}
}
