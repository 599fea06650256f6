package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"fieldkit/store"
)

// A config change's log says exactly what was sent, with which values, by whom, with
// which credentials and from where: in the API, the JSON export and the CSV export,
// and still after the credential set is deleted.
func TestLogIsAnAuditRecord(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Describe port", "interface <iface>\n description <text> (<who>)", "config",
		map[string]any{"name": "iface", "variable_type": "inventory_interface"},
		map[string]any{"name": "text"},
		map[string]any{"name": "who", "required": false, "default_value": "noc"})
	m := x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token,
		"variables": map[string]any{"iface": "GigabitEthernet0/1", "text": "uplink to core"}})
	if m["success"] != true {
		t.Fatalf("execute: %v", m)
	}
	logURL := pathCommandLogs + itoa(int64(num(m["command_log_id"]))) + "/"
	want := map[string]any{
		"sent_command":   "interface GigabitEthernet0/1\n description uplink to core (noc)",
		"variables":      map[string]any{"iface": "GigabitEthernet0/1", "text": "uplink to core", "who": "noc"},
		"credential_set": map[string]any{"id": float64(x.setID), "name": "lab", "display": "lab"},
		"source":         "api",
		"client_address": "127.0.0.1",
		"username":       "admin",
	}
	check := func(what string, got map[string]any) {
		t.Helper()
		for k, v := range want {
			g, _ := json.Marshal(got[k])
			w, _ := json.Marshal(v)
			if string(g) != string(w) {
				t.Errorf("%s: %s = %s, want %s", what, k, g, w)
			}
		}
	}
	check("log", x.must(200, "GET", logURL, x.admin, nil))
	if err := x.db.DeleteCredentialSet(context.Background(), 1, x.setID); err != nil {
		t.Fatal(err)
	}
	check("log after the set was deleted", x.must(200, "GET", logURL, x.admin, nil))

	// The JSON export carries the same, a reference as id and name.
	exp := x.must(200, "GET", pathCommandLogs+"export/?format=json", x.admin, nil)
	row, _ := exp["results"].([]any)[0].(map[string]any)
	delete(want, "credential_set")
	check("JSON export", row)
	if cs, _ := row["credential_set"].(map[string]any); cs["name"] != "lab" || cs["id"] != float64(x.setID) {
		t.Errorf("JSON export credential_set: %v", row["credential_set"])
	}
	// The CSV export has a column for each.
	r := x.do("GET", pathCommandLogs+"export/?format=csv", x.admin, nil)
	recs, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("CSV: %v %s", err, r.body)
	}
	cells := map[string]string{}
	for i, h := range recs[0] {
		cells[h] = recs[1][i]
	}
	for k, v := range map[string]string{"sent_command": want["sent_command"].(string), "credential_set": "lab",
		"credential_set_id": itoa(x.setID), "source": "api", "client_address": "127.0.0.1",
		"variables": `{"iface":"GigabitEthernet0/1","text":"uplink to core","who":"noc"}`} {
		if cells[k] != v {
			t.Errorf("CSV %s = %q, want %q (header %v)", k, cells[k], v, recs[0])
		}
	}

	// A bulk execution says so.
	tok, _ := x.credSet("admin", "lab2", nil)
	res := x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": []any{
		map[string]any{"command_id": cmd, "device_id": x.iosID, "credential_token": tok,
			"variables": map[string]any{"iface": "GigabitEthernet0/2", "text": "spare"}}}})
	id := int64(num(res["results"].([]any)[0].(map[string]any)["command_log_id"]))
	if l := x.must(200, "GET", pathCommandLogs+itoa(id)+"/", x.admin, nil); l["source"] != "bulk" ||
		l["sent_command"] != "interface GigabitEthernet0/2\n description spare (noc)" {
		t.Errorf("bulk log: %v", l)
	}
	// The source filters.
	if got := x.must(200, "GET", pathCommandLogs+"?source=bulk", x.admin, nil); num(got["count"]) != 1 {
		t.Errorf("?source=bulk: %v", got["count"])
	}
}

// ?q= searches output and error messages as well as the names: a word of either finds
// the log, indexed as logs are written and removed.
func TestLogSearchOutputAndErrors(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	in := []store.Values{
		w.log(w.show, w.north, w.bobID, true, "", 5),
		w.log(w.show, w.south, w.bobID, false, "Connection refused by peer", 6),
	}
	in[0]["output"] = "Cisco IOS XE Software, Version 17.9.4a\nuptime is 3 weeks"
	if err := e.db.InsertLogs(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]int{
		"17.9.4a":            {6},
		"uptime":             {6},
		"UPTIME weeks":       {6},
		"refused":            {7},
		"connection peer":    {7},
		"invalid":            {5, 2},
		"rtr-nor":            {6, 3, 1}, // a name's substring, as before
		"Set host":           {4, 3},
		"carol":              {5, 4, 3},
		"nothing-like-it":    nil,
		`"quoted" OR uptime`: nil, // words, not FTS syntax
	} {
		got := ids(e.must(200, "GET", logPath+"?q="+url.QueryEscape(q), e.admin, nil))
		if !eqInts(got, want) {
			t.Errorf("q=%q: %v, want %v", q, got, want)
		}
	}
	if _, err := e.db.PruneLogs(context.Background(), w.base.Add(24*365*3600e9)); err != nil {
		t.Fatal(err)
	}
	if got := ids(e.must(200, "GET", logPath+"?q=uptime", e.admin, nil)); len(got) != 0 {
		t.Errorf("pruned logs still found: %v", got)
	}
}
