package handlers

import (
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// logID is the command log id of an execute answer.
func logID(m map[string]any) int64 { return int64(m["command_log_id"].(float64)) }

// TestLogDiffShowVLAN runs show vlan on a simulated switch, adds a VLAN with a config
// command, runs it again, and compares the two: the unified diff shows the VLAN's line
// and records.added holds it; the history marks the second run as changed.
func TestLogDiffShowVLAN(t *testing.T) {
	x := newXEnv(t, 100)
	vlan := x.command("VLANs", "show vlan", "show")
	add := x.command("Add VLAN 30", "vlan 30\n name CAMERAS", "config")
	run := func(cmd int64) map[string]any {
		m := x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token})
		if m["success"] != true {
			t.Fatalf("execute %d: %v", cmd, m)
		}
		return m
	}
	first := logID(run(vlan))
	same := logID(run(vlan))
	run(add)
	second := logID(run(vlan))

	d := x.must(200, "GET", pathCommandLogs+itoa(second)+"/diff/?against=previous", x.admin, nil)
	from, to := d["from"].(map[string]any), d["to"].(map[string]any)
	if int64(from["id"].(float64)) != same || int64(to["id"].(float64)) != second ||
		to["device"].(map[string]any)["name"] != "sw1" || to["command"].(map[string]any)["name"] != "VLANs" {
		t.Fatalf("from/to: %v %v", from, to)
	}
	unified := d["unified"].(string)
	if !strings.Contains(unified, "\n+30   CAMERAS") || !strings.HasPrefix(unified, "--- sw1 ") {
		t.Errorf("unified diff lacks the new VLAN:\n%s", unified)
	}
	rec := d["records"].(map[string]any)
	added := rec["added"].([]any)
	if len(added) != 1 || added[0].(map[string]any)["vlan_id"] != "30" || added[0].(map[string]any)["vlan_name"] != "CAMERAS" ||
		len(rec["removed"].([]any)) != 0 {
		t.Errorf("records: %v", rec)
	}

	// Equal outputs: an empty diff and no record changes.
	d = x.must(200, "GET", pathCommandLogs+itoa(same)+"/diff/?against="+itoa(first), x.admin, nil)
	if d["unified"] != "" || len(d["records"].(map[string]any)["added"].([]any)) != 0 {
		t.Errorf("equal outputs: %v", d)
	}
	// An unparsed side (a config command's log) leaves records out.
	cfg := x.must(200, "GET", pathCommandLogs+"?command_id="+itoa(add), x.admin, nil)["results"].([]any)[0].(map[string]any)
	d = x.must(200, "GET", pathCommandLogs+itoa(second)+"/diff/?against="+itoa(int64(cfg["id"].(float64))), x.admin, nil)
	if _, ok := d["records"]; ok {
		t.Errorf("records of an unparsed side: %v", d["records"])
	}

	h := x.must(200, "GET", pathCommandLogs+"history/?device_id="+itoa(x.iosID)+"&command_id="+itoa(vlan), x.admin, nil)
	var marks []any
	for _, r := range h["results"].([]any) {
		marks = append(marks, r.(map[string]any)["changed"])
	}
	if len(marks) != 3 || marks[0] != true || marks[1] != false || marks[2] != false {
		t.Errorf("history marks (newest first): %v", marks)
	}
}

// TestLogDiffPermissions: both logs must be visible; one out of sight is a 404 either
// way round, no view permission at all a 403; bad parameters are 400s naming them.
func TestLogDiffPermissions(t *testing.T) {
	x := newXEnv(t, 100)
	_, other := x.device("sw2", "cisco_ios", x.iosPlat)
	vlan := x.command("VLANs", "show vlan", "show")
	run := func(dev int64) int64 {
		return logID(x.must(200, "POST", execPath(vlan), x.admin, map[string]any{"device_id": dev, "credential_token": x.token}))
	}
	mine1, mine2, theirs := run(x.iosID), run(x.iosID), run(other)

	viewer := x.user("viewer", false)
	x.grant("viewer", "netbox_toolkit_plugin.commandlog", []string{"view"}, `{"device__name": "sw1"}`)
	path := func(id, against int64) string { return pathCommandLogs + itoa(id) + "/diff/?against=" + itoa(against) }
	x.must(200, "GET", path(mine2, mine1), viewer, nil)
	x.must(200, "GET", pathCommandLogs+itoa(mine2)+"/diff/?against=previous", viewer, nil)
	for _, p := range []string{path(mine2, theirs), path(theirs, mine1), path(mine2, 99999)} {
		if r := x.do("GET", p, viewer, nil); r.status != 404 {
			t.Errorf("GET %s as a viewer of sw1 only: %d, want 404", p, r.status)
		}
	}
	// The admin sees both devices: two devices' outputs compare.
	x.must(200, "GET", path(theirs, mine1), x.admin, nil)
	// The first run has no earlier one.
	if r := x.do("GET", pathCommandLogs+itoa(mine1)+"/diff/?against=previous", viewer, nil); r.status != 404 {
		t.Errorf("previous of the first run: %d", r.status)
	}

	x.user("nobody", false)
	if r := x.do("GET", path(mine2, mine1), x.keyOf("nobody"), nil); r.status != 403 {
		t.Errorf("no view permission: %d", r.status)
	}
	for _, tt := range []struct{ query, field string }{
		{"", "against"}, {"?against=abc", "against"}, {"?against=1&x=2", "x"},
	} {
		r := x.do("GET", pathCommandLogs+itoa(mine2)+"/diff/"+tt.query, viewer, nil)
		if r.status != 400 || r.json(t)[tt.field] == nil {
			t.Errorf("%q: %d %s", tt.query, r.status, r.body)
		}
	}
	r := x.do("GET", pathCommandLogs+"history/?device_id=x", viewer, nil)
	if m := r.json(t); r.status != 400 || m["device_id"] == nil || m["command_id"] == nil {
		t.Errorf("history with bad parameters: %d %s", r.status, r.body)
	}
	h := x.must(200, "GET", pathCommandLogs+"history/?device_id="+itoa(other)+"&command_id="+itoa(vlan), viewer, nil)
	if len(h["results"].([]any)) != 0 {
		t.Errorf("history of a device out of sight: %v", h)
	}
}

// TestHistoryMarksCancelledRuns: a run someone cancelled is no failure of the device:
// a command's history says so (cancelled: true), beside a run that failed (false).
func TestHistoryMarksCancelledRuns(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	logs := []store.Values{
		{"command": cmd, "command_name": "Version", "command_type": "show", "device": x.iosID, "device_name": "sw1", "username": "admin",
			"success": false, "error_message": "Cancelled by admin; the output so far is kept.", "created": at,
			"failure": map[string]any{"phase": "command", "reason": "cancelled", "cancelled_by": "admin"}},
		{"command": cmd, "command_name": "Version", "command_type": "show", "device": x.iosID, "device_name": "sw1", "username": "admin",
			"success": false, "error_message": "Timed out after 30 s", "created": at.Add(time.Minute),
			"failure": map[string]any{"phase": "command", "reason": "timeout"}},
	}
	if err := x.db.InsertLogs(t.Context(), logs); err != nil {
		t.Fatal(err)
	}
	h := x.must(200, "GET", pathCommandLogs+"history/?device_id="+itoa(x.iosID)+"&command_id="+itoa(cmd), x.admin, nil)
	res := h["results"].([]any)
	if len(res) != 2 || res[0].(map[string]any)["cancelled"] != false || res[1].(map[string]any)["cancelled"] != true {
		t.Fatalf("history: %v", res)
	}
}
