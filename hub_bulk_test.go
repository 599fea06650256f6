//go:build !windows

package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fieldkit/store/pgtest"
)

// Bulk execute and notes at a hub, on SQLite and on PostgreSQL: real hub and edge
// processes, each edge with its own simulated device.

// startHubOn starts a hub process on PostgreSQL (pg) or SQLite.
func startHubOn(t *testing.T, pg bool) *nocHub {
	t.Helper()
	h := &nocHub{lab: &lab{data: t.TempDir(), key: labKey}, addr: freeAddr(t), env: hubEnv, store: "SQLite"}
	if pg {
		h.env = append(slices.Clone(hubEnv), "FIELDKIT_STORE_DRIVER=postgres", "FIELDKIT_STORE_DSN="+pgtest.DSN(t))
		h.store = "PostgreSQL"
	}
	h.server = startServerAt(t, h.lab, h.addr, h.env)
	return h
}

// startSites adds each site at the hub and starts its edge, which runs show version
// once so that the hub has a log naming the site's command; it fills in the site's ids
// at the hub.
func startSites(t *testing.T, h *nocHub, noc string, names ...string) []*nocSite {
	t.Helper()
	var sites []*nocSite
	for _, name := range names {
		s := &nocSite{name: name, runs: 1, lab: newLab(t, 0)}
		serviceSet(t, s.lab, "noc jobs")
		s.edge = startServer(t, s.lab, edgeEnv(h.base, h.cli(t, "hub", "site", "add", name), "FIELDKIT_HUB_CREDENTIAL_SET=noc jobs"))
		bulk(t, s.edge, s.lab, 1)
		sites = append(sites, s)
	}
	caughtUp(t, sites)
	for _, s := range sites {
		site := getJSON(t, h.base+"/api/dcim/sites/?name="+s.name, noc)["results"].([]any)[0].(map[string]any)
		s.slug, s.siteID = site["slug"].(string), int64(site["id"].(float64))
		logs := getJSON(t, h.base+"/api/plugins/toolkit/command-logs/?limit=1&site_id="+strconv.FormatInt(s.siteID, 10), noc)
		l := logs["results"].([]any)[0].(map[string]any)
		s.devID = int64(l["device"].(map[string]any)["id"].(float64))
		s.cmdID = int64(l["command"].(map[string]any)["id"].(float64))
	}
	return sites
}

// bulkBody is a bulk execute's body: the elements given as (command, device) pairs,
// with notes for all and extra fields. Their credential token is for the hub's own
// commands' checks: a site runs the hub's jobs with its own hub credential set.
func bulkBody(notes string, extra string, pairs ...[2]int64) string {
	var els []string
	for _, p := range pairs {
		els = append(els, fmt.Sprintf(`{"command_id": %d, "device_id": %d, "credential_token": "not needed at a site", "timeout": 30}`, p[0], p[1]))
	}
	return fmt.Sprintf(`{"notes": %q, "executions": [%s]%s}`, notes, strings.Join(els, ", "), extra)
}

// results are a bulk answer's elements.
func results(t *testing.T, ans map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	raw, _ := json.Marshal(ans["results"])
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("the bulk answer: %v", ans)
	}
	return out
}

// edgeNotes are the notes of a site's logs of the hub's jobs, in order.
func edgeNotes(t *testing.T, s *nocSite) []string {
	t.Helper()
	logs := getJSON(t, s.edge.base+"/api/plugins/toolkit/command-logs/?source=hub&ordering=id", s.lab.token)
	var out []string
	for _, l := range logs["results"].([]any) {
		out = append(out, fmt.Sprint(l.(map[string]any)["notes"]))
	}
	return out
}

// TestHubBulkExecute: a NOC user's bulk execute at the hub runs each element at its
// device's site, as a job (two at Paris, one at Lyon, in one request), beside elements
// the hub refuses itself; the answer is a bulk execute's with the hub's ids, each device
// receives its commands once, and the notes (the request's, or an element's own) are
// on the sites' logs and on the hub's copies. An execute's notes reach both logs too.
// With Lyon offline, the answer is 202: Paris's result, and Lyon's job to read later,
// done once Lyon is back. A user confined to Paris runs at Paris and is refused at
// Lyon's device, element by element.
func TestHubBulkExecute(t *testing.T) {
	processesOnly(t)
	for _, pg := range []bool{false, true} {
		name := map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg]
		t.Run(name, func(t *testing.T) { hubBulkOn(t, pg) })
	}
}

func hubBulkOn(t *testing.T, pg bool) {
	h := startHubOn(t, pg)
	h.cli(t, "user", "create", "noc", "--superuser")
	noc := h.cli(t, "token", "create", "noc")
	sites := startSites(t, h, noc, "Paris", "Lyon")
	paris, lyon := sites[0], sites[1]
	bulkPath := "/api/plugins/toolkit/commands/bulk-execute/"

	// 1. Two elements at Paris, one at Lyon, a command that does not exist, and Lyon's
	// command on Paris's device; one element with notes of its own.
	before := shown(sites)
	body := bulkBody("from the NOC", `, "include": ["output", "device"]`,
		[2]int64{paris.cmdID, paris.devID}, [2]int64{lyon.cmdID, lyon.devID}, [2]int64{paris.cmdID, paris.devID},
		[2]int64{1 << 40, paris.devID}, [2]int64{lyon.cmdID, paris.devID})
	body = strings.Replace(body, `"timeout": 30}`, `"timeout": 30, "notes": "Paris first"}`, 1)
	st, ans := hubPost(t, h.server, noc, bulkPath, body)
	res := results(t, ans)
	if st != 200 || len(res) != 5 || fmt.Sprint(ans["summary"]) != "map[failed:2 successful:3 total:5]" {
		t.Fatalf("the hub's bulk execute: %d %v", st, ans)
	}
	for i, want := range []*nocSite{paris, lyon, paris} {
		r := res[i]
		dev, _ := r["device"].(map[string]any)
		if r["execution_id"] != float64(i+1) || r["success"] != true || !strings.Contains(fmt.Sprint(r["output"]), "Cisco IOS Software") ||
			dev["id"] != float64(want.devID) || r["command_log_id"] == nil || !strings.HasSuffix(fmt.Sprint(r["job"]), "/") {
			t.Fatalf("element %d (at %s): %v", i+1, want.name, r)
		}
		hubLog := getJSON(t, fmt.Sprintf("%s/api/plugins/toolkit/command-logs/%v/", h.base, r["command_log_id"]), noc)
		wantNotes := map[int]string{0: "Paris first"}[i]
		if wantNotes == "" {
			wantNotes = "from the NOC"
		}
		if hubLog["notes"] != wantNotes || hubLog["source"] != "hub" || hubLog["device"].(map[string]any)["id"] != float64(want.devID) {
			t.Fatalf("the hub's log of element %d: %v", i+1, hubLog)
		}
	}
	if res[3]["success"] != false || res[3]["error"] != "Command not found." {
		t.Fatalf("an element of no command: %v", res[3])
	}
	if res[4]["success"] != false || !strings.Contains(fmt.Sprint(res[4]["error"]), "not at the site of the command") {
		t.Fatalf("Lyon's command on Paris's device: %v", res[4])
	}
	if after := shown(sites); !slices.Equal(after, []int{before[0] + 2, before[1] + 1}) {
		t.Fatalf("show versions received before the bulk %v, after %v: twice at Paris, once at Lyon", before, after)
	}
	if n := edgeNotes(t, paris); !slices.Equal(n, []string{"Paris first", "from the NOC"}) {
		t.Fatalf("Paris's logs of the hub's jobs have the notes %q", n)
	}
	if n := edgeNotes(t, lyon); !slices.Equal(n, []string{"from the NOC"}) {
		t.Fatalf("Lyon's logs of the hub's jobs have the notes %q", n)
	}

	// 2. An execute's notes: on the site's log and on the hub's.
	st, one := hubPost(t, h.server, noc, fmt.Sprintf("/api/plugins/toolkit/commands/%d/execute/", lyon.cmdID),
		fmt.Sprintf(`{"device_id": %d, "timeout": 30, "notes": "change 4711"}`, lyon.devID))
	if st != 200 || one["success"] != true {
		t.Fatalf("an execute with notes at the hub: %d %v", st, one)
	}
	if n := edgeNotes(t, lyon); !slices.Equal(n, []string{"from the NOC", "change 4711"}) {
		t.Fatalf("Lyon's logs of the hub's jobs have the notes %q", n)
	}
	if l := getJSON(t, fmt.Sprintf("%s/api/plugins/toolkit/command-logs/%v/", h.base, one["command_log_id"]), noc); l["notes"] != "change 4711" {
		t.Fatalf("the hub's log of the execute: %v", l)
	}

	// 3. Lyon offline: 202, Paris's answer and Lyon's job, which runs once Lyon is back.
	lyon.edge.stop(t)
	before = shown(sites)
	body = strings.Replace(bulkBody("while Lyon is down", `, "expires_in": 600`,
		[2]int64{paris.cmdID, paris.devID}, [2]int64{lyon.cmdID, lyon.devID}), `"timeout": 30`, `"timeout": 5`, -1)
	st, ans = hubPost(t, h.server, noc, bulkPath, body)
	res = results(t, ans)
	if st != 202 || fmt.Sprint(ans["summary"]) != "map[failed:0 pending:1 successful:1 total:2]" ||
		res[0]["success"] != true || res[1]["success"] != nil || res[1]["state"] != "queued" {
		t.Fatalf("a bulk execute with Lyon offline: %d %v", st, ans)
	}
	lyon.edge = startServer(t, lyon.lab, edgeEnv(h.base, h.cli(t, "hub", "site", "token", "Lyon"), "FIELDKIT_HUB_CREDENTIAL_SET=noc jobs"))
	jobURL := res[1]["job"].(string)
	eventually(t, "Lyon's job done", func() bool { return getJSON(t, jobURL, noc)["state"] == "done" })
	if job := getJSON(t, jobURL, noc); job["status"] != 200.0 || job["result"].(map[string]any)["success"] != true {
		t.Fatalf("Lyon's job: %v", job)
	}
	if after := shown(sites); !slices.Equal(after, []int{before[0] + 1, before[1] + 1}) {
		t.Fatalf("show versions received before %v, after %v: once at each site", before, after)
	}

	// 4. A user confined to Paris: Paris's element runs, Lyon's is refused as a device
	// it cannot see, and nothing runs at Lyon.
	nocParis, _ := nocUser(t, h, noc, "noc-paris",
		map[string]any{"name": "Paris devices", "object_types": []string{"dcim.device"}, "actions": []string{"view"},
			"constraints": map[string]any{"site__slug": paris.slug}},
		map[string]any{"name": "show commands", "object_types": []string{"netbox_toolkit_plugin.command"},
			"actions": []string{"view", "execute_show"}})
	before = shown(sites)
	st, ans = hubPost(t, h.server, nocParis, bulkPath, bulkBody("confined", "",
		[2]int64{paris.cmdID, paris.devID}, [2]int64{lyon.cmdID, lyon.devID}))
	res = results(t, ans)
	if st != 200 || res[0]["success"] != true || res[1]["success"] != false ||
		fmt.Sprint(res[1]["details"]) != fmt.Sprintf("map[device_id:[Device with ID %d not found.]]", lyon.devID) {
		t.Fatalf("the Paris NOC's bulk at Paris and Lyon: %d %v", st, ans)
	}
	if after := shown(sites); !slices.Equal(after, []int{before[0] + 1, before[1]}) {
		t.Fatalf("show versions received before %v, after %v: once at Paris, never at Lyon", before, after)
	}
	t.Logf("the hub ran on %s", h.store)
}
