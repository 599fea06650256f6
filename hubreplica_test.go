//go:build !windows

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fieldkit/hub"
	"fieldkit/store"
	"fieldkit/store/pgtest"
)

// Issue 40, item 6: hub processes are replicas. Two `fieldkit serve` hubs, each with
// its data directory, share one PostgreSQL; edges push to both (a round robin in front
// of them, as a load balancer would), and the NOC's API calls go to either: the answers
// are those of one hub.

// pgHubEnv is the settings of a hub process on the PostgreSQL database of dsn.
func pgHubEnv(dsn string) []string {
	return append(slices.Clone(hubEnv), "FIELDKIT_STORE_DRIVER=postgres", "FIELDKIT_STORE_DSN="+dsn)
}

// startPGHubProcess runs `fieldkit serve` as a hub on dsn, with a data directory of
// its own (a replica on another machine shares the database, not the files).
func startPGHubProcess(t *testing.T, dsn string) *nocHub {
	t.Helper()
	h := &nocHub{lab: &lab{data: t.TempDir(), key: labKey}, addr: freeAddr(t), env: pgHubEnv(dsn), store: "PostgreSQL"}
	h.server = startServerAt(t, h.lab, h.addr, h.env)
	return h
}

// roundRobin is a load balancer in front of hub processes: each request goes to the
// next one. It counts the pushes that carried records each hub took.
type roundRobin struct {
	srv     *httptest.Server
	targets []string
	next    atomic.Int64
	pushes  []atomic.Int64 // by target
}

func newRoundRobin(t *testing.T, targets ...string) *roundRobin {
	t.Helper()
	rr := &roundRobin{targets: targets, pushes: make([]atomic.Int64, len(targets))}
	rr.srv = httptest.NewServer(http.HandlerFunc(rr.serve))
	t.Cleanup(rr.srv.Close)
	return rr
}

func (rr *roundRobin) serve(w http.ResponseWriter, r *http.Request) {
	i := int(rr.next.Add(1)-1) % len(rr.targets)
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, rr.targets[i]+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	if r.URL.Path == hub.PushPath && res.StatusCode == 200 && records(body) > 0 {
		rr.pushes[i].Add(1)
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	io.Copy(w, res.Body)
}

// siteStamps are the created stamps of a site's logs at a hub on PostgreSQL, in id order.
func siteStamps(t *testing.T, h *nocHub, site string) []string {
	t.Helper()
	db := openPG(t, h)
	defer db.Close()
	return stampsOf(t, db, `SELECT l.created FROM command_logs l JOIN devices d ON d.id = l.device_id
		JOIN hub_sites s ON s.site_id = d.site_id WHERE s.name = '`+site+`' ORDER BY l.id`)
}

// apiJSON is a GET of the API with a token: the status and the body's raw JSON.
func apiJSON(t *testing.T, base, path, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Token "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

// sameAnswers holds the two hubs to one answer for each path: the same status and
// the same JSON, but for the links, which name the hub asked, and the sites' last_seen,
// which their polls move every moment.
func sameAnswers(t *testing.T, h1, h2 *nocHub, token string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		st1, raw1 := apiJSON(t, h1.base, p, token)
		st2, raw2 := apiJSON(t, h2.base, p, token)
		var b1, b2 any
		if st1 != 200 || st2 != 200 || json.Unmarshal(raw1, &b1) != nil ||
			json.Unmarshal(bytes.ReplaceAll(raw2, []byte(h2.base), []byte(h1.base)), &b2) != nil {
			t.Fatalf("GET %s: hub 1 %d %.300s, hub 2 %d %.300s", p, st1, raw1, st2, raw2)
		}
		if !reflect.DeepEqual(unseen(b1), unseen(b2)) {
			t.Fatalf("GET %s: the hubs answer differently:\nhub 1 %.600s\nhub 2 %.600s", p, raw1, raw2)
		}
	}
}

// unseen is a list's body without its results' last_seen.
func unseen(body any) any {
	if m, ok := body.(map[string]any); ok {
		results, _ := m["results"].([]any)
		for _, r := range results {
			if o, ok := r.(map[string]any); ok {
				delete(o, "last_seen")
			}
		}
	}
	return body
}

// TestHubReplicas: two hub processes on one PostgreSQL, edges pushing to both in turn,
// the NOC's calls at either: every log once and in order; the same lists, counts,
// statistics and sites from both, also after more logs came (no page kept from before);
// a web session and a token made at one work at the other, and a token deleted at one
// stops at once at the other; executes at both run once each at the device (each job
// taken once, whichever hub the site polls); a site revoked at one is refused at both.
func TestHubReplicas(t *testing.T) {
	processesOnly(t)
	dsn := pgtest.DSN(t)
	h1 := startPGHubProcess(t, dsn)
	h2 := startPGHubProcess(t, dsn)
	h1.cli(t, "user", "create", "noc", "--superuser")
	noc := h1.cli(t, "token", "create", "noc")
	rr := newRoundRobin(t, h1.base, h2.base)
	sites := []*nocSite{{name: "Paris", runs: 300}, {name: "Lyon", runs: 200}}
	for i, s := range sites {
		token := h1.cli(t, "hub", "site", "add", s.name)
		if i == 1 {
			token = h2.cli(t, "hub", "site", "token", s.name) // a token given at hub 2 works at hub 1 too
		}
		s.lab = newLab(t, 0)
		serviceSet(t, s.lab, "noc jobs")
		s.edge = startServer(t, s.lab, edgeEnv(rr.srv.URL, token, "FIELDKIT_HUB_CREDENTIAL_SET=noc jobs"))
	}
	work := func(part int) { // each edge pushes as it goes, the other one's last batches beside
		for _, s := range sites {
			bulk(t, s.edge, s.lab, s.runs/part)
		}
	}
	work(2)
	caughtUp(t, sites)
	for _, s := range sites {
		waitForEdgeLogs(t, func() []string { return siteStamps(t, h1, s.name) }, s.lab.data)
	}
	if p1, p2 := rr.pushes[0].Load(), rr.pushes[1].Load(); p1 == 0 || p2 == 0 {
		t.Fatalf("pushes with records taken: hub 1 %d, hub 2 %d; both should have taken some", p1, p2)
	} else {
		t.Logf("pushes with records taken: hub 1 %d, hub 2 %d", p1, p2)
	}
	logs := "/api/plugins/toolkit/command-logs/"
	views := []string{logs + "?limit=1000&ordering=created", logs + "?limit=20&offset=40&ordering=-created", logs + "statistics/",
		logs + "export/?format=json", "/api/dcim/devices/", "/api/plugins/toolkit/commands/", "/api/plugins/toolkit/hub-sites/?ordering=name"}
	sameAnswers(t, h1, h2, noc, views...)

	// More work: the pages each hub served before must not come back.
	work(2)
	caughtUp(t, sites)
	for _, s := range sites {
		waitForEdgeLogs(t, func() []string { return siteStamps(t, h2, s.name) }, s.lab.data)
	}
	sameAnswers(t, h1, h2, noc, views...)
	if n := getJSON(t, h2.base+logs+"?limit=1", noc)["count"]; n != 500.0 {
		t.Fatalf("hub 2 counts %v logs, want 500", n)
	}

	// A web login at hub 1 is a session at hub 2 (cookies are by host, not port);
	// its logout at hub 2 ends it at hub 1.
	password := h1.cli(t, "user", "create", "noc-web", "--superuser")
	web := webLogin(t, h1.base, "noc-web", password)
	web.base = h2.base
	if me := web.must(t, 200, "GET", logs+"?limit=1", ""); me["count"] != 500.0 {
		t.Fatalf("hub 2's logs through hub 1's session: %v", me["count"])
	}
	web.must(t, 204, "POST", "/ui/logout", "")
	web.base = h1.base
	web.must(t, 401, "GET", logs+"?limit=1", "")

	// A token made at hub 1 works at hub 2; deleted at hub 2, it stops at hub 1 at once
	// (hub 1 used it just before: a principal it kept would still let it in).
	st, made := hubPost(t, h1.server, noc, "/api/users/tokens/", `{"write_enabled": true, "description": "replica"}`)
	key, _ := made["key"].(string)
	if st != 201 || key == "" {
		t.Fatalf("a token made at hub 1: %d %v", st, made)
	}
	if st := getStatus(t, h2.base+logs+"?limit=1", key); st != 200 {
		t.Fatalf("hub 1's token at hub 2: %d", st)
	}
	if st := getStatus(t, h1.base+logs+"?limit=1", key); st != 200 {
		t.Fatalf("hub 1's token at hub 1: %d", st)
	}
	req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/users/tokens/%v/", h2.base, made["id"]), nil)
	req.Header.Set("Authorization", "Token "+noc)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 204 {
		t.Fatalf("the token deleted at hub 2: %v %v", res, err)
	}
	if st := getStatus(t, h1.base+logs+"?limit=1", key); st != 401 {
		t.Fatalf("the token deleted at hub 2, at hub 1: %d, want 401", st)
	}

	// Executes at both hubs at once, the site polling both in turn: each runs once.
	paris := sites[0]
	site := getJSON(t, h1.base+"/api/dcim/sites/?name=Paris", noc)["results"].([]any)[0].(map[string]any)
	dev := getJSON(t, fmt.Sprintf("%s/api/dcim/devices/?site_id=%v", h2.base, site["id"]), noc)["results"].([]any)[0].(map[string]any)
	paris.devID = int64(dev["id"].(float64))
	cmd := getJSON(t, fmt.Sprintf("%s%s?device_id=%d&limit=1", h1.base, logs, paris.devID), noc)["results"].([]any)[0].(map[string]any)
	paris.cmdID = int64(cmd["command"].(map[string]any)["id"].(float64))
	before := shown(sites)
	var wg sync.WaitGroup
	answers := make([]string, 4)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := []*nocHub{h1, h2}[i%2]
			body := fmt.Sprintf(`{"device_id": %d, "timeout": 60}`, paris.devID)
			req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/plugins/toolkit/commands/%d/execute/", h.base, paris.cmdID), strings.NewReader(body))
			req.Header.Set("Authorization", "Token "+noc)
			req.Header.Set("Content-Type", "application/json")
			answers[i] = "no answer"
			if res, err := http.DefaultClient.Do(req); err == nil {
				var ans map[string]any
				json.NewDecoder(res.Body).Decode(&ans)
				res.Body.Close()
				answers[i] = fmt.Sprint(res.StatusCode, " ", ans["success"], " ", strings.Contains(fmt.Sprint(ans["output"]), "Cisco IOS Software"))
			}
		}()
	}
	wg.Wait()
	if want := "200 true true"; slices.ContainsFunc(answers, func(a string) bool { return a != want }) {
		t.Fatalf("executes at hub 1, 2, 1, 2: %q, each should answer 200 with the device's output", answers)
	}
	paris.runs += 4
	if after := shown(sites); !slices.Equal(after, []int{before[0] + 4, before[1]}) {
		t.Fatalf("show versions received before the executes %v, after %v: Paris's device should have run each once", before, after)
	}
	jobs := openPG(t, h1)
	var done, all int
	if err := jobs.Reader().QueryRow(`SELECT count(*) FILTER (WHERE state = 'done'), count(*) FROM hub_jobs`).Scan(&done, &all); err != nil {
		t.Fatal(err)
	}
	jobs.Close()
	if done != 4 || all != 4 {
		t.Fatalf("hub_jobs: %d done of %d, want 4 of 4", done, all)
	}
	caughtUp(t, sites)
	waitForEdgeLogs(t, func() []string { return siteStamps(t, h1, "Paris") }, paris.lab.data)
	sameAnswers(t, h1, h2, noc, views...)

	// Lyon revoked at hub 2: refused at hub 1 at once, and its edge, pushing to both,
	// keeps its records.
	lyon := sites[1]
	lyonSite := h2.site(t, noc, "Lyon")
	id := getJSON(t, h2.base+"/api/plugins/toolkit/hub-sites/?name=Lyon", noc)["results"].([]any)[0].(map[string]any)["id"]
	if st, out := hubPost(t, h2.server, noc, fmt.Sprintf("/api/plugins/toolkit/hub-sites/%v/revoke/", id), "{}"); st != 200 {
		t.Fatalf("Lyon revoked at hub 2: %d %v", st, out)
	}
	if st, ans := push(t, h1.base, edgeToken(t, lyon), "1", []byte(`{"protocol": 1, "epoch": "x", "epoch_start": 1, "records": []}`)); st != 401 ||
		!strings.Contains(ans.Detail, "revoked") {
		t.Fatalf("Lyon's push at hub 1 after the revoke at hub 2: %d %+v", st, ans)
	}
	bulk(t, lyon.edge, lyon.lab, 5)
	eventually(t, "Lyon's edge is refused", func() bool { return lyon.edge.hubStatus(t).State == "refused" })
	if st := lyon.edge.hubStatus(t); st.Pending < 5 {
		t.Fatalf("Lyon's edge after the revoke: %+v", st)
	}
	for _, h := range []*nocHub{h1, h2} {
		if s := h.site(t, noc, "Lyon"); s.State != "revoked" || s.Records != lyonSite.Records {
			t.Fatalf("Lyon at %s after the revoke: %+v", h.base, s)
		}
	}
	if n := len(siteStamps(t, h1, "Lyon")); n != lyon.runs {
		t.Fatalf("the hubs hold %d logs of Lyon, want the %d before the revoke", n, lyon.runs)
	}
}

// edgeToken is the site token an edge pushes with, from its settings.
func edgeToken(t *testing.T, s *nocSite) string {
	t.Helper()
	for _, kv := range s.edge.cmd.Env {
		if v, ok := strings.CutPrefix(kv, "FIELDKIT_HUB_TOKEN="); ok {
			return v
		}
	}
	t.Fatal("the edge has no FIELDKIT_HUB_TOKEN")
	return ""
}

// openPG opens the store of a hub process on PostgreSQL.
func openPG(t *testing.T, h *nocHub) *store.DB {
	t.Helper()
	for _, kv := range h.env {
		if dsn, ok := strings.CutPrefix(kv, "FIELDKIT_STORE_DSN="); ok {
			db, err := store.OpenPostgres(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			return db
		}
	}
	t.Fatal("the hub is not on PostgreSQL")
	return nil
}

// restartMidBatch waits until a push's transaction is under way in the cluster (a
// statement on the ledger or the logs in a transaction), ends its connection there and
// then (as a restart does, but at that very moment), then restarts the cluster, down 2 s.
func restartMidBatch(pg *pgtest.Cluster) error {
	db, err := sql.Open("pgx", pg.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
		var n int
		if err := db.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid()
			AND xact_start IS NOT NULL AND (query LIKE '%hub_records%' OR query LIKE '%command_logs%')`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("no push's transaction seen in a minute")
		}
	}
	return pg.Restart(2 * time.Second)
}

// TestHubPostgresRestarted: PostgreSQL restarts (pg_ctl -m fast, down 2 s) while an
// edge executes and pushes to a hub process on it: the pushes cut off or refused
// meanwhile are sent again, every log arrives once and in order, and the hub, never
// restarted, answers its API from the restarted database.
func TestHubPostgresRestarted(t *testing.T) {
	processesOnly(t)
	pg := pgtest.NewCluster(t)
	h := startPGHubProcess(t, pg.DSN)
	h.cli(t, "user", "create", "noc", "--superuser")
	noc := h.cli(t, "token", "create", "noc")
	token := h.cli(t, "hub", "site", "add", "Paris")
	edgeLab := newLab(t, 0)
	edge := startServer(t, edgeLab, edgeEnv(h.base, token))
	const chunks, size = 10, 100
	restarted := make(chan error, 1)
	for i := range chunks {
		if i == 3 {
			go func() { restarted <- restartMidBatch(pg) }()
		}
		bulk(t, edge, edgeLab, size)
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	eventually(t, "the edge's backlog empties", func() bool { st := edge.hubStatus(t); return st.State == "ok" && st.Pending == 0 })
	got := waitForEdgeLogs(t, func() []string { return siteStamps(t, h, "Paris") }, edgeLab.data)
	if len(got) != chunks*size {
		t.Fatalf("%d logs at the hub, want %d", len(got), chunks*size)
	}
	if h.cmd.ProcessState != nil {
		t.Fatalf("the hub exited: %v", h.cmd.ProcessState)
	}
	failed, cut := 0, 0
	for _, l := range logLines(t, h.logs.String()) {
		if st, _ := l["status"].(float64); l["path"] == hub.PushPath && st >= 500 {
			failed++
			if l["user"] == "site:Paris" { // past the token's check: inside the batch's transaction
				cut++
			}
		}
	}
	if cut == 0 {
		t.Fatalf("no push failed in the middle of its batch at the hub: the restart came too late to test anything\n%s", h.logs.String())
	}
	eventually(t, "the hub's API answers from the restarted database", func() bool {
		st, raw := apiJSON(t, h.base, "/api/plugins/toolkit/command-logs/?limit=1", noc)
		var b struct{ Count int }
		return st == 200 && json.Unmarshal(raw, &b) == nil && b.Count == chunks*size
	})
	t.Logf("%d pushes failed while PostgreSQL restarted (%d in the middle of their batch); every log arrived once", failed, cut)
}
