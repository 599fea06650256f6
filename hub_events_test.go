//go:build !windows

package main

import (
	"fmt"
	"slices"
	"testing"
)

// TestHubEvents: a hub raises its events for the logs its sites push, on SQLite and on
// PostgreSQL alike. An event rule on command logs sends a signed webhook to a real
// receiver; two edges push their logs; the receiver gets one delivery per log the hub
// stored, each naming that log, each tried once. On PostgreSQL two hub processes share
// the database, each taking one edge's pushes and each matching events and sending
// deliveries: still one delivery per log.
func TestHubEvents(t *testing.T) {
	processesOnly(t)
	for _, pg := range []bool{false, true} {
		name := map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg]
		t.Run(name, func(t *testing.T) { hubEventsOn(t, pg) })
	}
}

func hubEventsOn(t *testing.T, pg bool) {
	h := startHubOn(t, pg)
	h.cli(t, "user", "create", "noc", "--superuser")
	noc := h.cli(t, "token", "create", "noc")
	rc := newHookReceiver(t, "hub hook secret")
	st, hook := hubPost(t, h.server, noc, "/api/extras/webhooks/",
		fmt.Sprintf(`{"name": "NOC receiver", "payload_url": %q, "secret": %q}`, rc.url, rc.secret))
	if st != 201 {
		t.Fatalf("the webhook: %d %v", st, hook)
	}
	if st, rule := hubPost(t, h.server, noc, "/api/extras/event-rules/", fmt.Sprintf(`{"name": "every log",
		"object_types": ["netbox_toolkit_plugin.commandlog"], "event_types": ["object_created"],
		"action_object_id": %v, "state_changes_only": false}`, hook["id"])); st != 201 {
		t.Fatalf("the event rule: %d %v", st, rule)
	}
	// The second hub process (PostgreSQL): its own data directory, the same database.
	hubs := []*server{h.server}
	if pg {
		hubs = append(hubs, startServer(t, &lab{data: t.TempDir(), key: labKey}, h.env))
	}
	var sites []*nocSite
	for i, name := range []string{"Paris", "Lyon"} {
		s := &nocSite{name: name, runs: 12 + 8*i, lab: newLab(t, 0)}
		s.edge = startServer(t, s.lab, edgeEnv(hubs[i%len(hubs)].base, h.cli(t, "hub", "site", "add", name)))
		sites = append(sites, s)
	}
	for _, s := range sites {
		bulk(t, s.edge, s.lab, s.runs)
	}
	caughtUp(t, sites)
	got := rc.wait(t, sites[0].runs+sites[1].runs)
	var delivered []int64
	for _, d := range got {
		data, _ := d["data"].(map[string]any)
		id, _ := data["id"].(float64)
		if d["event"] != "created" || d["model"] != "commandlog" || d["event_rule"] != "every log" || data["notes"] != bulkNotes {
			t.Fatalf("a delivery: %v", d)
		}
		delivered = append(delivered, int64(id))
	}
	slices.Sort(delivered)
	var logs []int64
	for _, l := range getJSON(t, h.base+"/api/plugins/toolkit/command-logs/?limit=1000&ordering=id", noc)["results"].([]any) {
		logs = append(logs, int64(l.(map[string]any)["id"].(float64)))
	}
	if !slices.Equal(delivered, logs) {
		t.Fatalf("the receiver got the logs %v, the hub holds %v: one delivery per log", delivered, logs)
	}
	ds := getJSON(t, h.base+"/api/plugins/toolkit/webhook-deliveries/?limit=1000", noc)
	for _, d := range ds["results"].([]any) {
		if d := d.(map[string]any); d["attempts"] != 1.0 || d["status"].(map[string]any)["value"] != "delivered" {
			t.Fatalf("a delivery at the hub: %v", d)
		}
	}
	if ds["count"] != float64(len(logs)) {
		t.Fatalf("the hub recorded %v deliveries for %d logs", ds["count"], len(logs))
	}
	t.Logf("the hub (%d processes on %s) delivered one webhook per log of %d", len(hubs), h.store, len(logs))
}
