//go:build !windows

package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
	"fieldkit/store/pgtest"
)

// Issue 40's "Done when", end to end: a hub and three edges, each a real `fieldkit
// serve` process with its own simulated device, and a NOC user at the hub with
// Debian's pynetbox.

// nocHub is a hub process: on PostgreSQL when FIELDKIT_TEST_PG_DSN names one (under
// CI=true, .ci/run starts one), else on SQLite.
type nocHub struct {
	*server
	lab   *lab
	addr  string
	env   []string // the hub's settings, for serve and the CLI alike
	store string   // "PostgreSQL" or "SQLite"
}

func startNOCHub(t *testing.T) *nocHub {
	t.Helper()
	h := &nocHub{lab: &lab{data: t.TempDir(), key: labKey}, addr: freeAddr(t), env: hubEnv, store: "SQLite"}
	why := "FIELDKIT_TEST_PG_DSN is not set"
	if os.Getenv("FIELDKIT_TEST_PG_DSN") != "" {
		h.env = append(slices.Clone(hubEnv), "FIELDKIT_STORE_DRIVER=postgres", "FIELDKIT_STORE_DSN="+pgtest.DSN(t))
		h.store, why = "PostgreSQL", "FIELDKIT_TEST_PG_DSN"
	}
	h.server = startServerAt(t, h.lab, h.addr, h.env)
	t.Logf("the hub runs on %s (%s)", h.store, why)
	return h
}

// cli runs a fieldkit command on the hub's store.
func (h *nocHub) cli(t *testing.T, args ...string) string {
	t.Helper()
	return strings.TrimSpace(runBinEnv(t, h.env, append(args, "--data", h.lab.data)...))
}

// restart starts the stopped hub again, at its address.
func (h *nocHub) restart(t *testing.T) {
	t.Helper()
	h.server = startServerAt(t, h.lab, h.addr, h.env)
}

// nocSite is an edge: its lab (data, simulated device), its process, the executions
// the test made there, and its ids at the hub.
type nocSite struct {
	name, slug           string
	runs                 int
	lab                  *lab
	edge                 *server
	siteID, devID, cmdID int64 // at the hub
}

// caughtUp waits until every edge has pushed all it holds and the hub acknowledged it.
func caughtUp(t *testing.T, sites []*nocSite) {
	t.Helper()
	for _, s := range sites {
		eventually(t, s.name+"'s backlog empties", func() bool { st := s.edge.hubStatus(t); return st.State == "ok" && st.Pending == 0 })
	}
}

// nocView is what testdata/pynetbox/hub.py saw with one token.
type nocView struct {
	Count int
	Logs  []struct {
		ID      int64
		Device  *int64
		Created string
		Site    *string // the log's own site's slug
	}
	DeviceSite map[string]string `json:"device_site"`
	Sites      map[string]struct {
		ByDevice    []int64 `json:"by_device"`
		BySite      []int64 `json:"by_site"`
		BySiteID    []int64 `json:"by_site_id"`
		CountSite   int     `json:"count_site"`
		CountSiteID int     `json:"count_site_id"`
		Commands    bySite
		Platforms   bySite
	}
	Commands []struct {
		ID   int64
		Site *string
	}
	Platforms []struct {
		ID    int64
		Slug  string
		Sites []string
	}
	Q map[string]struct {
		IDs   []int64
		Count int
	}
}

// bySite is a list filtered by site=SLUG and by site_id=ID, with the counts stated.
type bySite struct {
	BySite      []int64 `json:"by_site"`
	BySiteID    []int64 `json:"by_site_id"`
	CountSite   int     `json:"count_site"`
	CountSiteID int     `json:"count_site_id"`
}

// is: the lists by site and site_id hold the ids, and their counts say so.
func (b bySite) is(ids []int64) bool {
	return slices.Equal(b.BySite, ids) && slices.Equal(b.BySiteID, ids) && b.CountSite == len(ids) && b.CountSiteID == len(ids)
}

// nocSearches are the ?q= hub.py lists by: a phrase every log's output holds (show
// version's), and words none does.
var nocSearches = []string{"15.2(4)E10", "nothing-like-it"}

// siteFilters: command-logs take site and site_id (at a hub, the site a log ran at).
func siteFilters() bool {
	_, ok := store.CommandLogs.Filters["site_id"]
	return ok
}

// pynetboxView runs hub.py with a token against the hub.
func pynetboxView(t *testing.T, python string, h *nocHub, token string, sites []*nocSite) nocView {
	t.Helper()
	args := []string{filepath.Join("testdata", "pynetbox", "hub.py"), h.base, token}
	if siteFilters() {
		args = append(args, "--site-filters")
	}
	for _, q := range nocSearches {
		args = append(args, "--q="+q)
	}
	for _, s := range sites {
		args = append(args, fmt.Sprintf("%s:%d", s.slug, s.siteID))
	}
	cmd := exec.Command(python, args...)
	cmd.Env = serverEnv()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("hub.py: %v\n%s", err, stderr)
	}
	var v nocView
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("hub.py printed %q: %v", out, err)
	}
	return v
}

// micros are stamps as microseconds since 1970, sorted.
func micros(t *testing.T, stamps []string) []int64 {
	t.Helper()
	out := make([]int64, len(stamps))
	for i, s := range stamps {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("stamp %q: %v", s, err)
		}
		out[i] = at.UnixMicro()
	}
	slices.Sort(out)
	return out
}

// checkView checks what a token's pynetbox saw: exactly the logs of the sites it may
// see, each once, each carrying its device's site, each site's those its edge wrote (by their created stamps: the logs
// of one execution at the edge and at the hub), none of the others; the count the API
// states, the listing by a site's devices (and by site and site_id) the same ids, and
// by ?q= (nocSearches) all of them or none.
func checkView(t *testing.T, who string, v nocView, sites []*nocSite, visible ...*nocSite) {
	t.Helper()
	seen := map[int64]bool{}
	bySite := map[string][]int64{}
	stamps := map[string][]string{}
	for _, l := range v.Logs {
		if seen[l.ID] {
			t.Fatalf("%s: log %d listed twice", who, l.ID)
		}
		seen[l.ID] = true
		if l.Device == nil {
			t.Fatalf("%s: log %d has no device", who, l.ID)
		}
		// A log carries its site: its device's. The logs are then told apart by it, so
		// that each site's are those its edge wrote.
		slug := v.DeviceSite[strconv.FormatInt(*l.Device, 10)]
		if l.Site == nil || *l.Site != slug {
			t.Fatalf("%s: log %d says its site is %v, its device's is %q", who, l.ID, l.Site, slug)
		}
		bySite[slug] = append(bySite[slug], l.ID)
		stamps[slug] = append(stamps[slug], l.Created)
	}
	want := 0
	for _, s := range sites {
		got := v.Sites[s.slug]
		if !slices.Contains(visible, s) {
			if len(bySite[s.slug]) != 0 || len(got.ByDevice) != 0 || len(got.BySite) != 0 || len(got.BySiteID) != 0 ||
				got.CountSite != 0 || got.CountSiteID != 0 {
				t.Fatalf("%s sees logs of %s: %d listed, %v by its devices, %v by site, %v by site_id, count %d", who, s.name,
					len(bySite[s.slug]), got.ByDevice, got.BySite, got.BySiteID, got.CountSite)
			}
			continue
		}
		edge := logStamps(t, s.lab.data)
		if len(edge) != s.runs {
			t.Fatalf("%s holds %d logs, the test ran %d executions there", s.name, len(edge), s.runs)
		}
		want += len(edge)
		if h, e := micros(t, stamps[s.slug]), micros(t, edge); !slices.Equal(h, e) {
			t.Fatalf("%s: the hub lists %d logs of %s, its edge holds %d; not the same logs (by their times)", who, len(h), s.name, len(e))
		}
		ids := slices.Sorted(slices.Values(bySite[s.slug]))
		if !slices.Equal(got.ByDevice, ids) {
			t.Fatalf("%s: the logs of %s's devices are %v, the listing's %v", who, s.name, got.ByDevice, ids)
		}
		if siteFilters() && (!slices.Equal(got.BySite, ids) || !slices.Equal(got.BySiteID, ids) ||
			got.CountSite != len(ids) || got.CountSiteID != len(ids)) {
			t.Fatalf("%s: %s's logs by site %v (count %d), by site_id %v (count %d), the listing's %v", who, s.name,
				got.BySite, got.CountSite, got.BySiteID, got.CountSiteID, ids)
		}
	}
	if v.Count != want || len(v.Logs) != want {
		t.Fatalf("%s: the API counts %d logs and pynetbox lists %d, the visible sites hold %d", who, v.Count, len(v.Logs), want)
	}
	all := slices.Sorted(maps.Keys(seen))
	if q := v.Q[nocSearches[0]]; !slices.Equal(q.IDs, all) || q.Count != want {
		t.Fatalf("%s: q=%s lists %d logs (count %d), every one of the %d it sees should match", who, nocSearches[0], len(q.IDs), q.Count, want)
	}
	if q := v.Q[nocSearches[1]]; len(q.IDs) != 0 || q.Count != 0 {
		t.Fatalf("%s: q=%s lists %v (count %d), want none", who, nocSearches[1], q.IDs, q.Count)
	}
}

// checkInventory checks the devices, commands and platforms a token's pynetbox saw:
// each carries its site, one of those it may see (every device, and every site's
// commands, when it may see them all); a platform lists the sites that have it; the
// lists by site and site_id hold each site's, with their counts.
func checkInventory(t *testing.T, who string, v nocView, sites []*nocSite, visible ...*nocSite) {
	t.Helper()
	commands, platforms := map[string][]int64{}, map[string][]int64{}
	for _, c := range v.Commands {
		if c.Site == nil {
			t.Fatalf("%s: command %d has no site (every command at this hub is a site's)", who, c.ID)
		}
		commands[*c.Site] = append(commands[*c.Site], c.ID)
	}
	for _, p := range v.Platforms {
		if len(p.Sites) == 0 {
			t.Fatalf("%s: platform %s has no site (every platform at this hub is a site's)", who, p.Slug)
		}
		for _, slug := range p.Sites {
			platforms[slug] = append(platforms[slug], p.ID)
		}
	}
	for _, s := range sites {
		seen, got := slices.Contains(visible, s), v.Sites[s.slug]
		devices := 0
		for _, slug := range v.DeviceSite {
			if slug == s.slug {
				devices++
			}
		}
		if seen != (devices == 1) || seen != (len(commands[s.slug]) > 0) || seen != slices.Contains(commands[s.slug], s.cmdID) {
			t.Fatalf("%s: %s's device seen %d times, its commands %v (its show version %d); may see them: %v", who, s.name,
				devices, commands[s.slug], s.cmdID, seen)
		}
		if !got.Commands.is(commands[s.slug]) {
			t.Fatalf("%s: %s's commands %v, by site and site_id %+v", who, s.name, commands[s.slug], got.Commands)
		}
		// A confined token sees the platforms of its sites, and the other sites that
		// share them: those it lists by another site are among its own.
		if seen && len(platforms[s.slug]) == 0 {
			t.Fatalf("%s: no platform of %s", who, s.name)
		}
		if !got.Platforms.is(slices.Sorted(slices.Values(platforms[s.slug]))) {
			t.Fatalf("%s: %s's platforms %v, by site and site_id %+v", who, s.name, platforms[s.slug], got.Platforms)
		}
	}
}

// checkLogViews: a token's statistics, JSON and CSV exports hold the logs it lists
// (want), no more.
func checkLogViews(t *testing.T, h *nocHub, who, token string, want int) {
	t.Helper()
	logs := h.base + "/api/plugins/toolkit/command-logs/"
	if n := getJSON(t, logs+"?limit=1", token)["count"]; n != float64(want) {
		t.Fatalf("%s: %v logs listed, want %d", who, n, want)
	}
	if st := getJSON(t, logs+"statistics/", token); st["total_logs"] != float64(want) {
		t.Fatalf("%s: the statistics count %v logs, want %d", who, st["total_logs"], want)
	}
	if ex := getJSON(t, logs+"export/?format=json", token); ex["count"] != float64(want) || len(ex["results"].([]any)) != want {
		t.Fatalf("%s: the JSON export: count %v, %d results, want %d", who, ex["count"], len(ex["results"].([]any)), want)
	}
	req, _ := http.NewRequest("GET", logs+"export/?format=csv", nil)
	req.Header.Set("Authorization", "Token "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(res.Body).ReadAll()
	res.Body.Close()
	if err != nil || len(rows) != want+1 {
		t.Fatalf("%s: the CSV export: %d rows (with its header), want %d logs: %v", who, len(rows), want, err)
	}
}

// hubExec runs a command at the hub with a token: the status and the body.
func hubExec(t *testing.T, h *nocHub, token string, cmdID, devID int64) (int, map[string]any) {
	t.Helper()
	return hubPost(t, h.server, token, fmt.Sprintf("/api/plugins/toolkit/commands/%d/execute/", cmdID),
		fmt.Sprintf(`{"device_id": %d, "timeout": 60}`, devID))
}

// nocUser makes a user at the hub with `fieldkit user create` and `token create`, and
// grants it permissions through the API as the NOC (admin); it returns its token and
// password.
func nocUser(t *testing.T, h *nocHub, admin, name string, perms ...map[string]any) (token, password string) {
	t.Helper()
	password = h.cli(t, "user", "create", name)
	token = h.cli(t, "token", "create", name)
	uid := getJSON(t, h.base+"/api/users/users/?username="+name, admin)["results"].([]any)[0].(map[string]any)["id"]
	for _, p := range perms {
		p = maps.Clone(p)
		p["name"], p["users"] = fmt.Sprint(p["name"], " (", name, ")"), []any{uid}
		body, _ := json.Marshal(p)
		if st, out := hubPost(t, h.server, admin, "/api/users/permissions/", string(body)); st != 201 {
			t.Fatalf("permission %s: %d %v", p["name"], st, out)
		}
	}
	return token, password
}

// getStatus is the status of a GET with a token.
func getStatus(t *testing.T, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Token "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// shown is how many times each site's device received show version.
func shown(sites []*nocSite) []int {
	var out []int
	for _, s := range sites {
		n := 0
		for _, c := range s.lab.dev.Commands() {
			if c == "show version" {
				n++
			}
		}
		out = append(out, n)
	}
	return out
}

// TestHubNOC: a NOC user, at a hub with three sites, lists every site's logs with
// pynetbox (each once, the count exact, each site's by its devices and by site), runs
// show version on a site's device through the hub and gets the device's output, stops
// the hub while the sites go on executing, and after its restart finds every log once.
// A NOC user confined to one site by object permissions sees that site's logs only and
// runs commands there, never at another site.
func TestHubNOC(t *testing.T) {
	processesOnly(t)
	python := pynetboxPython(t)
	h := startNOCHub(t)
	h.cli(t, "user", "create", "noc", "--superuser")
	noc := h.cli(t, "token", "create", "noc")
	sites := []*nocSite{{name: "Paris", runs: 30}, {name: "Lyon", runs: 20}, {name: "Berlin", runs: 10}}
	for _, s := range sites {
		token := h.cli(t, "hub", "site", "add", s.name)
		s.lab = newLab(t, 0)
		serviceSet(t, s.lab, "noc jobs")
		s.edge = startServer(t, s.lab, edgeEnv(h.base, token, "FIELDKIT_HUB_CREDENTIAL_SET=noc jobs"))
	}
	for _, s := range sites {
		bulk(t, s.edge, s.lab, s.runs)
	}
	caughtUp(t, sites)
	for _, s := range sites {
		site := getJSON(t, h.base+"/api/dcim/sites/?name="+s.name, noc)["results"].([]any)[0].(map[string]any)
		s.slug, s.siteID = site["slug"].(string), int64(site["id"].(float64))
		devs := getJSON(t, h.base+"/api/dcim/devices/?site_id="+strconv.FormatInt(s.siteID, 10), noc)
		if devs["count"] != 1.0 {
			t.Fatalf("the hub's devices at %s: %v", s.name, devs)
		}
		s.devID = int64(devs["results"].([]any)[0].(map[string]any)["id"].(float64))
		// The site's show version at the hub: the command its logs ran (each site has its own).
		logs := getJSON(t, fmt.Sprintf("%s/api/plugins/toolkit/command-logs/?device_id=%d&limit=1", h.base, s.devID), noc)
		if r, _ := logs["results"].([]any); len(r) == 0 {
			t.Fatalf("the hub's logs of %s's device: %v", s.name, logs)
		}
		s.cmdID = int64(logs["results"].([]any)[0].(map[string]any)["command"].(map[string]any)["id"].(float64))
	}

	// 1. Every site's logs, devices, commands and platforms, with pynetbox.
	all := pynetboxView(t, python, h, noc, sites)
	checkView(t, "the NOC", all, sites, sites...)
	checkInventory(t, "the NOC", all, sites, sites...)

	// 2. Show version on Paris's device, through the hub: Paris's device answers.
	paris, lyon := sites[0], sites[1]
	before := shown(sites)
	st, ans := hubExec(t, h, noc, paris.cmdID, paris.devID)
	if st != 200 || ans["success"] != true || !strings.Contains(fmt.Sprint(ans["output"]), "Cisco IOS Software") {
		t.Fatalf("show version at Paris through the hub: %d %v", st, ans)
	}
	paris.runs++
	if after := shown(sites); !slices.Equal(after, []int{before[0] + 1, before[1], before[2]}) {
		t.Fatalf("show versions received before the hub's execute %v, after %v: Paris's device alone should have run it, once", before, after)
	}

	// 4 (before the hub stops, so that the last count holds its logs too). A NOC user
	// confined to Paris: its logs, devices, commands and platforms, and the commands to
	// run there; refused at Lyon as for what does not exist (404), and nothing runs there.
	perm := func(name string, types []string, actions []string, constraints map[string]any) map[string]any {
		return map[string]any{"name": name, "object_types": types, "actions": actions, "constraints": constraints}
	}
	nocParis, parisPassword := nocUser(t, h, noc, "noc-paris",
		perm("Paris logs", []string{store.TypeCommandLog}, []string{"view"}, map[string]any{"device__site__slug": paris.slug}),
		perm("Paris devices", []string{store.TypeDevice}, []string{"view"}, map[string]any{"site__slug": paris.slug}),
		perm("Paris commands", []string{store.TypeCommand}, []string{"view", "execute_show"}, map[string]any{"site__slug": paris.slug}),
		perm("Paris platforms", []string{store.TypePlatform}, []string{"view"}, map[string]any{"sites__slug": paris.slug}))
	parisView := pynetboxView(t, python, h, nocParis, sites)
	checkView(t, "the Paris NOC", parisView, sites, paris)
	checkInventory(t, "the Paris NOC", parisView, sites, paris)
	before = shown(sites)
	if st, ans := hubExec(t, h, nocParis, paris.cmdID, paris.devID); st != 200 || ans["success"] != true {
		t.Fatalf("the Paris NOC at Paris: %d %v", st, ans)
	}
	paris.runs++
	st, refused := hubExec(t, h, nocParis, lyon.cmdID, lyon.devID)
	stNone, _ := hubExec(t, h, nocParis, 1<<40, lyon.devID)
	if st != 404 || stNone != 404 {
		t.Fatalf("the Paris NOC runs Lyon's command at Lyon: %d %v (a command that does not exist: %d)", st, refused, stNone)
	}
	// In a bulk execute, the element is refused as a command that does not exist.
	_, bulkAns := hubPost(t, h.server, nocParis, "/api/plugins/toolkit/commands/bulk-execute/",
		fmt.Sprintf(`{"executions": [{"command_id": %d, "device_id": %d, "credential_token": "fkc_none"}]}`, lyon.cmdID, lyon.devID))
	if res, _ := bulkAns["results"].([]any); len(res) != 1 || res[0].(map[string]any)["error"] != "Command not found." {
		t.Fatalf("the Paris NOC bulk-executes Lyon's command at Lyon: %v", bulkAns)
	}
	for _, path := range []string{fmt.Sprintf("/api/plugins/toolkit/commands/%d/", lyon.cmdID), fmt.Sprintf("/api/dcim/devices/%d/", lyon.devID)} {
		if st := getStatus(t, h.base+path, nocParis); st != 404 {
			t.Fatalf("the Paris NOC reads %s: %d", path, st)
		}
	}
	if st := getStatus(t, fmt.Sprintf("%s/api/plugins/toolkit/commands/%d/", h.base, paris.cmdID), nocParis); st != 200 {
		t.Fatalf("the Paris NOC reads Paris's command: %d", st)
	}
	// In the web UI's session, the same lists.
	web := webLogin(t, h.base, "noc-paris", parisPassword)
	if got := web.must(t, 200, "GET", "/api/plugins/toolkit/commands/", ""); got["count"] != float64(len(parisView.Commands)) {
		t.Fatalf("the Paris NOC's commands in the web UI: %v, with pynetbox %d", got["count"], len(parisView.Commands))
	}
	// One who sees every device and command but may run show commands at Paris only:
	// refused at Lyon (403), as when no permission allows it.
	nocSplit, _ := nocUser(t, h, noc, "noc-split",
		perm("every device", []string{store.TypeDevice}, []string{"view"}, nil),
		perm("every command", []string{store.TypeCommand}, []string{"view"}, nil),
		perm("show at Paris", []string{store.TypeCommand}, []string{"execute_show"}, map[string]any{"site__slug": paris.slug}))
	if st, ans := hubExec(t, h, nocSplit, lyon.cmdID, lyon.devID); st != 403 {
		t.Fatalf("a user who may run show commands at Paris only, at Lyon: %d %v", st, ans)
	}
	// Paris's command on Lyon's device: a site's command runs on its own devices only.
	if st, ans := hubExec(t, h, nocSplit, paris.cmdID, lyon.devID); st != 400 || ans["device_id"] == nil {
		t.Fatalf("Paris's command on Lyon's device: %d %v", st, ans)
	}
	if after := shown(sites); !slices.Equal(after, []int{before[0] + 1, before[1], before[2]}) {
		t.Fatalf("show versions received before the Paris NOC's executes %v, after %v: once at Paris, never at Lyon", before, after)
	}
	// A user who may run show commands but see no device runs nowhere, answered alike.
	blind, _ := nocUser(t, h, noc, "noc-blind", map[string]any{"name": "show commands", "object_types": []string{store.TypeCommand},
		"actions": []string{"view", "execute_show"}})
	if st, ans := hubExec(t, h, blind, paris.cmdID, paris.devID); st != 400 ||
		fmt.Sprint(ans["device_id"]) != fmt.Sprintf("[Device with ID %d not found.]", paris.devID) {
		t.Fatalf("a user who sees no device, at Paris: %d %v", st, ans)
	}
	lyonLog := getJSON(t, fmt.Sprintf("%s/api/plugins/toolkit/command-logs/?device_id=%d&limit=1", h.base, lyon.devID), noc)["results"].([]any)[0].(map[string]any)
	if st := getStatus(t, fmt.Sprintf("%s/api/plugins/toolkit/command-logs/%v/", h.base, lyonLog["id"]), nocParis); st != 404 {
		t.Fatalf("the Paris NOC reads a log of Lyon: %d", st)
	}
	caughtUp(t, sites)

	// 3. The hub stops for a while; the sites go on executing, and keep their records.
	h.stop(t)
	for i, s := range sites {
		n := 15 + 5*i
		bulk(t, s.edge, s.lab, n)
		s.runs += n
		eventually(t, s.name+" says the hub is unreachable", func() bool { return s.edge.hubStatus(t).State == "unreachable" })
		if st := s.edge.hubStatus(t); st.Pending < int64(n) {
			t.Fatalf("%s holds %d records for the %d logs written while the hub was down", s.name, st.Pending, n)
		}
	}
	h.restart(t)
	caughtUp(t, sites)
	checkView(t, "the NOC after the hub's restart", pynetboxView(t, python, h, noc, sites), sites, sites...)
	checkView(t, "the Paris NOC after the hub's restart", pynetboxView(t, python, h, nocParis, sites), sites, paris)
	checkLogViews(t, h, "the Paris NOC", nocParis, paris.runs)
	// The site's log says who asked from the hub: the NOC, then the Paris NOC.
	hubLogs := getJSON(t, paris.edge.base+"/api/plugins/toolkit/command-logs/?source=hub&ordering=created", paris.lab.token)
	var asked []string
	for _, l := range hubLogs["results"].([]any) {
		asked = append(asked, fmt.Sprint(l.(map[string]any)["client_address"]))
	}
	if !slices.Equal(asked, []string{"hub:noc", "hub:noc-paris"}) {
		t.Fatalf("Paris's logs of the hub's jobs were asked by %v", asked)
	}
	checkHubAPI(t, h, noc)
	t.Logf("the hub (on %s) holds %d logs of 3 sites, each once", h.store, paris.runs+lyon.runs+sites[2].runs)
}

// checkHubAPI: the rest of the API a NOC uses at the hub answers from its store, on
// PostgreSQL as on SQLite: the statistics and both exports hold every log the list
// counts, a web login's session is kept in the store and serves the UI's API, and ?q=
// finds the logs by their output, on both stores.
func checkHubAPI(t *testing.T, h *nocHub, token string) {
	t.Helper()
	logs := h.base + "/api/plugins/toolkit/command-logs/"
	count := getJSON(t, logs+"?limit=1", token)["count"].(float64)
	checkLogViews(t, h, "the hub", token, int(count))
	password := h.cli(t, "user", "create", "noc-web", "--superuser")
	web := webLogin(t, h.base, "noc-web", password)
	if me := web.must(t, 200, "GET", "/api/plugins/toolkit/command-logs/?limit=1", ""); me["count"] != count {
		t.Fatalf("the hub's logs through a web session: %v", me["count"])
	}
	// ?q=: the list, its count and the export, through a token and through the web
	// session (the UI's search box), a phrase of show version's output in every log.
	q := "?q=" + url.QueryEscape("IOS software 15.2(4)E10")
	if got := getJSON(t, logs+q+"&limit=1", token)["count"]; got != count {
		t.Fatalf("q at the hub (on %s): %v logs of %v", h.store, got, count)
	}
	if ex := getJSON(t, logs+"export/"+q+"&format=json", token); ex["count"] != count {
		t.Fatalf("q in the hub's JSON export (on %s): %v logs of %v", h.store, ex["count"], count)
	}
	if me := web.must(t, 200, "GET", "/api/plugins/toolkit/command-logs/"+q+"&limit=1", ""); me["count"] != count {
		t.Fatalf("q through a web session at the hub (on %s): %v logs of %v", h.store, me["count"], count)
	}
	if none := getJSON(t, logs+"?q="+url.QueryEscape("software IOS-15.2"), token); none["count"] != 0.0 {
		t.Fatalf("q of words out of their order at the hub (on %s): %v", h.store, none["count"])
	}
}
