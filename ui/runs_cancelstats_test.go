package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"fieldkit/store"
)

// A run someone cancelled is nobody's failure (#43 item 5): cancelled through the web
// UI's Cancel as a person does, its log says so (failure.reason cancelled), and the
// statistics count it as a log and a run of its command but in neither last_24h's
// failures, the success rate nor common_errors, while a command the device refused is a
// failure there; for a superuser (the counters), a viewer of every log and one confined
// to the device's site (the scoped queries) alike.
func TestCancelledRunIsNoFailureInStatistics(t *testing.T) {
	r := newRunEnv(t, nil)
	run := func(cmd int64, timeout int) *stream {
		return r.b.startRun(cmd, map[string]any{"device_id": r.device, "credential_set_id": r.setID, "timeout": timeout})
	}
	result := func(s *stream) map[string]any {
		evs := s.until("result")
		return evs[len(evs)-1].data
	}

	if ok := result(run(r.command, 30)); ok["success"] != true {
		t.Fatalf("show version: %v", ok)
	}
	bad := result(run(r.commandOf("Nonsense", "show nonsense", "show"), 30))
	badMsg, _ := bad["error_message"].(string)
	if bad["success"] != false || badMsg == "" || strings.HasPrefix(badMsg, "Cancelled") {
		t.Fatalf("a command the device refuses: %v", bad)
	}
	s := run(r.commandOf("Tech", "show tech-support", "show"), 60)
	id := s.next().data["run_id"].(string)
	s.until("output")
	r.b.must(202, "POST", "/ui/api/runs/"+id+"/cancel/", map[string]any{})
	cancelled := result(s)
	if msg, _ := cancelled["error_message"].(string); cancelled["success"] != false || !strings.HasPrefix(msg, "Cancelled by alice") {
		t.Fatalf("cancelled run: %v", cancelled["error_message"])
	}

	l := r.b.must(200, "GET", fmt.Sprintf("/api/plugins/toolkit/command-logs/%d/", num(cancelled["command_log_id"])), nil)
	if f, _ := l["failure"].(map[string]any); l["success"] != false || f["reason"] != "cancelled" || f["cancelled_by"] != "alice" {
		t.Errorf("the cancelled log: success %v, failure %v", l["success"], l["failure"])
	}
	if f, _ := r.b.must(200, "GET", fmt.Sprintf("/api/plugins/toolkit/command-logs/%d/", num(bad["command_log_id"])), nil)["failure"].(map[string]any); f["reason"] == "cancelled" {
		t.Errorf("the refused command's log reads as cancelled: %v", f)
	}

	want := map[string]any{
		"total_logs": 3.0, "success_rate": 50.0,
		"last_24h":      map[string]any{"total": 3.0, "successful": 1.0, "failed": 1.0},
		"common_errors": []any{map[string]any{"error": badMsg, "count": 1.0}},
	}
	lab, _ := r.user("lab", "pw", false)
	constraint := json.RawMessage(`{"device__site__slug": "lab"}`)
	name := "lab logs"
	if _, err := r.db.CreatePermission(context.Background(), store.PermissionInput{Name: &name, ObjectTypes: &[]string{store.TypeCommandLog},
		Actions: &[]string{"view"}, Constraints: &constraint, Users: &[]int64{lab}}, store.All); err != nil {
		t.Fatal(err)
	}
	confined := r.browser()
	confined.login("lab", "pw")
	r.user("root", "pw", true)
	super := r.browser()
	super.login("root", "pw")
	for who, b := range map[string]*browser{"a superuser's": super, "every log's": r.b, "the lab site's": confined} {
		st := b.must(200, "GET", "/api/plugins/toolkit/command-logs/statistics/", nil)
		for k, v := range want {
			if got, _ := json.Marshal(st[k]); string(got) != mustJSON(t, v) {
				t.Errorf("%s statistics: %s = %s, want %s", who, k, got, mustJSON(t, v))
			}
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
