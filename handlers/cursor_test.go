package handlers

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"testing"
	"time"

	"fieldkit/store"
)

// walk follows next links from path until there are none, and returns the ids seen in
// order and the count the pages reported.
func walk(t *testing.T, e *env, path, token string) ([]int64, int) {
	t.Helper()
	var ids []int64
	count := -1
	for pages := 0; path != ""; pages++ {
		if pages > 1000 {
			t.Fatalf("walk does not end: %s", path)
		}
		m := e.must(200, "GET", path, token, nil)
		if count >= 0 && num(m["count"]) != count {
			t.Fatalf("%s: count changed from %d to %d", path, count, num(m["count"]))
		}
		count = num(m["count"])
		for _, r := range m["results"].([]any) {
			ids = append(ids, int64(num(r.(map[string]any)["id"])))
		}
		path = ""
		if next, ok := m["next"].(string); ok {
			u, err := url.Parse(next)
			if err != nil {
				t.Fatal(err)
			}
			if u.Query().Has("offset") || !u.Query().Has("cursor") {
				t.Fatalf("a cursor walk's next link: %s", next)
			}
			path = u.RequestURI()
		}
		if m["previous"] != nil {
			t.Fatalf("a cursor page's previous link: %v", m["previous"])
		}
	}
	return ids, count
}

// listAll is one page holding the whole list, through offset pagination.
func listAll(t *testing.T, e *env, path, token string) []int64 {
	t.Helper()
	var ids []int64
	for _, r := range e.must(200, "GET", path+"&limit=1000", token, nil)["results"].([]any) {
		ids = append(ids, int64(num(r.(map[string]any)["id"])))
	}
	return ids
}

// TestCursorWalk checks that walking a list with ?cursor= returns every row exactly
// once, in the order offset pagination gives, for every ordering (ties in the sort
// key, NULLs, mixed directions), for a constrained viewer, and while rows are added.
func TestCursorWalk(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "Cisco IOS", "cisco_ios")
	eos := tkPlatform(t, e.db, "Arista EOS", "arista_eos")
	var devices []int64
	for i := range 9 {
		site := tkSite(t, e.db, fmt.Sprintf("Site %d", i), fmt.Sprintf("site-%d-%d", i%3, i))
		devices = append(devices, tkDevice(t, e.db, fmt.Sprintf("dev-%d", i), site, []int64{ios, eos}[i%2]))
	}
	// devices without a platform sort with NULLs
	tkExec(t, e.db, `UPDATE devices SET platform_id = NULL WHERE id IN (?, ?)`, devices[2], devices[5])
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(7, 8))
	var logs []store.Values
	for i := range 160 {
		d := rng.IntN(len(devices))
		logs = append(logs, store.Values{"command_name": fmt.Sprintf("cmd-%d", rng.IntN(4)), "device": devices[d],
			"device_name": fmt.Sprintf("dev-%d", d), "username": []string{"ann", "bob", "cy"}[rng.IntN(3)],
			"success": rng.IntN(3) > 0, "execution_duration": float64(rng.IntN(5)) / 2,
			// many logs share a time: the id breaks the tie
			"created": base.Add(time.Duration(i/4) * time.Minute)})
	}
	if err := e.db.InsertLogs(t.Context(), logs); err != nil {
		t.Fatal(err)
	}
	viewer := e.user("viewer", false)
	e.grant("viewer", store.TypeCommandLog, []string{"view"}, `{"device__site__slug__isw": "site-1-"}`)
	for _, c := range []struct{ path, token string }{
		{logPath + "?ordering=", e.admin},
		{logPath + "?ordering=created", e.admin},
		{logPath + "?ordering=-execution_duration", e.admin},
		{logPath + "?ordering=username,-created", e.admin},
		{logPath + "?ordering=-success,execution_duration", e.admin},
		{logPath + "?ordering=&success=false", e.admin},
		{logPath + "?ordering=", viewer},
		{pathDevices + "?ordering=platform", e.admin},
		{pathDevices + "?ordering=-platform", e.admin},
		{pathDevices + "?ordering=-site,name", e.admin},
	} {
		want := listAll(t, e, c.path, c.token)
		for _, limit := range []int{1, 7, 50} {
			got, count := walk(t, e, fmt.Sprintf("%s&limit=%d&cursor=", c.path, limit), c.token)
			if !slices.Equal(got, want) || count != len(want) {
				t.Fatalf("%s limit %d: walked %d rows (count %d)\n got %v\nwant %v", c.path, limit, len(got), count, got, want)
			}
		}
	}

	// Logs written during a walk (newer, so before the cursor) neither repeat nor shift
	// the rows still to come, where offset pages would.
	want := listAll(t, e, logPath+"?ordering=", e.admin)
	m := e.must(200, "GET", logPath+"?limit=30&cursor=", e.admin, nil)
	var got []int64
	for _, r := range m["results"].([]any) {
		got = append(got, int64(num(r.(map[string]any)["id"])))
	}
	if _, err := e.db.CreateLog(t.Context(), store.Values{"command_name": "late", "device_name": "x", "username": "ann",
		"success": true, "created": base.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(m["next"].(string))
	rest, _ := walk(t, e, u.RequestURI(), e.admin)
	if got = append(got, rest...); !slices.Equal(got, want) {
		t.Fatalf("walk with a write in between\n got %v\nwant %v", got, want)
	}
}

func TestCursorErrors(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "Cisco IOS", "cisco_ios")
	tkDevice(t, e.db, "a", tkSite(t, e.db, "A", "a"), ios)
	tkDevice(t, e.db, "b", tkSite(t, e.db, "B", "b"), ios)
	first := e.must(200, "GET", pathDevices+"?limit=1&cursor=&ordering=name", e.admin, nil)
	next, _ := url.Parse(first["next"].(string))
	cur := next.Query().Get("cursor")
	craft := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, q := range []string{
		"cursor=%%%",
		"cursor=" + craft(`not json`),
		"cursor=" + craft(`{"o":"name","k":[1]}`),            // one value for two terms
		"cursor=" + craft(`{"o":"name","k":["a","x"]}`),      // no id
		"cursor=" + craft(`{"o":"name","k":[{"a":1},1]}`),    // not a value
		"cursor=" + url.QueryEscape(cur) + "&ordering=-name", // another ordering
		"cursor=" + url.QueryEscape(cur) + "&ordering=name&offset=1",
	} {
		m := e.must(400, "GET", pathDevices+"?"+q, e.admin, nil)
		if _, ok := m["cursor"]; !ok || len(m) != 1 {
			t.Errorf("%s: %v, want a message on cursor", q, m)
		}
	}
	m := e.must(200, "GET", next.RequestURI(), e.admin, nil)
	if r := m["results"].([]any); len(r) != 1 || r[0].(map[string]any)["name"] != "b" || m["next"] != nil {
		t.Fatalf("second page: %v", m)
	}
}
