package handlers

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"fieldkit/store"
)

const logPath = "/api/plugins/toolkit/command-logs/"

// logWorld is two sites, two devices, a show and a config command and five logs.
type logWorld struct {
	e                    *env
	north, south         int64 // devices
	show, config         int64 // commands
	logs                 []int64
	base                 time.Time
	bobID, carolID       int64
	showName, cfgName    string
	northName, southName string
}

func newLogWorld(t *testing.T) *logWorld {
	e := newEnv(t)
	w := &logWorld{e: e, base: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC),
		showName: "Show version", cfgName: "Set hostname", northName: "rtr-north", southName: "rtr-south"}
	ios := tkPlatform(t, e.db, "Cisco IOS", "cisco_ios")
	w.north = tkDevice(t, e.db, w.northName, tkSite(t, e.db, "North", "north"), ios)
	w.south = tkDevice(t, e.db, w.southName, tkSite(t, e.db, "South", "south"), ios)
	w.show = int64(num(e.must(201, "POST", cmdPath, e.admin, map[string]any{"name": w.showName, "command": "show version", "platforms": []any{ios}})["id"]))
	w.config = int64(num(e.must(201, "POST", cmdPath, e.admin, map[string]any{"name": w.cfgName, "command": "hostname x", "command_type": "config", "platforms": []any{ios}})["id"]))
	e.user("bob", false)
	e.user("carol", false)
	w.bobID, _ = e.db.UserIDByName(t.Context(), "bob")
	w.carolID, _ = e.db.UserIDByName(t.Context(), "carol")
	in := []store.Values{
		w.log(w.show, w.north, w.bobID, true, "", 0),
		w.log(w.show, w.south, w.bobID, false, "% Invalid input detected at '^' marker.", 1),
		w.log(w.config, w.north, w.carolID, true, "", 2),
		w.log(w.config, w.south, w.carolID, false, "Timed out after 30 s", 3),
		w.log(w.show, w.south, w.carolID, false, "% Invalid input detected at '^' marker.", 4),
	}
	if err := e.db.InsertLogs(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		w.logs = append(w.logs, int64(i+1))
	}
	return w
}

// log is an execution i hours after base.
func (w *logWorld) log(cmd, dev, user int64, ok bool, errMsg string, i int) store.Values {
	name, typ := w.showName, "show"
	if cmd == w.config {
		name, typ = w.cfgName, "config"
	}
	dname := w.northName
	if dev == w.south {
		dname = w.southName
	}
	uname := map[int64]string{w.bobID: "bob", w.carolID: "carol"}[user]
	return store.Values{"command": cmd, "command_name": name, "command_type": typ, "device": dev, "device_name": dname,
		"user": user, "username": uname, "output": fmt.Sprintf("output %d", i), "success": ok, "error_message": errMsg,
		"execution_duration": float64(i) + 0.5, "created": w.base.Add(time.Duration(i) * time.Hour)}
}

// minuteLogs adds n logs after the world's five, north's and south's in turn from north,
// a minute apart from 5 hours after base, each changed by edit when it is set.
func (w *logWorld) minuteLogs(t *testing.T, n int, edit func(i int, v store.Values)) {
	t.Helper()
	var more []store.Values
	for i := range n {
		dev := w.south
		if i%2 == 0 {
			dev = w.north
		}
		v := w.log(w.show, dev, w.bobID, true, "", 5)
		v["created"] = w.base.Add(5*time.Hour + time.Duration(i)*time.Minute)
		if edit != nil {
			edit(i, v)
		}
		more = append(more, v)
	}
	if err := w.e.db.InsertLogs(t.Context(), more); err != nil {
		t.Fatal(err)
	}
}

func TestLogListAndDetail(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	got := e.must(200, "GET", logPath, e.admin, nil)
	if !eqInts(ids(got), []int{5, 4, 3, 2, 1}) || num(got["count"]) != 5 {
		t.Fatalf("default order is -created: %v", got)
	}
	d := e.must(200, "GET", logPath+"2/", e.admin, nil)
	cmd, dev := d["command"].(map[string]any), d["device"].(map[string]any)
	if num(cmd["id"]) != int(w.show) || cmd["name"] != w.showName || cmd["display"] != w.showName ||
		num(dev["id"]) != int(w.south) || dev["name"] != w.southName || dev["url"] == nil {
		t.Fatalf("nested refs: %v %v", cmd, dev)
	}
	if d["success"] != false || d["error_message"] != "% Invalid input detected at '^' marker." || d["username"] != "bob" ||
		d["output"] != "output 1" || d["execution_duration"] != 1.5 || d["created"] != "2026-03-10T13:00:00.000000Z" ||
		d["execution_time"] != "2026-03-10T13:00:00.000000Z" || d["display"] != "Show version on rtr-south" {
		t.Fatalf("detail: %v", d)
	}

	// history survives the command and the device
	e.must(204, "DELETE", cmdURL(w.show), e.admin, nil)
	if err := e.db.Delete(t.Context(), store.Devices, w.south); err != nil {
		t.Fatal(err)
	}
	d = e.must(200, "GET", logPath+"2/", e.admin, nil)
	cmd, dev = d["command"].(map[string]any), d["device"].(map[string]any)
	_, hasCmdURL := cmd["url"]
	_, hasDevURL := dev["url"]
	if cmd["id"] != nil || hasCmdURL || hasDevURL || cmd["name"] != w.showName || dev["id"] != nil || dev["name"] != w.southName {
		t.Fatalf("refs after delete: %v %v", cmd, dev)
	}

	if _, err := e.db.PruneLogs(t.Context(), w.base.Add(30*time.Minute)); err != nil { // the first log
		t.Fatal(err)
	}
	if got := e.must(200, "GET", logPath+"?limit=2", e.admin, nil); num(got["count"]) != 4 || !eqInts(ids(got), []int{5, 4}) {
		t.Fatalf("count after a prune: %v", got)
	}

	// read-only, but for a PATCH of its notes (lognotes_test.go)
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		path := logPath + "1/"
		if m == "POST" {
			path = logPath
		}
		if r := e.do(m, path, e.admin, map[string]any{}); r.status != 405 {
			t.Errorf("%s %s: %d", m, path, r.status)
		}
	}
	e.must(404, "GET", logPath+"99/", e.admin, nil)
	e.must(404, "GET", logPath+"nope/", e.admin, nil)
}

func TestLogFilters(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	cases := []struct {
		query string
		want  []int
	}{
		{fmt.Sprintf("device_id=%d", w.north), []int{3, 1}},
		{fmt.Sprintf("device_id=%d&device_id=%d", w.north, w.south), []int{5, 4, 3, 2, 1}},
		{fmt.Sprintf("command_id=%d", w.config), []int{4, 3}},
		{fmt.Sprintf("user_id=%d", w.bobID), []int{2, 1}},
		{"username=carol", []int{5, 4, 3}},
		{"success=true", []int{3, 1}},
		{"success=FALSE", []int{5, 4, 2}},
		{"created__gte=2026-03-10T14:00:00Z", []int{5, 4, 3}},
		{"created__lte=2026-03-10T13:00:00Z", []int{2, 1}},
		{"created__gte=2026-03-10T13:00:00Z&created__lte=2026-03-10T15:00:00Z", []int{4, 3, 2}},
		{"q=SOUTH", []int{5, 4, 2}},
		{"q=set%20host", []int{4, 3}},
		{"q=bo", []int{2, 1}},
		{"id=2&id=4", []int{4, 2}},
		{"ordering=id", []int{1, 2, 3, 4, 5}},
		{"ordering=-execution_duration", []int{5, 4, 3, 2, 1}},
		{"ordering=success,username,id", []int{2, 4, 5, 1, 3}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			if got := ids(e.must(200, "GET", logPath+"?"+c.query, e.admin, nil)); !eqInts(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	for _, bad := range []struct{ q, field string }{
		{"device_id=x", "device_id"}, {"success=maybe", "success"}, {"created__gte=yesterday", "created__gte"},
		{"ordering=output", "ordering"}, {"devise_id=1", "devise_id"},
	} {
		m := e.must(400, "GET", logPath+"?"+bad.q, e.admin, nil)
		if _, ok := m[bad.field]; !ok {
			t.Errorf("%s: 400 does not name %s: %v", bad.q, bad.field, m)
		}
	}
}

func TestLogPermissions(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	dave := e.user("dave", false)
	e.must(403, "GET", logPath, dave, nil)
	e.must(404, "GET", logPath+"1/", dave, nil)
	cases := []struct {
		constraints string
		want        []int
	}{
		{`{"device__site__slug": "north"}`, []int{3, 1}},
		{`{"command__command_type": "show"}`, []int{5, 2, 1}},
		{`{"user": "$user"}`, nil},
		{`[{"success": true}, {"username": "bob"}]`, []int{3, 2, 1}},
	}
	for i, c := range cases {
		t.Run(c.constraints, func(t *testing.T) {
			name := fmt.Sprintf("viewer%d", i)
			tok := e.user(name, false)
			e.grant(name, store.TypeCommandLog, []string{"view"}, c.constraints)
			if got := ids(e.must(200, "GET", logPath, tok, nil)); !eqInts(got, c.want) {
				t.Fatalf("list: got %v, want %v", got, c.want)
			}
			visible := map[int]bool{}
			for _, id := range c.want {
				visible[id] = true
			}
			for id := 1; id <= 5; id++ {
				want := 404
				if visible[id] {
					want = 200
				}
				e.must(want, "GET", fmt.Sprintf("%s%d/", logPath, id), tok, nil)
			}
		})
	}
}

// TestLogNearPages: many near pages asked between two writes; a viewer confined to one
// site sees only that site's logs, page after page, and the superuser every log, each
// in order and with its count; after a new log, both see it first.
func TestLogNearPages(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	w.minuteLogs(t, 2000, nil)
	var north, all []int // newest first
	for id := 2005; id >= 6; id-- {
		all = append(all, id)
		if id%2 == 0 { // the first of the 2,000 (id 6) is north's
			north = append(north, id)
		}
	}
	all = append(all, 5, 4, 3, 2, 1)
	north = append(north, 3, 1)
	viewer := e.user("viewer", false)
	e.grant("viewer", store.TypeCommandLog, []string{"view"}, `{"device__site__slug": "north"}`)
	check := func(step string, tok string, want []int) {
		t.Helper()
		for offset := range 40 {
			page := e.must(200, "GET", fmt.Sprintf("%s?limit=50&offset=%d&exclude=output", logPath, offset), tok, nil)
			if got := ids(page); !eqInts(got, want[offset:offset+50]) || int(num(page["count"])) != len(want) {
				t.Fatalf("%s, offset %d: %v (count %v), want %v (count %d)", step, offset, got, page["count"], want[offset:offset+50], len(want))
			}
		}
	}
	check("viewer", viewer, north)
	check("superuser", e.admin, all)
	// the newest log, north's, a day after the others
	last := w.log(w.show, w.north, w.bobID, true, "", 6)
	last["created"] = w.base.Add(48 * time.Hour)
	if err := e.db.InsertLogs(t.Context(), []store.Values{last}); err != nil {
		t.Fatal(err)
	}
	check("viewer, after a new log", viewer, append([]int{2006}, north...))
	check("superuser, after a new log", e.admin, append([]int{2006}, all...))
}

// A search's newest-first pages, for a viewer confined to one site and for the
// superuser, while the logs are in created order and after logs written out of it.
func TestLogSearchPagesInCreatedOrder(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	w.minuteLogs(t, 600, func(i int, v store.Values) {
		if i%3 == 0 {
			v["output"] = fmt.Sprintf("Gi0/%d is flapping", i)
		}
	})
	var north, all []int // the matches, newest first
	for i := 599; i >= 0; i-- {
		if i%3 == 0 {
			all = append(all, i+6)
			if i%2 == 0 {
				north = append(north, i+6)
			}
		}
	}
	viewer := e.user("viewer", false)
	e.grant("viewer", store.TypeCommandLog, []string{"view"}, `{"device__site__slug": "north"}`)
	check := func(step, tok string, want []int) {
		t.Helper()
		for _, offset := range []int{0, 1, 7, 20, len(want) - 20, len(want) - 5} {
			page := e.must(200, "GET", fmt.Sprintf("%s?q=flapping&limit=20&offset=%d&exclude=output", logPath, offset), tok, nil)
			end := min(offset+20, len(want))
			if got := ids(page); !eqInts(got, want[offset:end]) || int(num(page["count"])) != len(want) {
				t.Fatalf("%s, offset %d: %v (count %v), want %v (count %d)", step, offset, got, page["count"], want[offset:end], len(want))
			}
			if next, _ := page["next"].(string); (next != "") != (end < len(want)) {
				t.Errorf("%s, offset %d: next %q with %d of %d", step, offset, next, end, len(want))
			}
		}
	}
	check("viewer", viewer, north)
	check("superuser", e.admin, all)
	// Two north logs written now, the highest ids, but dated before every other match.
	var late []store.Values
	for i := range 2 {
		v := w.log(w.show, w.north, w.bobID, true, "", 5)
		v["created"] = w.base.Add(4*time.Hour + time.Duration(30-10*i)*time.Minute)
		v["output"] = "Gi0/1 is flapping"
		late = append(late, v)
	}
	if err := e.db.InsertLogs(t.Context(), late); err != nil {
		t.Fatal(err)
	}
	check("viewer, after logs out of order", viewer, slices.Concat(north, []int{606, 607}))
	check("superuser, after logs out of order", e.admin, slices.Concat(all, []int{606, 607}))
}
