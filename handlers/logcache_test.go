package handlers

import (
	"fmt"
	"testing"

	"fieldkit/store"
)

// Log pages are served from the list cache, so it must never show a stale page or
// another user's: a log inserted through the log queue (which commits outside
// store.Write), a log written by another process on the same file, and a permission
// changed there all show on the next request, and a constrained viewer never gets the
// superuser's page nor the superuser theirs.
func TestLogListCacheStaysCorrect(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	ctx := t.Context()
	page := logPath + "?limit=50&exclude=output"
	list := func(token string) []int {
		t.Helper()
		m := e.must(200, "GET", page, token, nil)
		got := ids(m)
		if num(m["count"]) != len(got) {
			t.Fatalf("count %v for %d results", m["count"], len(got))
		}
		return got
	}
	check := func(what, token string, want ...int) {
		t.Helper()
		for range 2 { // the second is served from the cache
			if got := list(token); !eqInts(got, want) {
				t.Fatalf("%s: got %v, want %v", what, got, want)
			}
		}
	}
	check("first page", e.admin, 5, 4, 3, 2, 1)

	if _, err := e.db.CreateLog(ctx, w.log(w.show, w.north, w.bobID, true, "", 5)); err != nil {
		t.Fatal(err)
	}
	check("after an execution's log", e.admin, 6, 5, 4, 3, 2, 1)

	other, err := store.Open(ctx, e.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.InsertLogs(ctx, []store.Values{w.log(w.config, w.south, w.carolID, true, "", 6)}); err != nil {
		t.Fatal(err)
	}
	check("after another process's log", e.admin, 7, 6, 5, 4, 3, 2, 1)

	viewer := e.user("vic", false)
	e.grant("vic", store.TypeCommandLog, []string{"view"}, `{"device__site__slug": "north"}`)
	check("viewer of one site", viewer, 6, 3, 1)
	check("superuser after the viewer", e.admin, 7, 6, 5, 4, 3, 2, 1)

	// Another process narrows the viewer's permission: the next page follows it.
	res, err := other.Reader().QueryContext(ctx, `SELECT id FROM object_permissions WHERE name LIKE 'vic %'`)
	if err != nil {
		t.Fatal(err)
	}
	var perm int64
	for res.Next() {
		if err := res.Scan(&perm); err != nil {
			t.Fatal(err)
		}
	}
	res.Close()
	if perm == 0 {
		t.Fatal("no permission of vic's found")
	}
	cons := map[string]any{"device__site__slug": "north", "success": false}
	if err := other.Update(ctx, store.Permissions, perm, store.Values{"constraints": cons}, store.All); err != nil {
		t.Fatal(fmt.Errorf("narrowing vic's permission: %w", err))
	}
	check("viewer after their permission narrowed", viewer)
}
