package handlers

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

const statsPath = logPath + "statistics/"

func TestLogStatistics(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	e.db.SetClock(func() time.Time { return w.base.Add(26 * time.Hour) })
	want := `{"common_errors":[{"count":2,"error":"% Invalid input detected at '^' marker."},{"count":1,"error":"Timed out after 30 s"}],` +
		`"last_24h":{"failed":2,"successful":1,"total":3},"success_rate":40,` +
		`"top_commands":[{"command_name":"Show version","count":3},{"command_name":"Set hostname","count":2}],"total_logs":5}`
	if got := canonical(t, e.do("GET", statsPath, e.admin, nil).body); got != want {
		t.Fatalf("superuser statistics\n got %s\nwant %s", got, want)
	}
	north := e.user("north", false)
	e.grant("north", store.TypeCommandLog, []string{"view"}, `{"device__site__slug": "north"}`)
	want = `{"common_errors":[],"last_24h":{"failed":0,"successful":1,"total":1},"success_rate":100,` +
		`"top_commands":[{"command_name":"Set hostname","count":1},{"command_name":"Show version","count":1}],"total_logs":2}`
	if got := canonical(t, e.do("GET", statsPath, north, nil).body); got != want {
		t.Fatalf("constrained statistics\n got %s\nwant %s", got, want)
	}
	e.must(403, "GET", statsPath, e.user("nobody", false), nil)
	m := e.must(400, "GET", statsPath+"?device_id=1", e.admin, nil)
	if _, ok := m["device_id"]; !ok {
		t.Fatalf("unknown parameter: %v", m)
	}
	empty := newEnv(t)
	want = `{"common_errors":[],"last_24h":{"failed":0,"successful":0,"total":0},"success_rate":0,"top_commands":[],"total_logs":0}`
	if got := canonical(t, empty.do("GET", statsPath, empty.admin, nil).body); got != want {
		t.Fatalf("no logs: %s", got)
	}
}

// A cancelled execution is a log and a run of its command, but no failure: it counts
// in no failure, common error or success rate, for the superuser (from the counters) and
// for a viewer of one site alike.
func TestLogStatisticsLeaveCancelledOut(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	e.db.SetClock(func() time.Time { return w.base.Add(26 * time.Hour) })
	v := w.log(w.show, w.north, w.bobID, false, "Cancelled by bob; the output so far is kept.", 6)
	v["failure"] = map[string]any{"phase": "command", "reason": "cancelled", "cancelled_by": "bob"}
	if err := e.db.InsertLogs(t.Context(), []store.Values{v}); err != nil {
		t.Fatal(err)
	}
	want := `{"common_errors":[{"count":2,"error":"% Invalid input detected at '^' marker."},{"count":1,"error":"Timed out after 30 s"}],` +
		`"last_24h":{"failed":2,"successful":1,"total":4},"success_rate":40,` +
		`"top_commands":[{"command_name":"Show version","count":4},{"command_name":"Set hostname","count":2}],"total_logs":6}`
	if got := canonical(t, e.do("GET", statsPath, e.admin, nil).body); got != want {
		t.Fatalf("superuser statistics\n got %s\nwant %s", got, want)
	}
	north := e.user("north", false)
	e.grant("north", store.TypeCommandLog, []string{"view"}, `{"device__site__slug": "north"}`)
	want = `{"common_errors":[],"last_24h":{"failed":0,"successful":1,"total":2},"success_rate":100,` +
		`"top_commands":[{"command_name":"Show version","count":2},{"command_name":"Set hostname","count":1}],"total_logs":3}`
	if got := canonical(t, e.do("GET", statsPath, north, nil).body); got != want {
		t.Fatalf("constrained statistics\n got %s\nwant %s", got, want)
	}
}

// TestLogStatisticsPathsAgree checks that the counters (read for an
// unconstrained viewer) give exactly what the scoped queries compute, on random logs,
// after a retention prune too.
func TestLogStatisticsPathsAgree(t *testing.T) {
	e := newEnv(t)
	all := e.user("all", false)
	e.grant("all", store.TypeCommandLog, []string{"view"}, `[{"success": true}, {"success": false}]`)
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	e.db.SetClock(func() time.Time { return now })
	rng := rand.New(rand.NewPCG(1, 2))
	long := strings.Repeat("é", 99) // multi-byte: the 100-character cut is by characters
	msgs := []string{"", "% Invalid input", "Timed out after 30 s", long + "xA", long + "xB", "=1+1"}
	var in []store.Values
	longFailures, successes := 0, 0
	for range 3000 {
		ok := rng.IntN(3) > 0
		msg := ""
		if ok {
			successes++
		}
		if !ok {
			msg = msgs[rng.IntN(len(msgs))]
			if strings.HasPrefix(msg, long) {
				longFailures++
			}
		}
		in = append(in, store.Values{"command_name": fmt.Sprintf("cmd-%02d", rng.IntN(25)), "device_name": "d",
			"username": "u", "success": ok, "error_message": msg, "created": now.Add(-time.Duration(rng.IntN(72*60)) * time.Minute)})
	}
	// most through the bulk path, the rest one by one through the trigger
	if err := e.db.InsertLogs(t.Context(), in[:2500]); err != nil {
		t.Fatal(err)
	}
	for _, l := range in[2500:] {
		if _, err := e.db.CreateLog(t.Context(), l); err != nil {
			t.Fatal(err)
		}
	}
	agree := func(stage string) map[string]any {
		super, scoped := e.do("GET", statsPath, e.admin, nil), e.do("GET", statsPath, all, nil)
		if a, b := canonical(t, super.body), canonical(t, scoped.body); a != b {
			t.Fatalf("%s: counters and scoped queries disagree\ncounters %s\nscoped   %s", stage, a, b)
		}
		return super.json(t)
	}
	st := agree("after insert")
	rate := math.Round(float64(successes)*10000/3000) / 100
	if num(st["total_logs"]) != 3000 || st["success_rate"] != rate || len(st["top_commands"].([]any)) != 10 {
		t.Fatalf("statistics: %v", st)
	}
	found := false
	for _, x := range st["common_errors"].([]any) {
		m := x.(map[string]any)
		if m["error"] == long+"x" {
			found = num(m["count"]) == longFailures
		}
	}
	if !found {
		t.Fatalf("messages sharing their first 100 characters are not one group of %d: %v", longFailures, st["common_errors"])
	}
	cut, kept := now.Add(-48*time.Hour), 0
	for _, l := range in {
		if !l["created"].(time.Time).Before(cut) {
			kept++
		}
	}
	if _, err := e.db.PruneLogs(t.Context(), cut); err != nil {
		t.Fatal(err)
	}
	if st := agree("after a prune"); num(st["total_logs"]) != kept {
		t.Fatalf("after a prune: %v, want %d logs", st, kept)
	}
}

func canonical(t *testing.T, body []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
