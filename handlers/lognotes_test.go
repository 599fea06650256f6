package handlers

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"fieldkit/store"
)

// logOf reads one log as the admin.
func (x *xenv) logOf(id int64) map[string]any {
	x.t.Helper()
	return x.must(200, "GET", pathCommandLogs+itoa(id)+"/", x.admin, nil)
}

// TestNotesAtExecute: a note given at execute time is kept on the log and comes back
// in its detail, the list's search, and both exports; a bulk request's notes go on
// every element without its own; a note too long or not a string is a 400 naming it.
func TestNotesAtExecute(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	note := "pre-change OSPF config, CHG4711 — 'quoted', \"double\", 改"
	m := x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token,
		"notes": note})
	id := logID(m)
	if got := x.logOf(id)["notes"]; got != note {
		t.Fatalf("log notes = %q, want %q", got, note)
	}
	plain := logID(x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token}))
	if got := x.logOf(plain)["notes"]; got != "" {
		t.Errorf("a log without notes: %q", got)
	}

	// ?q= finds the log by a word of its notes alone (not in its output or names).
	page := x.must(200, "GET", pathCommandLogs+"?q=CHG4711", x.admin, nil)
	if page["count"] != float64(1) || int64(page["results"].([]any)[0].(map[string]any)["id"].(float64)) != id {
		t.Errorf("q=CHG4711: %v", page["results"])
	}

	// Both exports carry the notes, the CSV in a column of its own.
	exp := x.must(200, "GET", pathCommandLogs+"export/?format=json&id="+itoa(id), x.admin, nil)
	if row := exp["results"].([]any)[0].(map[string]any); row["notes"] != note {
		t.Errorf("JSON export notes: %v", row["notes"])
	}
	r := x.do("GET", pathCommandLogs+"export/?format=csv&id="+itoa(id), x.admin, nil)
	recs, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("CSV export: %v %q", err, r.body)
	}
	col := -1
	for i, h := range recs[0] {
		if h == "notes" {
			col = i
		}
	}
	if col < 0 || recs[1][col] != note {
		t.Errorf("CSV export: header %v, row %v", recs[0], recs[1])
	}

	// A command's history on the device shows each run's notes.
	hist := x.must(200, "GET", pathCommandLogs+"history/?device_id="+itoa(x.iosID)+"&command_id="+itoa(cmd), x.admin, nil)
	runs := hist["results"].([]any)
	if len(runs) != 2 || runs[0].(map[string]any)["notes"] != "" || runs[1].(map[string]any)["notes"] != note {
		t.Errorf("history: %v", runs)
	}

	// Bulk: the request's notes for every element without its own.
	b := x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"notes": "nightly audit", "executions": []any{
		map[string]any{"command_id": cmd, "device_id": x.iosID, "credential_token": x.token},
		map[string]any{"command_id": cmd, "device_id": x.iosID, "credential_token": x.token, "notes": "own note"},
		map[string]any{"command_id": cmd, "device_id": x.iosID, "credential_token": x.token, "notes": ""},
	}})
	for i, want := range []string{"nightly audit", "own note", ""} {
		res := b["results"].([]any)[i].(map[string]any)
		if got := x.logOf(int64(res["command_log_id"].(float64)))["notes"]; got != want {
			t.Errorf("bulk element %d: notes %q, want %q", i, got, want)
		}
	}

	// Bad notes: nothing runs, the 400 names notes.
	before := x.logCount()
	long := strings.Repeat("é", store.MaxNotes+1)
	for _, bad := range []any{long, 42, true, map[string]any{"a": 1}, nil} {
		r := x.do("POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token, "notes": bad})
		if r.status != 400 || r.json(t)["notes"] == nil {
			t.Errorf("execute with notes %.20v: %d %s", bad, r.status, r.body)
		}
		r = x.do("POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"notes": bad, "executions": []any{
			map[string]any{"command_id": cmd, "device_id": x.iosID, "credential_token": x.token}}})
		if r.status != 400 || r.json(t)["notes"] == nil {
			t.Errorf("bulk with notes %.20v: %d %s", bad, r.status, r.body)
		}
	}
	// A bulk element's own bad notes reject that element alone, naming them.
	b = x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": []any{
		map[string]any{"command_id": cmd, "device_id": x.iosID, "credential_token": x.token, "notes": long},
	}})
	if res := b["results"].([]any)[0].(map[string]any); res["command_log_id"] != nil || res["details"].(map[string]any)["notes"] == nil {
		t.Errorf("bulk element with long notes: %v", res)
	}
	if n := x.logCount(); n != before {
		t.Errorf("bad notes wrote %d logs", n-before)
	}
	// Exactly the limit, in characters rather than bytes, is fine.
	atLimit := strings.Repeat("é", store.MaxNotes)
	m = x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token, "notes": atLimit})
	if got := x.logOf(logID(m))["notes"]; got != atLimit {
		t.Errorf("1,000 characters not kept whole: %d", len(got.(string)))
	}
}

// TestLogNotesEdit: a log's notes, and nothing else of it, may be edited afterwards by
// its author or a user with change_commandlog; another user is refused (403), a viewer
// confined to a device neither edits nor sees another device's log (404); each edit is
// logged with who, which log and the lengths, never the text.
func TestLogNotesEdit(t *testing.T) {
	x := newXEnv(t, 100)
	_, sw2 := x.device("sw2", "cisco_ios", x.iosPlat)
	cmd := x.command("Version", "show version", "show")

	// bob runs commands with his own set and sees the logs of every device.
	bob := x.user("bob", false)
	bobSet, _ := x.credSet("bob", "bob's", nil)
	x.grant("bob", store.TypeCommand, []string{"view", "execute_show"}, "")
	x.grant("bob", store.TypeDevice, []string{"view"}, "")
	x.grant("bob", store.TypeCommandLog, []string{"view"}, "")
	mine := logID(x.must(200, "POST", execPath(cmd), bob, map[string]any{"device_id": x.iosID, "credential_token": bobSet, "notes": "first"}))
	adminLog := logID(x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token}))
	sw2Log := logID(x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": sw2, "credential_token": x.token}))
	path := func(id int64) string { return pathCommandLogs + itoa(id) + "/" }
	before := x.logOf(mine)

	// The author edits their own log's notes; the rest of the log is as it was.
	got := x.must(200, "PATCH", path(mine), bob, map[string]any{"notes": "after the fact: ticket CHG1005"})
	if got["notes"] != "after the fact: ticket CHG1005" {
		t.Fatalf("PATCH answer: %v", got["notes"])
	}
	after := x.logOf(mine)
	for k, v := range before {
		if k == "notes" || k == "last_updated" {
			continue
		}
		if a, b := jsonText(v), jsonText(after[k]); a != b {
			t.Errorf("%s changed with the notes: %s → %s", k, a, b)
		}
	}
	if after["notes"] != "after the fact: ticket CHG1005" || after["last_updated"].(string) < before["last_updated"].(string) {
		t.Errorf("stored: notes %v, last_updated %v (before %v)", after["notes"], after["last_updated"], before["last_updated"])
	}
	// The edit is logged: who, which log, the lengths; never the text.
	logs := x.logs.String()
	line := ""
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "command log notes edited") {
			line = l
		}
	}
	if !strings.Contains(line, "log_id="+itoa(mine)) || !strings.Contains(line, "username=bob") ||
		!strings.Contains(line, "old_length=5") || !strings.Contains(line, "new_length=30") {
		t.Errorf("the edit's log line: %q", line)
	}
	if strings.Contains(logs, "CHG1005") {
		t.Errorf("the server log holds the notes' text")
	}
	// ?q= follows the new notes and forgets the old.
	if n := x.must(200, "GET", pathCommandLogs+"?q=CHG1005", x.admin, nil)["count"]; n != float64(1) {
		t.Errorf("q=CHG1005 after the edit: %v", n)
	}
	if n := x.must(200, "GET", pathCommandLogs+"?q=first", x.admin, nil)["count"]; n != float64(0) {
		t.Errorf("q=first after the edit: %v", n)
	}

	// A read-only token of the author's writes nothing.
	bobID, _ := x.db.UserIDByName(t.Context(), "bob")
	_, readOnly, err := x.db.CreateToken(t.Context(), store.TokenInput{UserID: bobID}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	if r := x.do("PATCH", path(mine), readOnly, map[string]any{"notes": "x"}); r.status != 403 {
		t.Errorf("a read-only token: %d %s", r.status, r.body)
	}

	// bob may not edit another user's log: viewing is not changing.
	if r := x.do("PATCH", path(adminLog), bob, map[string]any{"notes": "mine now"}); r.status != 403 {
		t.Errorf("bob on the admin's log: %d %s", r.status, r.body)
	}
	if n := x.logOf(adminLog)["notes"]; n != "" {
		t.Errorf("a refused edit changed the notes: %q", n)
	}
	// carol holds change_commandlog: she edits anyone's.
	carol := x.user("carol", false)
	x.grant("carol", store.TypeCommandLog, []string{"view", "change"}, "")
	x.must(200, "PATCH", path(adminLog), carol, map[string]any{"notes": "reviewed by carol"})
	if n := x.logOf(adminLog)["notes"]; n != "reviewed by carol" {
		t.Errorf("carol's edit: %q", n)
	}
	// dave views and changes sw1's logs only: sw2's is out of sight, for reading and editing.
	dave := x.user("dave", false)
	x.grant("dave", store.TypeCommandLog, []string{"view", "change"}, `{"device__name": "sw1"}`)
	x.must(200, "PATCH", path(adminLog), dave, map[string]any{"notes": "dave was here"})
	for _, method := range []string{"GET", "PATCH"} {
		if r := x.do(method, path(sw2Log), dave, map[string]any{"notes": "nope"}); r.status != 404 {
			t.Errorf("%s sw2's log as a viewer of sw1: %d", method, r.status)
		}
	}
	// eve may view sw1's logs but change sw2's alone: she may not edit sw1's.
	eve := x.user("eve", false)
	x.grant("eve", store.TypeCommandLog, []string{"view"}, "")
	x.grant("eve", store.TypeCommandLog, []string{"change"}, `{"device__name": "sw2"}`)
	if r := x.do("PATCH", path(adminLog), eve, map[string]any{"notes": "nope"}); r.status != 403 {
		t.Errorf("eve on sw1's log: %d", r.status)
	}
	x.must(200, "PATCH", path(sw2Log), eve, map[string]any{"notes": "eve on sw2"})
	if n := x.logOf(sw2Log)["notes"]; n != "eve on sw2" {
		t.Errorf("eve's edit: %q", n)
	}

	// Only notes: any other field is a 400 naming it, and nothing changes.
	for _, tt := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"success": false}, "success"},
		{map[string]any{"notes": "x", "output": "forged"}, "output"},
		{map[string]any{"notes": "x", "sent_command": "reload"}, "sent_command"},
		{map[string]any{"bogus": 1}, "bogus"},
		{map[string]any{}, "notes"},
		{map[string]any{"notes": strings.Repeat("x", store.MaxNotes+1)}, "notes"},
		{map[string]any{"notes": 7}, "notes"},
		{map[string]any{"notes": nil}, "notes"},
	} {
		r := x.do("PATCH", path(mine), bob, tt.body)
		if r.status != 400 || r.json(t)[tt.field] == nil {
			t.Errorf("PATCH %v: %d %s", tt.body, r.status, r.body)
		}
	}
	if l := x.logOf(mine); l["notes"] != "after the fact: ticket CHG1005" || l["output"] != before["output"] || l["success"] != true {
		t.Errorf("a refused PATCH changed the log: %v", l)
	}
	if r := x.do("PUT", path(mine), bob, map[string]any{"notes": "x"}); r.status != 405 {
		t.Errorf("PUT on a log: %d", r.status)
	}
	if r := x.do("PATCH", path(999999), x.admin, map[string]any{"notes": "x"}); r.status != 404 {
		t.Errorf("PATCH of a missing log: %d", r.status)
	}
}

// jsonText is a value as JSON, for comparing decoded values.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
