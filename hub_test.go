//go:build !windows

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fieldkit/hub"
	"fieldkit/store"
)

// The hub's end-to-end tests: real `fieldkit serve` processes, an edge pushing to a hub
// (on SQLite) over real HTTP, through a proxy that can lose an answer or speak another
// protocol version. One test per failure the protocol must survive.

// newHubData makes a hub's data directory with an admin and its API token, and adds
// the site "Paris" with `fieldkit hub site add`; it returns the site's token.
func newHubData(t *testing.T) (*lab, string) {
	t.Helper()
	l := &lab{data: t.TempDir(), key: labKey}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(l.data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	uid, err := db.CreateUser(ctx, store.UserInput{Username: ptr("noc"), IsSuperuser: ptr(true)}, store.All)
	if err == nil {
		_, l.token, err = db.CreateToken(ctx, store.TokenInput{UserID: uid, WriteEnabled: true}, store.All)
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(runBin(t, testBinary(t), "", "hub", "site", "add", "Paris", "--data", l.data))
	if !strings.HasPrefix(token, store.HubSiteTokenPrefix) {
		t.Fatalf("hub site add printed %q", token)
	}
	return l, token
}

// hubEnv is a hub's environment.
var hubEnv = []string{"FIELDKIT_HUB_SERVE=true"}

// edgeEnv is an edge's environment, pushing to url with token.
func edgeEnv(url, token string, more ...string) []string {
	return append([]string{"FIELDKIT_HUB_URL=" + url, "FIELDKIT_HUB_TOKEN=" + token, "FIELDKIT_RATE_LIMIT_ENABLED=false"}, more...)
}

// bulk runs show version n times on the lab device, 100 a request, and checks each ran.
func bulk(t *testing.T, s *server, l *lab, n int) {
	t.Helper()
	for n > 0 {
		k := min(n, 100)
		var execs []string
		for range k {
			execs = append(execs, fmt.Sprintf(`{"command_id": %d, "device_id": %d, "credential_token": %q}`, l.cmdID, l.deviceID, l.credToken))
		}
		req, _ := http.NewRequest("POST", s.base+"/api/plugins/toolkit/commands/bulk-execute/",
			strings.NewReader(`{"executions": [`+strings.Join(execs, ",")+`]}`))
		req.Header.Set("Authorization", "Token "+l.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Summary struct{ Successful int } }
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || out.Summary.Successful != k {
			t.Fatalf("bulk-execute: %d, %d of %d succeeded, %v", res.StatusCode, out.Summary.Successful, k, err)
		}
		n -= k
	}
}

// logStamps are the created stamps of a database's logs, in id order.
func logStamps(t *testing.T, data string) []string {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Reader().Query(`SELECT created FROM command_logs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// hubSite is what the hub's API says of a site.
type hubSite struct {
	Name                string
	State               string
	Epoch               string
	NextSeq             int64 `json:"next_seq"`
	Records, Duplicates int64
	Backlog             int64
	ClockSkewMS         int64 `json:"clock_skew_ms"`
	Version             string
	Revoked             *string
}

// site reads a hub's site through its API.
func (s *server) site(t *testing.T, token, name string) hubSite {
	t.Helper()
	m := getJSON(t, s.base+"/api/plugins/toolkit/hub-sites/?name="+name, token)
	results, _ := m["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("hub sites named %s: %v", name, m)
	}
	raw, _ := json.Marshal(results[0])
	var hs hubSite
	if err := json.Unmarshal(raw, &hs); err != nil {
		t.Fatal(err)
	}
	return hs
}

// edgeHub is what an edge's /api/status/ says of its pusher.
type edgeHub struct {
	State     string
	Pending   int64
	LastError string `json:"last_error"`
	Epoch     string
}

func (s *server) hubStatus(t *testing.T) edgeHub {
	t.Helper()
	var st struct{ Hub edgeHub }
	raw, _ := json.Marshal(getJSON(t, s.base+"/api/status/", ""))
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return st.Hub
}

// eventually waits up to a minute for ok.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sameLogs waits until the hub holds every log of the edge, once each and in the
// edge's order (the hub's ids follow it; within the skew the hub corrects, the
// stamps are the edge's).
func sameLogs(t *testing.T, hubData, edgeData string) []string {
	t.Helper()
	want := logStamps(t, edgeData)
	var got []string
	deadline := time.Now().Add(90 * time.Second)
	for {
		got = logStamps(t, hubData)
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the hub holds %d logs, the edge %d; first differences: %v", len(got), len(want), firstDiff(got, want))
	}
	return got
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d: hub %s, edge %s", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("one is a prefix of the other (%d, %d)", len(a), len(b))
}

// TestHubDownWhileTheEdgeWorks: the hub is down while the edge runs many executions;
// once it is up, every log arrives once and in order, and the edge's backlog empties.
func TestHubDownWhileTheEdgeWorks(t *testing.T) {
	hubLab, token := newHubData(t)
	hubAddr := freeAddr(t)
	edgeLab := newLab(t, 0)
	edge := startServer(t, edgeLab, edgeEnv("http://"+hubAddr, token))
	n := 1000
	if testing.Short() {
		n = 200
	}
	bulk(t, edge, edgeLab, n)
	eventually(t, "the edge says the hub is unreachable", func() bool { return edge.hubStatus(t).State == "unreachable" })
	if st := edge.hubStatus(t); st.Pending < int64(n) {
		t.Fatalf("the edge holds %d records for %d logs", st.Pending, n)
	}
	hubSrv := startServerAt(t, hubLab, hubAddr, hubEnv)
	got := sameLogs(t, hubLab.data, edgeLab.data)
	if len(got) != n {
		t.Fatalf("%d logs at the hub, want %d", len(got), n)
	}
	eventually(t, "the edge's backlog empties", func() bool { st := edge.hubStatus(t); return st.State == "ok" && st.Pending == 0 })
	site := hubSrv.site(t, hubLab.token, "Paris")
	if site.State != "online" || site.Records < int64(n) || site.Version == "" {
		t.Fatalf("the hub's site: %+v", site)
	}
	// The device is the site's: at the hub's dcim site Paris.
	devs := getJSON(t, hubSrv.base+"/api/dcim/devices/?site=paris", hubLab.token)
	if devs["count"] != 1.0 {
		t.Fatalf("the hub's devices at Paris: %v", devs)
	}
}

// hubProxy stands between an edge and its hub: it forwards every push, and can drop
// the answer of the next ones that carry records (the hub committed them) or say the
// edge speaks a newer protocol.
type hubProxy struct {
	srv      *httptest.Server
	target   string
	drop     atomic.Int32 // answers of pushes with records to drop
	protocol atomic.Int32 // when set, the protocol the proxy says the edge speaks
	dropped  atomic.Int32
}

func newHubProxy(t *testing.T, target string) *hubProxy {
	p := &hubProxy{target: target}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *hubProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequest(r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	if v := p.protocol.Load(); v != 0 {
		req.Header.Set(hub.ProtocolHeader, fmt.Sprint(v))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	if res.StatusCode == 200 && records(body) > 0 && p.drop.Load() > 0 {
		p.drop.Add(-1)
		p.dropped.Add(1)
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close() // the hub committed; the edge never hears it
		return
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	w.Write(answer)
}

// records is how many records a push's body carries.
func records(gz []byte) int {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return 0
	}
	var b hub.Batch
	if json.NewDecoder(zr).Decode(&b) != nil {
		return 0
	}
	return len(b.Records)
}

// hubPair is a hub with its site Paris and an edge of that site pushing to it through
// a proxy.
type hubPair struct {
	hubLab, edgeLab *lab
	hub, edge       *server
	proxy           *hubProxy
	token           string
}

func startHubPair(t *testing.T, edgeMore ...string) *hubPair {
	t.Helper()
	p := &hubPair{}
	p.hubLab, p.token = newHubData(t)
	p.hub = startServer(t, p.hubLab, hubEnv)
	p.proxy = newHubProxy(t, p.hub.base)
	p.edgeLab = newLab(t, 0)
	p.edge = startServer(t, p.edgeLab, edgeEnv(p.proxy.srv.URL, p.token, edgeMore...))
	eventually(t, "the edge's first push", func() bool { return p.edge.hubStatus(t).State == "ok" })
	return p
}

// TestHubAnswerLost: the hub commits a batch but its answer is lost, once with nothing
// written meanwhile and once with more logs written (the next batch overlaps the
// stored one): the duplicates are counted, and every log is stored once.
func TestHubAnswerLost(t *testing.T) {
	p := startHubPair(t)
	p.proxy.drop.Store(1)
	bulk(t, p.edge, p.edgeLab, 50)
	eventually(t, "an answer dropped", func() bool { return p.proxy.dropped.Load() == 1 })
	sameLogs(t, p.hubLab.data, p.edgeLab.data)
	eventually(t, "the edge's backlog empties", func() bool { return p.edge.hubStatus(t).Pending == 0 })
	first := p.hub.site(t, p.hubLab.token, "Paris")
	if first.Duplicates < 50 {
		t.Fatalf("the resent batch's duplicates were not counted: %+v", first)
	}

	// Overlap: the answer is lost, and the edge writes more before it sends again.
	p.proxy.drop.Store(1)
	bulk(t, p.edge, p.edgeLab, 20)
	eventually(t, "a second answer dropped", func() bool { return p.proxy.dropped.Load() == 2 })
	bulk(t, p.edge, p.edgeLab, 30)
	got := sameLogs(t, p.hubLab.data, p.edgeLab.data)
	if len(got) != 100 {
		t.Fatalf("%d logs at the hub, want 100", len(got))
	}
	eventually(t, "the edge's backlog empties", func() bool { return p.edge.hubStatus(t).Pending == 0 })
	second := p.hub.site(t, p.hubLab.token, "Paris")
	if second.Duplicates < first.Duplicates+20 {
		t.Fatalf("the overlapping batch's duplicates were not counted: %+v then %+v", first, second)
	}
}

// copyFile copies a file (a stopped server's database).
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
