package handlers

import (
	"testing"

	"fieldkit/store"
)

// A constrained viewer's log count comes from the per-device counters of the devices
// their permission matches, and which devices match is kept between requests. The
// count must still follow, on the very next request, every change that moves a log
// into or out of their view: a device's first log, a device moved to another site (by
// this server or another process), a device deleted (its logs keep no device), and the
// permission itself; for a constraint that matches the logs of deleted devices too.
func TestLogCountFollowsDevices(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	ctx := t.Context()
	north := e.user("nora", false)
	e.grant("nora", store.TypeCommandLog, []string{"view"}, `{"device__site__slug": "north"}`)
	others := e.user("otto", false)
	e.grant("otto", store.TypeCommandLog, []string{"view"}, `{"device__site__slug__n": ["north"]}`)
	// check asks for a page of one log (so the count is not the page's length) and the
	// whole list, twice each, and compares both with the logs wanted, newest first.
	check := func(what, token string, want ...int) {
		t.Helper()
		for range 2 {
			one := e.must(200, "GET", logPath+"?limit=1&exclude=output", token, nil)
			all := e.must(200, "GET", logPath+"?limit=50&fields=id", token, nil)
			if got := ids(all); !eqInts(got, want) || num(one["count"]) != len(want) || num(all["count"]) != len(want) {
				t.Fatalf("%s: logs %v, counts %v and %v; want %v", what, got, one["count"], all["count"], want)
			}
		}
	}
	check("north at first", north, 3, 1)
	check("the rest at first", others, 5, 4, 2)

	site := func(slug string) int64 {
		t.Helper()
		var id int64
		if err := e.db.Reader().QueryRowContext(ctx, `SELECT id FROM sites WHERE slug = ?`, slug).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	var platform int64
	if err := e.db.Reader().QueryRowContext(ctx, `SELECT platform_id FROM devices WHERE id = ?`, w.north).Scan(&platform); err != nil {
		t.Fatal(err)
	}
	fresh := tkDevice(t, e.db, "rtr-new", site("north"), platform)
	check("north after a new device, before its first log", north, 3, 1)
	if _, err := e.db.CreateLog(ctx, w.log(w.show, fresh, w.bobID, true, "", 5)); err != nil {
		t.Fatal(err)
	}
	check("north after a new device's first log", north, 6, 3, 1)

	// Another process moves the south device to the north site.
	other, err := store.Open(ctx, e.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Update(ctx, store.Devices, w.south, store.Values{"site": site("north")}, store.All); err != nil {
		t.Fatal(err)
	}
	check("north after the south device moved there", north, 6, 5, 4, 3, 2, 1)
	check("the rest after the south device moved north", others)

	// The north device is deleted: its logs keep no device, so no site matches them,
	// and the negated constraint does.
	if err := e.db.Delete(ctx, store.Devices, w.north); err != nil {
		t.Fatal(err)
	}
	check("north after its first device was deleted", north, 6, 5, 4, 2)
	check("the rest after a device was deleted", others, 3, 1)

	// The permission widens to every log.
	e.grant("nora", store.TypeCommandLog, []string{"view"}, "")
	check("north after a permission for every log", north, 6, 5, 4, 3, 2, 1)
}
