package handlers

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"log/slog"
	"maps"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

const exportPath = logPath + "export/"

func readCSV(t *testing.T, body []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, body)
	}
	return recs
}

func TestLogExportCSV(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	e.db.SetClock(func() time.Time { return time.Date(2026, 3, 12, 9, 0, 0, 0, time.UTC) })
	hostile := w.log(w.show, w.north, w.bobID, false, "-1 is not a port", 5)
	hostile["username"], hostile["device_name"], hostile["command_name"] = "=HYPERLINK(\"x\")", "+dev", "@sum"
	hostile["output"], hostile["notes"] = "line 1, \"quoted\"\nline 2\tTab", "=1+1 after CHG1"
	tabbed := w.log(w.config, w.south, w.carolID, false, "\tstarts with tab", 6)
	tabbed["output"], tabbed["error_message"] = "=cmd|' /C calc'!A0", "\rcarriage"
	if err := e.db.InsertLogs(t.Context(), []store.Values{hostile, tabbed}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Delete(t.Context(), store.Devices, w.south); err != nil { // the name stays, the id goes
		t.Fatal(err)
	}

	r := e.do("GET", exportPath+"?format=csv&include_output=true", e.admin, nil)
	if r.status != 200 || r.header.Get("Content-Disposition") != `attachment; filename="command-logs_2026-03-12-090000.csv"` ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv response: %d %v %s", r.status, r.header, r.body)
	}
	recs := readCSV(t, r.body)
	// site_id and site are the device's, looked up as the export reads: none once it is gone
	north := itoa(siteOfDevice(t, e, w.north))
	want := [][]string{
		{"id", "created", "username", "device_id", "device", "command_id", "command", "command_type", "success", "execution_duration", "error_message",
			"sent_command", "variables", "credential_set_id", "credential_set", "source", "client_address", "notes", "site_id", "site", "output"},
		{"1", "2026-03-10T12:00:00.000000Z", "bob", itoa(w.north), "rtr-north", itoa(w.show), "Show version", "show", "true", "0.5", "", "", "", "", "", "", "", "", north, "North", "output 0"},
		{"2", "2026-03-10T13:00:00.000000Z", "bob", "", "rtr-south", itoa(w.show), "Show version", "show", "false", "1.5", "% Invalid input detected at '^' marker.", "", "", "", "", "", "", "", "", "", "output 1"},
		{"3", "2026-03-10T14:00:00.000000Z", "carol", itoa(w.north), "rtr-north", itoa(w.config), "Set hostname", "config", "true", "2.5", "", "", "", "", "", "", "", "", north, "North", "output 2"},
		{"4", "2026-03-10T15:00:00.000000Z", "carol", "", "rtr-south", itoa(w.config), "Set hostname", "config", "false", "3.5", "Timed out after 30 s", "", "", "", "", "", "", "", "", "", "output 3"},
		{"5", "2026-03-10T16:00:00.000000Z", "carol", "", "rtr-south", itoa(w.show), "Show version", "show", "false", "4.5", "% Invalid input detected at '^' marker.", "", "", "", "", "", "", "", "", "", "output 4"},
		{"6", "2026-03-10T17:00:00.000000Z", "'=HYPERLINK(\"x\")", itoa(w.north), "'+dev", itoa(w.show), "'@sum", "show", "false", "5.5", "'-1 is not a port", "", "", "", "", "", "", "'=1+1 after CHG1", north, "North", "line 1, \"quoted\"\nline 2\tTab"},
		{"7", "2026-03-10T18:00:00.000000Z", "carol", "", "rtr-south", itoa(w.config), "Set hostname", "config", "false", "6.5", "'\rcarriage", "", "", "", "", "", "", "", "", "", "'=cmd|' /C calc'!A0"},
	}
	if len(recs) != len(want) {
		t.Fatalf("rows: got %d, want %d\n%q", len(recs), len(want), recs)
	}
	for i := range want {
		for j := range want[i] {
			if j >= len(recs[i]) || recs[i][j] != want[i][j] {
				t.Errorf("row %d cell %d (%s): got %q, want %q", i, j, want[0][j], recs[i][j], want[i][j])
			}
		}
	}
	// without include_output there is no output column
	if recs := readCSV(t, e.do("GET", exportPath+"?format=csv&success=true", e.admin, nil).body); len(recs[0]) != 20 || len(recs) != 3 {
		t.Fatalf("csv without output, successful only: %q", recs)
	}
}

// TestLogExportNames: an export's file name says what it holds and when it was made
// (every list export of a day was command-logs-<day>.csv, and so was each single log's).
func TestLogExportNames(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	e.db.SetClock(func() time.Time { return time.Date(2026, 3, 12, 9, 5, 7, 0, time.UTC) })
	for query, want := range map[string]string{
		"?format=csv&include_output=true&id=3": `attachment; filename="command-log-3.csv"`,
		"?format=csv":                          `attachment; filename="command-logs_2026-03-12-090507.csv"`,
		"?format=csv&device_id=" + itoa(w.north) + "&success=false&created__gte=2026-03-01T00:00:00Z": `attachment; filename="command-logs_device-` +
			itoa(w.north) + `_failed_since-2026-03-01-000000_2026-03-12-090507.csv"`,
		"?format=json&username=bob&q=show%20ver%2Fsion&start_date=2026-03-10&end_date=2026-03-11": `inline; filename="command-logs_user-bob_search-show-ver-sion_from-2026-03-10_to-2026-03-11_2026-03-12-090507.json"`,
		"?format=csv&source=ui&command_id=" + itoa(w.show):                                        `attachment; filename="command-logs_command-` + itoa(w.show) + `_from-ui_2026-03-12-090507.csv"`,
	} {
		r := e.do("GET", exportPath+query, e.admin, nil)
		if r.status != 200 || r.header.Get("Content-Disposition") != want {
			t.Errorf("%s: %d %q, want %q", query, r.status, r.header.Get("Content-Disposition"), want)
		}
	}
}

func TestLogExportJSON(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	if err := e.db.Delete(t.Context(), store.Commands, w.config); err != nil {
		t.Fatal(err)
	}
	m := e.must(200, "GET", exportPath+"?device_id="+itoa(w.south), e.admin, nil)
	if num(m["count"]) != 3 || len(m["results"].([]any)) != 3 {
		t.Fatalf("json export: %v", m)
	}
	first := m["results"].([]any)[0].(map[string]any)
	want := map[string]any{"id": 2.0, "command": map[string]any{"id": float64(w.show), "name": "Show version"},
		"device": map[string]any{"id": float64(w.south), "name": "rtr-south"}, "username": "bob", "command_type": "show", "success": false,
		"created": "2026-03-10T13:00:00.000000Z", "execution_duration": 1.5,
		"error_message": "% Invalid input detected at '^' marker.", "sent_command": "", "variables": nil,
		"credential_set": nil, "source": nil, "client_address": "", "notes": "",
		"site": map[string]any{"id": float64(siteOfDevice(t, e, w.south)), "name": "South"}}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("first result\n got %v\nwant %v", first, want)
	}
	// both formats carry the same fields: a reference is one JSON key, two CSV columns
	csvHead := readCSV(t, e.do("GET", exportPath+"?format=csv&include_output=true", e.admin, nil).body)[0]
	full := e.must(200, "GET", exportPath+"?include_output=true", e.admin, nil)["results"].([]any)[0].(map[string]any)
	var folded []string
	for _, c := range csvHead {
		if _, isRef := full[strings.TrimSuffix(c, "_id")]; !isRef || !strings.HasSuffix(c, "_id") {
			folded = append(folded, c)
		}
	}
	if slices.Sort(folded); !slices.Equal(folded, slices.Sorted(maps.Keys(full))) {
		t.Errorf("CSV columns %v, JSON keys %v", csvHead, slices.Sorted(maps.Keys(full)))
	}
	second := m["results"].([]any)[1].(map[string]any)
	if second["command"].(map[string]any)["id"] != nil || second["command"].(map[string]any)["name"] != "Set hostname" {
		t.Fatalf("deleted command: %v", second)
	}
	if m := e.must(200, "GET", exportPath+"?format=json&include_output=1&q=carol", e.admin, nil); num(m["count"]) != 3 ||
		m["results"].([]any)[0].(map[string]any)["output"] != "output 2" {
		t.Fatalf("include_output and q: %v", m)
	}
	if m := e.must(200, "GET", exportPath+"?username=nobody", e.admin, nil); num(m["count"]) != 0 || len(m["results"].([]any)) != 0 {
		t.Fatalf("empty export: %v", m)
	}
}

func TestLogExportDatesAndErrors(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	// In New York, the logs at 12:00–16:00 UTC on 10 March fall on 10 March local time
	// (UTC-4 after the DST switch of 8 March 2026); add one at 02:00 UTC on the 11th,
	// still the 10th in New York.
	late := w.log(w.show, w.north, w.bobID, true, "", 0)
	late["created"] = time.Date(2026, 3, 11, 2, 0, 0, 0, time.UTC)
	if err := e.db.InsertLogs(t.Context(), []store.Values{late}); err != nil {
		t.Fatal(err)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	srv := httptest.NewServer(New(Options{DB: e.db, Logger: slog.New(slog.DiscardHandler), Location: ny}))
	t.Cleanup(srv.Close)
	local := &env{t: t, db: e.db, srv: srv, admin: e.admin}
	cases := []struct {
		query string
		count int
	}{
		{"start_date=2026-03-10&end_date=2026-03-10", 6},
		{"start_date=2026-03-11", 0},
		{"end_date=2026-03-09", 0},
		{"start_date=2026-03-10&end_date=2026-03-10&success=true", 3},
	}
	for _, c := range cases {
		if m := local.must(200, "GET", exportPath+"?"+c.query, e.admin, nil); num(m["count"]) != c.count {
			t.Errorf("New York %s: count %v, want %d", c.query, m["count"], c.count)
		}
	}
	// in UTC the late log is on the 11th
	for _, c := range []struct {
		query string
		count int
	}{{"start_date=2026-03-10&end_date=2026-03-10", 5}, {"start_date=2026-03-11&end_date=2026-03-11", 1}} {
		if m := e.must(200, "GET", exportPath+"?"+c.query, e.admin, nil); num(m["count"]) != c.count {
			t.Errorf("UTC %s: count %v, want %d", c.query, m["count"], c.count)
		}
	}
	for _, bad := range []struct{ q, field string }{
		{"start_date=10/03/2026", "start_date"}, {"end_date=2026-02-30", "end_date"},
		{"start_date=2026-03-11&end_date=2026-03-10", "end_date"}, {"format=xml", "format"},
		{"limit=5", "limit"}, {"device_id=x", "device_id"}, {"include_output=maybe", "include_output"},
	} {
		r := e.do("GET", exportPath+"?format=csv&"+bad.q, e.admin, nil)
		if bad.field == "format" {
			r = e.do("GET", exportPath+"?"+bad.q, e.admin, nil)
		}
		if r.status != 400 || r.header.Get("Content-Disposition") != "" {
			t.Errorf("%s: %d %v", bad.q, r.status, r.header)
			continue
		}
		if _, ok := r.json(t)[bad.field]; !ok {
			t.Errorf("%s: 400 does not name %s: %s", bad.q, bad.field, r.body)
		}
	}
}

func TestLogExportPermissions(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	e.must(403, "GET", exportPath, e.user("nobody", false), nil)
	shows := e.user("shows", false)
	e.grant("shows", store.TypeCommandLog, []string{"view"}, `{"command__command_type": "show"}`)
	if m := e.must(200, "GET", exportPath, shows, nil); !eqInts(jsonIDs(m), []int{1, 2, 5}) || num(m["count"]) != 3 {
		t.Fatalf("constrained json export: %v", m)
	}
	recs := readCSV(t, e.do("GET", exportPath+"?format=csv", shows, nil).body)
	var got []string
	for _, r := range recs[1:] {
		got = append(got, r[0])
	}
	if fmt.Sprint(got) != "[1 2 5]" {
		t.Fatalf("constrained csv export: %v", got)
	}
}

// jsonIDs is the ids of an export's results, in order.
func jsonIDs(m map[string]any) []int {
	var out []int
	for _, x := range m["results"].([]any) {
		out = append(out, num(x.(map[string]any)["id"]))
	}
	return out
}

// TestLogExportBOMAndCRLF: records end with CRLF; bom=true starts the download with a
// UTF-8 byte order mark (Excel); bom applies to CSV only.
func TestLogExportBOMAndCRLF(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	plain := e.do("GET", exportPath+"?format=csv", e.admin, nil)
	bom := e.do("GET", exportPath+"?format=csv&bom=true", e.admin, nil)
	if plain.status != 200 || bom.status != 200 {
		t.Fatalf("status %d %d", plain.status, bom.status)
	}
	if !bytes.Equal(bom.body, append([]byte(store.BOM), plain.body...)) || bytes.HasPrefix(plain.body, []byte(store.BOM)) {
		t.Fatalf("bom=true must add exactly the BOM: %q… vs %q…", bom.body[:10], plain.body[:10])
	}
	if lines := bytes.Count(plain.body, []byte("\r\n")); lines != len(readCSV(t, plain.body)) {
		t.Fatalf("want every record to end with CRLF (%d CRLF):\n%q", lines, plain.body)
	}
	for _, q := range []string{"?format=json&bom=true", "?bom=perhaps"} {
		if r := e.do("GET", exportPath+q, e.admin, nil); r.status != 400 || !bytes.Contains(r.body, []byte(`"bom"`)) {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}
}

// siteOfDevice is the id of a device's site, as the API shows the device.
func siteOfDevice(t *testing.T, e *env, device int64) int64 {
	t.Helper()
	return int64(num(e.must(200, "GET", "/api/dcim/devices/"+itoa(device)+"/", e.admin, nil)["site"].(map[string]any)["id"]))
}

// TestLogSite: a log carries its device's site, the brief site a device shows, in the
// list and the detail (the list reads it for its page's logs); read-only; null once the
// device is gone, or when it has no site; the device's move moves its logs'.
func TestLogSite(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	north, south := siteOfDevice(t, e, w.north), siteOfDevice(t, e, w.south)
	siteOf := func(l map[string]any) any {
		if s, ok := l["site"].(map[string]any); ok {
			if u, _ := s["url"].(string); !strings.HasSuffix(u, "/api/dcim/sites/"+itoa(int64(num(s["id"])))+"/") {
				t.Errorf("site url: %v", s)
			}
			return [2]any{int64(num(s["id"])), s["name"]}
		}
		return l["site"]
	}
	list := e.must(200, "GET", logPath+"?ordering=created", e.admin, nil)["results"].([]any)
	for _, x := range list {
		l := x.(map[string]any)
		want := [2]any{north, "North"}
		if int64(num(l["device"].(map[string]any)["id"])) == w.south {
			want = [2]any{south, "South"}
		}
		if got := siteOf(l); got != want {
			t.Errorf("log %v of %v: site %v, want %v", l["id"], l["device"], l["site"], want)
		}
	}
	one := e.must(200, "GET", logPath+itoa(int64(num(list[0].(map[string]any)["id"])))+"/", e.admin, nil)
	if s, _ := one["site"].(map[string]any); s == nil || s["slug"] != "north" || s["display"] != "North" {
		t.Fatalf("detail site: %v", one["site"])
	}
	if m := e.must(200, "GET", logPath+"?site=south&fields=id,site", e.admin, nil); num(m["count"]) != 3 ||
		siteOf(m["results"].([]any)[0].(map[string]any)) != [2]any{south, "South"} {
		t.Fatalf("?site=south with fields=site: %v", m)
	}
	// read-only: a PATCH of it is refused, naming it
	if r := e.do("PATCH", logPath+itoa(int64(num(one["id"])))+"/", e.admin, map[string]any{"site": south}); r.status != 400 ||
		!strings.Contains(string(r.body), "site") {
		t.Fatalf("PATCH site: %d %s", r.status, r.body)
	}
	// the device moves: its logs are where it is now; it goes: none
	e.must(200, "PATCH", "/api/dcim/devices/"+itoa(w.north)+"/", e.admin, map[string]any{"site": south})
	if got := siteOf(e.must(200, "GET", logPath+itoa(int64(num(one["id"])))+"/", e.admin, nil)); got != [2]any{south, "South"} {
		t.Fatalf("after the device moved: %v", got)
	}
	if err := e.db.Delete(t.Context(), store.Devices, w.south); err != nil {
		t.Fatal(err)
	}
	for _, x := range e.must(200, "GET", logPath+"?device_id="+itoa(w.north)+"&limit=1", e.admin, nil)["results"].([]any) {
		if siteOf(x.(map[string]any)) != [2]any{south, "South"} {
			t.Fatalf("moved device's log: %v", x)
		}
	}
	m := e.must(200, "GET", logPath+"?username=bob&ordering=created", e.admin, nil)
	if gone := m["results"].([]any)[1].(map[string]any); gone["device"].(map[string]any)["id"] != nil || gone["site"] != nil {
		t.Fatalf("log of a deleted device: site %v", gone["site"])
	}
}
