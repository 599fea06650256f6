//go:build !windows

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"fieldkit/exec/devsim"
	"fieldkit/hub"
	"fieldkit/store"
	"fieldkit/web/webtest"
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

// processesOnly skips a test of real processes alone in -short (the race run): the
// race detector sees none of their code. TestHubEdgeClockOff runs its edge in this
// process, under the race detector too.
func processesOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes: not in -short")
	}
}

// hubEnv is a hub's environment.
var hubEnv = []string{"FIELDKIT_HUB_SERVE=true"}

// edgeEnv is an edge's environment, pushing to url with token.
func edgeEnv(url, token string, more ...string) []string {
	return append([]string{"FIELDKIT_HUB_URL=" + url, "FIELDKIT_HUB_TOKEN=" + token, "FIELDKIT_RATE_LIMIT_ENABLED=false"}, more...)
}

// bulk runs show version n times on the lab device, 100 a request, and checks each ran.
// The runs' logs carry the notes bulkNotes.
func bulk(t *testing.T, s *server, l *lab, n int) {
	t.Helper()
	for n > 0 {
		k := min(n, 100)
		var execs []string
		for range k {
			execs = append(execs, fmt.Sprintf(`{"command_id": %d, "device_id": %d, "credential_token": %q}`, l.cmdID, l.deviceID, l.credToken))
		}
		req, _ := http.NewRequest("POST", s.base+"/api/plugins/toolkit/commands/bulk-execute/",
			strings.NewReader(`{"notes": "`+bulkNotes+`", "executions": [`+strings.Join(execs, ",")+`]}`))
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

const bulkNotes = "run by the hub tests"

// logStamps are the created stamps of a database's logs, in id order; those of the
// user "old" (an older edge's, pushed by hand) left out.
func logStamps(t *testing.T, data string) []string {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return stampsOf(t, db, `SELECT created FROM command_logs WHERE username <> 'old' ORDER BY id`)
}

// stampsOf are the stamps query reads from db, on SQLite or PostgreSQL.
func stampsOf(t *testing.T, db *store.DB, query string) []string {
	t.Helper()
	rows, err := db.Reader().Query(query)
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

// edgeStatus is what an edge's /api/status/ says of its pusher.
type edgeStatus struct {
	State     string
	Pending   int64
	LastError string `json:"last_error"`
	Epoch     string
}

func (s *server) hubStatus(t *testing.T) edgeStatus {
	t.Helper()
	var st struct{ Hub edgeStatus }
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
	return waitForEdgeLogs(t, func() []string { return logStamps(t, hubData) }, edgeData)
}

// waitForEdgeLogs waits up to 90 s until hub (the hub's stamps) holds the edge's logs,
// then holds it to them, in order.
func waitForEdgeLogs(t *testing.T, hub func() []string, edgeData string) []string {
	t.Helper()
	want := logStamps(t, edgeData)
	var got []string
	deadline := time.Now().Add(90 * time.Second)
	for {
		got = hub()
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
	processesOnly(t)
	hubLab, token := newHubData(t)
	hubAddr := freeAddr(t)
	edgeLab := newLab(t, 0)
	edge := startServer(t, edgeLab, edgeEnv("http://"+hubAddr, token))
	n := 1000
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
	dropped  atomic.Int32 // answers dropped
	lost     atomic.Int32 // records the hub stored whose answer was dropped
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
	if n := records(body); res.StatusCode == 200 && n > 0 && p.drop.Load() > 0 {
		p.drop.Add(-1)
		p.lost.Add(int32(n))
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
	processesOnly(t)
	p := startHubPair(t)
	p.proxy.drop.Store(1)
	bulk(t, p.edge, p.edgeLab, 50)
	eventually(t, "an answer dropped", func() bool { return p.proxy.dropped.Load() == 1 })
	sameLogs(t, p.hubLab.data, p.edgeLab.data)
	eventually(t, "the edge's backlog empties", func() bool { return p.edge.hubStatus(t).Pending == 0 })
	first := p.hub.site(t, p.hubLab.token, "Paris")
	if lost := int64(p.proxy.lost.Load()); lost == 0 || first.Duplicates != lost {
		t.Fatalf("%d duplicates counted for the %d records of the lost answer: %+v", first.Duplicates, lost, first)
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
	if lost := int64(p.proxy.lost.Load()); second.Duplicates != lost || lost <= first.Duplicates {
		t.Fatalf("%d duplicates counted for the %d records of the two lost answers: %+v then %+v", second.Duplicates, lost, first, second)
	}
}

// stop stops a server with SIGTERM and waits for it.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-s.done; err != nil {
		t.Fatalf("serve exited: %v\n%s", err, s.logs.String())
	}
}

// backupOf writes `fieldkit backup` of a server's data directory (live) to a new file.
func backupOf(t *testing.T, l *lab) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "backup.tar")
	runBinEnv(t, []string{"FIELDKIT_SECRET_KEY=" + l.key, "FIELDKIT_BACKUP_PASSPHRASE=" + backupPassphrase},
		"backup", "--output", file, "--data", l.data)
	return file
}

const backupPassphrase = "hub tests restore this"

// restoreInto puts a backup in place of a stopped server's database with `fieldkit
// restore`, into its data directory emptied of the database.
func restoreInto(t *testing.T, l *lab, backup string) {
	t.Helper()
	db := filepath.Join(l.data, "fieldkit.db")
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	runBinEnv(t, []string{"FIELDKIT_BACKUP_PASSPHRASE=" + backupPassphrase}, "restore", backup, "--data", l.data)
}

// runBinEnv runs the built binary to completion with more environment.
func runBinEnv(t *testing.T, more []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testBinary(t), args...)
	cmd.Env = append(serverEnv(), more...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fieldkit %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// TestHubGap: the hub is restored from a backup (`fieldkit backup`, `fieldkit
// restore`) and has lost the last records it
// acknowledged; the edge's next batch leaves a gap, the hub answers 409 with the
// record it expects, and the edge sends them again from the records it keeps.
func TestHubGap(t *testing.T) {
	processesOnly(t)
	p := startHubPair(t)
	bulk(t, p.edge, p.edgeLab, 30)
	sameLogs(t, p.hubLab.data, p.edgeLab.data)
	backup := backupOf(t, p.hubLab)
	bulk(t, p.edge, p.edgeLab, 30)
	sameLogs(t, p.hubLab.data, p.edgeLab.data)
	eventually(t, "the edge's backlog empties", func() bool { return p.edge.hubStatus(t).Pending == 0 })

	addr := strings.TrimPrefix(p.hub.base, "http://")
	p.hub.stop(t)
	restoreInto(t, p.hubLab, backup)
	if n := len(logStamps(t, p.hubLab.data)); n != 30 {
		t.Fatalf("the restored hub holds %d logs, want 30", n)
	}
	p.hub = startServerAt(t, p.hubLab, addr, hubEnv)
	bulk(t, p.edge, p.edgeLab, 10)
	got := sameLogs(t, p.hubLab.data, p.edgeLab.data)
	if len(got) != 70 {
		t.Fatalf("%d logs at the hub, want 70", len(got))
	}
	if !strings.Contains(p.hub.logs.String(), `"status":409`) || !strings.Contains(p.edge.logs.String(), "sending them again") {
		t.Fatal("the gap was not answered 409 and resent")
	}
}

// TestHubEdgeRestored: an edge restored from `fieldkit backup` (with `fieldkit
// restore`) starts a new epoch;
// the logs it writes with the ids its lost ones had are new logs at the hub, and
// nothing the hub held is overwritten.
func TestHubEdgeRestored(t *testing.T) {
	processesOnly(t)
	p := startHubPair(t)
	bulk(t, p.edge, p.edgeLab, 20)
	eventually(t, "the edge's backlog empties", func() bool { return p.edge.hubStatus(t).Pending == 0 })
	backup := backupOf(t, p.edgeLab)
	bulk(t, p.edge, p.edgeLab, 20)
	before := sameLogs(t, p.hubLab.data, p.edgeLab.data)
	oldEpoch := p.edge.hubStatus(t).Epoch

	p.edge.stop(t)
	restoreInto(t, p.edgeLab, backup)
	p.edge = startServer(t, p.edgeLab, edgeEnv(p.proxy.srv.URL, p.token))
	bulk(t, p.edge, p.edgeLab, 15) // ids 21 to 35 again, other logs
	eventually(t, "the restored edge's backlog empties", func() bool { st := p.edge.hubStatus(t); return st.State == "ok" && st.Pending == 0 })
	now := logStamps(t, p.edgeLab.data)
	got := logStamps(t, p.hubLab.data)
	want := append(slices.Clone(before), now[20:]...)
	if !slices.Equal(got, want) {
		t.Fatalf("the hub holds %d logs, want %d (40 kept, 15 new): %s", len(got), len(want), firstDiff(got, want))
	}
	if ep := p.edge.hubStatus(t).Epoch; ep == oldEpoch || p.hub.site(t, p.hubLab.token, "Paris").Epoch != ep {
		t.Fatalf("epochs: before %s, edge now %s", oldEpoch, ep)
	}
}

// TestHubProtocolVersions: a batch of an older edge, with only what protocol 1 needs,
// is stored with defaults; an edge speaking a newer protocol gets 426 and keeps its
// records until the hub speaks it, then sends them all.
func TestHubProtocolVersions(t *testing.T) {
	processesOnly(t)
	p := startHubPair(t)
	token := strings.TrimSpace(runBin(t, testBinary(t), "", "hub", "site", "add", "Lyon", "--data", p.hubLab.data))
	old := `{"protocol": 1, "epoch": "e1", "epoch_start": 1, "records": [{"seq": 1, "kind": "log", "op": "upsert", "id": 7,
		"body": {"command": {"name": "show clock"}, "device": {"name": "r1"}, "username": "old", "success": true,
		"created": "2024-01-01T00:00:00Z", "output": "12:00"}}]}`
	st, ans := push(t, p.hub.base, token, "1", []byte(old))
	if st != 200 || ans.Applied != 1 || ans.Acknowledged != 1 {
		t.Fatalf("an older edge's batch: %d %+v", st, ans)
	}
	logs := getJSON(t, p.hub.base+"/api/plugins/toolkit/command-logs/?username=old", p.hubLab.token)
	res, _ := logs["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("the older edge's log: %v", logs)
	}
	l := res[0].(map[string]any)
	if l["command_type"] != "show" || l["output"] != "12:00" || l["created"] != "2024-01-01T00:00:00.000000Z" {
		t.Fatalf("stored without its defaults: %v", l)
	}
	if s := p.hub.site(t, p.hubLab.token, "Lyon"); s.Version != "unknown" || s.Records != 1 {
		t.Fatalf("the older edge's site: %+v", s)
	}
	if st, ans := push(t, p.hub.base, token, "2", []byte(old)); st != 426 || ans.Protocol != hub.Protocol {
		t.Fatalf("a newer edge's batch: %d %+v", st, ans)
	}

	p.proxy.protocol.Store(hub.Protocol + 1) // the edge now speaks a protocol the hub does not
	bulk(t, p.edge, p.edgeLab, 10)
	eventually(t, "the edge says the hub needs upgrading", func() bool { return p.edge.hubStatus(t).State == "upgrade_required" })
	if st := p.edge.hubStatus(t); st.Pending < 10 {
		t.Fatalf("the edge dropped records: %+v", st)
	}
	p.proxy.protocol.Store(0) // the hub is upgraded; a SIGHUP makes the edge try at once
	if err := p.edge.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	sameLogs(t, p.hubLab.data, p.edgeLab.data)
}

// push posts a batch (gzip) with a site token and a protocol header.
func push(t *testing.T, base, token, protocol string, body []byte) (int, hub.Answer) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(body)
	zw.Close()
	req, _ := http.NewRequest("POST", base+hub.PushPath, &buf)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set(hub.ProtocolHeader, protocol)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var ans hub.Answer
	json.NewDecoder(res.Body).Decode(&ans)
	return res.StatusCode, ans
}

// TestHubLargeOutput: a 12 MB output goes to the hub whole, in a batch of its own.
func TestHubLargeOutput(t *testing.T) {
	processesOnly(t)
	p := startHubPair(t, "FIELDKIT_EXEC_MAX_OUTPUT_BYTES=13000000")
	bulk(t, p.edge, p.edgeLab, 3)
	p.edgeLab.dev.SetFault(devsim.FaultEndlessOutput)
	body := fmt.Sprintf(`{"device_id": %d, "credential_token": %q, "timeout": 10}`, p.edgeLab.deviceID, p.edgeLab.credToken)
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/plugins/toolkit/commands/%d/execute/", p.edge.base, p.edgeLab.cmdID), strings.NewReader(body))
	req.Header.Set("Authorization", "Token "+p.edgeLab.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Output          string
		OutputTruncated bool `json:"output_truncated"`
		CommandLogID    int64
	}
	json.NewDecoder(res.Body).Decode(&out)
	res.Body.Close()
	if len(out.Output) < 12000000 {
		t.Fatalf("the output is %d bytes", len(out.Output))
	}
	p.edgeLab.dev.SetFault(devsim.FaultNone)
	bulk(t, p.edge, p.edgeLab, 3)
	sameLogs(t, p.hubLab.data, p.edgeLab.data)
	db, err := store.Open(context.Background(), filepath.Join(p.hubLab.data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int
	if err := db.Reader().QueryRow(`SELECT max(length(output)) FROM command_logs`).Scan(&size); err != nil || size != len(out.Output) {
		t.Fatalf("the hub's largest output is %d bytes, the edge's %d (%v)", size, len(out.Output), err)
	}
	// The notes go to the hub with their logs.
	var noted int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM command_logs WHERE notes = ?`, bulkNotes).Scan(&noted); err != nil || noted != 6 {
		t.Errorf("the hub holds %d logs with the edge's notes, want 6 (%v)", noted, err)
	}
}

// TestHubTwoEdgesOneToken: a second FieldKit pushing with a site's token is refused
// (403, a security event at the hub) and says so; the first goes on.
func TestHubTwoEdgesOneToken(t *testing.T) {
	processesOnly(t)
	p := startHubPair(t)
	other := newLab(t, 0)
	second := startServer(t, other, edgeEnv(p.hub.base, p.token))
	eventually(t, "the second edge is refused", func() bool { return second.hubStatus(t).State == "refused" })
	if st := second.hubStatus(t); !strings.Contains(st.LastError, "in use by another FieldKit") {
		t.Fatalf("the second edge says: %+v", st)
	}
	if !strings.Contains(p.hub.logs.String(), `"msg":"security event","event":"forbidden","reason":"The token of site \"Paris\" is in use by another FieldKit`) {
		t.Fatalf("no security event at the hub:\n%s", p.hub.logs.String())
	}
	bulk(t, p.edge, p.edgeLab, 5)
	sameLogs(t, p.hubLab.data, p.edgeLab.data)
}

// TestHubRevokedToken: a revoked site's pushes get 401; the edge keeps its records and
// says it was refused.
func TestHubRevokedToken(t *testing.T) {
	processesOnly(t)
	p := startHubPair(t)
	bulk(t, p.edge, p.edgeLab, 5)
	sameLogs(t, p.hubLab.data, p.edgeLab.data)
	runBin(t, testBinary(t), "", "hub", "site", "revoke", "Paris", "--data", p.hubLab.data)
	bulk(t, p.edge, p.edgeLab, 5)
	eventually(t, "the edge is refused", func() bool { return p.edge.hubStatus(t).State == "refused" })
	if st := p.edge.hubStatus(t); st.Pending < 5 || !strings.Contains(st.LastError, "revoked") {
		t.Fatalf("the edge: %+v", st)
	}
	if n := len(logStamps(t, p.hubLab.data)); n != 5 {
		t.Fatalf("the hub holds %d logs after the revoke, want 5", n)
	}
	if !strings.Contains(p.hub.logs.String(), `"event":"unauthorized","reason":"The token of site \"Paris\" was revoked."`) {
		t.Fatal("no security event at the hub")
	}
	if s := p.hub.site(t, p.hubLab.token, "Paris"); s.State != "revoked" {
		t.Fatalf("the site: %+v", s)
	}
}

// startEdgeIn runs an edge's serve in this process with its clock off by what clock
// says (a process's clock cannot be set from outside), pushing to url with token.
func startEdgeIn(t testing.TB, l *lab, url, token string, clock func() time.Time) *server {
	t.Helper()
	getenv := func(k string) string {
		if k == "FIELDKIT_SECRET_KEY" {
			return l.key
		}
		return ""
	}
	cfg, err := loadConfig("", getenv, edgeEnv(url, token), map[string]string{"server.data": l.data, "server.listen": "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	s := &server{logs: &webtest.Buffer{}, done: make(chan error, 1)}
	go func() {
		s.done <- serve(ctx, env{getenv: getenv, stdout: s.logs, stderr: s.logs}, cfg, serveOptions{ready: ready, clock: clock})
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	select {
	case s.base = <-ready:
	case err := <-s.done:
		t.Fatalf("serve: %v\n%s", err, s.logs.String())
	}
	return s
}

// TestHubEdgeClockOff: edges whose clocks read 6 hours behind and 1970 push their
// logs; the hub stores each once and in order, measures the skew, and adds it to the
// logs' times, so that they read in the hub's time.
func TestHubEdgeClockOff(t *testing.T) {
	for _, c := range []struct {
		name string
		off  time.Duration
	}{
		{"6h behind", -6 * time.Hour},
		{"1970", -time.Since(time.Unix(0, 0))},
	} {
		t.Run(c.name, func(t *testing.T) {
			hubLab, token := newHubData(t)
			hubSrv := startServer(t, hubLab, hubEnv)
			edgeLab := newLab(t, 0)
			edge := startEdgeIn(t, edgeLab, hubSrv.base, token, func() time.Time { return time.Now().Add(c.off).UTC() })
			bulk(t, edge, edgeLab, 20)
			eventually(t, "the edge's backlog empties", func() bool { return edge.hubStatus(t).Pending == 0 })
			site := hubSrv.site(t, hubLab.token, "Paris")
			if skew := time.Duration(site.ClockSkewMS) * time.Millisecond; (skew + c.off).Abs() > time.Minute {
				t.Fatalf("the hub measured a skew of %v, the edge's clock is off by %v", skew, c.off)
			}
			edgeStamps, hubStamps := logStamps(t, edgeLab.data), logStamps(t, hubLab.data)
			if len(hubStamps) != len(edgeStamps) || len(hubStamps) != 20 {
				t.Fatalf("the hub holds %d logs, the edge %d", len(hubStamps), len(edgeStamps))
			}
			for i := range hubStamps {
				h, e := store.ParseStamp(hubStamps[i]), store.ParseStamp(edgeStamps[i])
				if d := h.Sub(e) + c.off; d.Abs() > time.Minute || (i > 0 && hubStamps[i] < hubStamps[i-1]) {
					t.Fatalf("log %d: at the hub %s, at the edge %s", i, hubStamps[i], edgeStamps[i])
				}
			}
		})
	}
}

// serviceSet gives the lab a service credential set named name, owned by its admin,
// with the lab device's login.
func serviceSet(t *testing.T, l *lab, name string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(l.data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kr, err := loadKeyring(ctx, env{getenv: func(k string) string {
		if k == "FIELDKIT_SECRET_KEY" {
			return l.key
		}
		return ""
	}}, db, l.data, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.UserIDByName(ctx, "admin")
	if err == nil {
		_, err = db.CreateServiceCredentialSet(ctx, kr, admin, store.CredentialInput{Name: ptr(name), Username: ptr(demoDeviceUser),
			Password: ptr(demoDevicePass), EnableSecret: ptr(demoEnable)}, store.True)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// hubPost posts a JSON body to the hub's API and returns the status and decoded body.
func hubPost(t *testing.T, s *server, token, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Token "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// TestHubRunsACommandAtASite: a NOC user runs show version on a site's device through
// the hub's API and gets the site's answer, the output the device printed; the log is
// at the site (source hub, who asked) and at the hub. With the site offline, the job
// waits (202) and is run once the site is back; a site that names no hub credential
// set refuses the hub's jobs.
func TestHubRunsACommandAtASite(t *testing.T) {
	processesOnly(t)
	p := &hubPair{}
	p.hubLab, p.token = newHubData(t)
	p.hub = startServer(t, p.hubLab, hubEnv)
	p.edgeLab = newLab(t, 0)
	serviceSet(t, p.edgeLab, "noc jobs")
	edgeMore := []string{"FIELDKIT_HUB_CREDENTIAL_SET=noc jobs"}
	p.edge = startServer(t, p.edgeLab, edgeEnv(p.hub.base, p.token, edgeMore...))
	var cmdID, devID float64
	eventually(t, "the site's command and device at the hub", func() bool {
		cmds := getJSON(t, p.hub.base+"/api/plugins/toolkit/commands/?name=Show+version", p.hubLab.token)
		devs := getJSON(t, p.hub.base+"/api/dcim/devices/?site=paris", p.hubLab.token)
		if cmds["count"] != 1.0 || devs["count"] != 1.0 {
			return false
		}
		cmdID = cmds["results"].([]any)[0].(map[string]any)["id"].(float64)
		devID = devs["results"].([]any)[0].(map[string]any)["id"].(float64)
		return true
	})
	path := fmt.Sprintf("/api/plugins/toolkit/commands/%d/execute/", int64(cmdID))
	st, ans := hubPost(t, p.hub, p.hubLab.token, path, fmt.Sprintf(`{"device_id": %d, "timeout": 30}`, int64(devID)))
	if st != 200 || ans["success"] != true || !strings.Contains(fmt.Sprint(ans["output"]), "Cisco IOS Software") {
		t.Fatalf("the hub's execute: %d %v", st, ans)
	}
	if dev, _ := ans["device"].(map[string]any); dev["id"] != devID {
		t.Fatalf("the answer names the site's device, not the hub's: %v", ans["device"])
	}
	// The log: at the site, source hub and who asked; at the hub, the answer's log.
	edgeLogs := getJSON(t, p.edge.base+"/api/plugins/toolkit/command-logs/?source=hub", p.edgeLab.token)
	if edgeLogs["count"] != 1.0 || edgeLogs["results"].([]any)[0].(map[string]any)["client_address"] != "hub:noc" {
		t.Fatalf("the site's log: %v", edgeLogs)
	}
	hubLog := getJSON(t, fmt.Sprintf("%s/api/plugins/toolkit/command-logs/%d/", p.hub.base, int64(ans["command_log_id"].(float64))), p.hubLab.token)
	if hubLog["source"] != "hub" || !strings.Contains(fmt.Sprint(hubLog["output"]), "Cisco IOS Software") {
		t.Fatalf("the hub's log: %v", hubLog)
	}

	// Offline: the job waits, and runs once the site is back.
	p.edge.stop(t)
	st, queued := hubPost(t, p.hub, p.hubLab.token, path, fmt.Sprintf(`{"device_id": %d, "timeout": 5, "expires_in": 600}`, int64(devID)))
	if st != 202 || queued["state"] != "queued" {
		t.Fatalf("with the site offline: %d %v", st, queued)
	}
	jobURL := queued["url"].(string)
	p.edge = startServer(t, p.edgeLab, edgeEnv(p.hub.base, p.token, edgeMore...))
	eventually(t, "the queued job done", func() bool { return getJSON(t, jobURL, p.hubLab.token)["state"] == "done" })
	if job := getJSON(t, jobURL, p.hubLab.token); job["status"] != 200.0 || job["result"].(map[string]any)["success"] != true {
		t.Fatalf("the job: %v", job)
	}
	if n := len(logStamps(t, p.edgeLab.data)); n != 2 {
		t.Fatalf("the site ran %d executions, want 2", n)
	}

	// A site without hub.credential_set refuses the hub's jobs, in its own words.
	p.edge.stop(t)
	p.edge = startServer(t, p.edgeLab, edgeEnv(p.hub.base, p.token))
	st, refused := hubPost(t, p.hub, p.hubLab.token, path, fmt.Sprintf(`{"device_id": %d, "timeout": 30}`, int64(devID)))
	if st != 403 || !strings.Contains(fmt.Sprint(refused["detail"]), "hub.credential_set is not set") {
		t.Fatalf("a site without a hub credential set: %d %v", st, refused)
	}
}
