//go:build !windows

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"fieldkit/hub"
	"fieldkit/store"
	"fieldkit/store/pgtest"
	"fieldkit/web"
)

// A hub whose store is PostgreSQL (store.driver: postgres): its sites are added,
// listed, given a new token and revoked by the same commands, in PostgreSQL, with no
// data directory's database made (TestHubNOC serves the API from it).
func TestHubSitesOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	data := t.TempDir()
	env := map[string]string{"FIELDKIT_HUB_SERVE": "true", "FIELDKIT_STORE_DRIVER": "postgres", "FIELDKIT_STORE_DSN": dsn,
		"FIELDKIT_DATA": data}
	token, stderr, err := cli(t, env, "", "hub", "site", "add", "Paris 1", "--description", "the first")
	token = strings.TrimSpace(token)
	if err != nil || !strings.HasPrefix(token, store.HubSiteTokenPrefix) {
		t.Fatalf("hub site add: %q, %q, %v", token, stderr, err)
	}
	if _, _, err := cli(t, env, "", "hub", "site", "add", "Paris 1"); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("a second site of one name: %v", err)
	}
	out, _, err := cli(t, env, "", "hub", "site", "list")
	if err != nil || !strings.Contains(out, "Paris 1") || !strings.Contains(out, "never") {
		t.Fatalf("hub site list: %q, %v", out, err)
	}
	db, err := store.OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if s, err := db.HubSiteByToken(context.Background(), token); err != nil || s.Name != "Paris 1" {
		t.Fatalf("the token in PostgreSQL: %+v, %v", s, err)
	}
	token2, _, err := cli(t, env, "", "hub", "site", "token", "Paris 1")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := db.HubSiteByToken(context.Background(), strings.TrimSpace(token2)); err != nil || s.Name != "Paris 1" {
		t.Fatalf("the new token in PostgreSQL: %+v, %v", s, err)
	}
	if _, _, err := cli(t, env, "", "hub", "site", "revoke", "Paris 1"); err != nil {
		t.Fatal(err)
	}
	if out, _, err = cli(t, env, "", "hub", "site", "list"); err != nil || !strings.Contains(out, "revoked") {
		t.Fatalf("hub site list after the revoke: %q, %v", out, err)
	}
	if _, _, err := cli(t, env, "", "hub", "site", "revoke", "Lyon"); err == nil || !strings.Contains(err.Error(), `no site "Lyon"`) {
		t.Fatalf("revoking no site: %v", err)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Fatalf("the data directory holds %v: a hub on PostgreSQL makes no SQLite file", entries)
	}
}

// The store settings are checked: each message names its key and never quotes the DSN.
func TestStoreSettings(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"FIELDKIT_STORE_DRIVER": "mysql"}, `store.driver: "mysql" is not sqlite or postgres`},
		{map[string]string{"FIELDKIT_STORE_DRIVER": "postgres", "FIELDKIT_HUB_SERVE": "true"}, "store.dsn: needed with store.driver postgres"},
		{map[string]string{"FIELDKIT_STORE_DRIVER": "postgres", "FIELDKIT_STORE_DSN": "postgres://u:s3cret@db/x"},
			"store.driver: postgres is a hub's store"},
		{map[string]string{"FIELDKIT_STORE_DRIVER": "postgres", "FIELDKIT_HUB_SERVE": "true", "FIELDKIT_STORE_DSN": "postgres://u:s3cret@db:port/x"},
			"store.dsn: not a PostgreSQL connection string"},
		{map[string]string{"FIELDKIT_STORE_DRIVER": "postgres", "FIELDKIT_HUB_SERVE": "true", "FIELDKIT_STORE_DSN": "postgres://u:s3cret@db/x",
			"FIELDKIT_HUB_URL": "https://hub.example.net"}, "hub.url: a hub on PostgreSQL pushes to no other hub"},
	} {
		env := tc.env
		env["FIELDKIT_DATA"] = t.TempDir()
		_, _, err := cli(t, env, "", "hub", "site", "list")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v: %v, want %q (and never the DSN)", tc.env, err, tc.want)
		}
	}
}

// pgHub is a hub's push and jobs endpoints on a store in PostgreSQL, served in this
// process at an address, which a test stops and starts again at will.
type pgHub struct{ srv *http.Server }

func startPGHub(t testing.TB, db *store.DB, addr string) *pgHub {
	t.Helper()
	in := hub.NewIngest(db, slog.New(slog.DiscardHandler))
	rt := &web.Router{Log: slog.New(slog.DiscardHandler)}
	rt.Handle(http.MethodPost, hub.PushPath, in.Push)
	rt.Handle(http.MethodGet, hub.JobsPath, in.Jobs)
	var ln net.Listener
	var err error
	for range 50 { // the address of a hub just stopped may take a moment to be free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	h := &pgHub{srv: &http.Server{Handler: rt.Handler()}}
	go h.srv.Serve(ln)
	t.Cleanup(func() { h.srv.Close() })
	return h
}

// pgLogStamps are the created stamps of the logs in a PostgreSQL store, in id order.
func pgLogStamps(t *testing.T, db *store.DB) []string {
	t.Helper()
	return stampsOf(t, db, `SELECT created FROM command_logs ORDER BY id`)
}

// sameLogsPG waits until the hub in PostgreSQL holds every log of the edge, once each
// and in the edge's order.
func sameLogsPG(t *testing.T, db *store.DB, edgeData string) {
	t.Helper()
	waitForEdgeLogs(t, func() []string { return pgLogStamps(t, db) }, edgeData)
}

// TestHubOnPostgresDownWhileTheEdgeWorks: a real edge runs 10,000 executions while its
// hub, on PostgreSQL, is down (issue 40, item 7); once the hub is up every log arrives
// there once and in order;
// the hub stops again, the edge goes on, and after the restart the hub holds every log
// once, with the edge's device at the site's dcim site.
func TestHubOnPostgresDownWhileTheEdgeWorks(t *testing.T) {
	processesOnly(t)
	ctx := context.Background()
	db, err := store.OpenPostgres(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, token, err := db.CreateHubSite(ctx, "Paris", "", "", store.All)
	if err != nil {
		t.Fatal(err)
	}
	hubAddr := freeAddr(t)
	edgeLab := newLab(t, 0)
	edge := startServer(t, edgeLab, edgeEnv("http://"+hubAddr, token))
	const whileDown, whileDownAgain = 10000, 200
	bulk(t, edge, edgeLab, whileDown)
	eventually(t, "the edge says the hub is unreachable", func() bool { return edge.hubStatus(t).State == "unreachable" })
	h := startPGHub(t, db, hubAddr)
	wake(t, edge) // the pusher's backoff has grown while the hub was down (up to 20 s)
	sameLogsPG(t, db, edgeLab.data)
	h.srv.Close()
	bulk(t, edge, edgeLab, whileDownAgain)
	eventually(t, "the edge says the hub is unreachable again", func() bool { return edge.hubStatus(t).State == "unreachable" })
	startPGHub(t, db, hubAddr)
	wake(t, edge)
	sameLogsPG(t, db, edgeLab.data)
	if n := len(pgLogStamps(t, db)); n != whileDown+whileDownAgain {
		t.Fatalf("%d logs at the hub, want %d", n, whileDown+whileDownAgain)
	}
	eventually(t, "the edge's backlog empties", func() bool { st := edge.hubStatus(t); return st.State == "ok" && st.Pending == 0 })
	var records, devices int
	if err := db.Reader().QueryRow(`SELECT s.records, (SELECT count(*) FROM devices d WHERE d.site_id = s.site_id)
		FROM hub_sites s WHERE s.name = ?`, "Paris").Scan(&records, &devices); err != nil {
		t.Fatal(err)
	}
	if records < whileDown+whileDownAgain || devices != 1 {
		t.Fatalf("the hub's site Paris: %d records, %d devices; want every log's or more, and the edge's device", records, devices)
	}
	site, err := db.HubSiteNamed(ctx, "Paris")
	if err != nil {
		t.Fatal(err)
	}
	siteLogs, _ := store.CommandLogs.FilterExpr("site_id", []string{fmt.Sprint(site.SiteID)})
	if _, total, err := db.ListIDs(ctx, store.Query{Model: store.TypeCommandLog, Where: []store.Expr{siteLogs}, Limit: 1}); err != nil || total != whileDown+whileDownAgain {
		t.Fatalf("the logs of site Paris, listed: %d, %v", total, err)
	}
}

// wake makes an edge's pusher try at once (SIGHUP), as its admin would once the hub is
// back, rather than at the end of its backoff.
func wake(t *testing.T, edge *server) {
	t.Helper()
	if err := edge.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// pgPair is a hub on PostgreSQL with its site Paris, and an edge of that site (a real
// process) pushing to it through a proxy that can lose answers.
type pgPair struct {
	db      *store.DB
	token   string
	addr    string
	proxy   *hubProxy
	edgeLab *lab
	edge    *server
}

func startPGPair(t *testing.T) *pgPair {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenPostgres(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p := &pgPair{db: db, addr: freeAddr(t)}
	if _, p.token, err = db.CreateHubSite(ctx, "Paris", "", "", store.All); err != nil {
		t.Fatal(err)
	}
	startPGHub(t, db, p.addr)
	p.proxy = newHubProxy(t, "http://"+p.addr)
	p.edgeLab = newLab(t, 0)
	p.edge = startServer(t, p.edgeLab, edgeEnv(p.proxy.srv.URL, p.token))
	eventually(t, "the edge's first push", func() bool { return p.edge.hubStatus(t).State == "ok" })
	return p
}

// duplicates is what the hub counted of Paris's records received again.
func (p *pgPair) duplicates(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := p.db.Reader().QueryRow(`SELECT duplicates FROM hub_sites WHERE name = 'Paris'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestHubOnPostgresAnswerLost: the hub on PostgreSQL commits a batch whose answer is
// lost, once alone and once with more logs written before the edge sends again: the
// duplicates are counted, every log is stored once.
func TestHubOnPostgresAnswerLost(t *testing.T) {
	processesOnly(t)
	p := startPGPair(t)
	p.proxy.drop.Store(1)
	bulk(t, p.edge, p.edgeLab, 50)
	eventually(t, "an answer dropped", func() bool { return p.proxy.dropped.Load() == 1 })
	sameLogsPG(t, p.db, p.edgeLab.data)
	eventually(t, "the edge's backlog empties", func() bool { return p.edge.hubStatus(t).Pending == 0 })
	if lost, dup := int64(p.proxy.lost.Load()), p.duplicates(t); lost == 0 || dup != lost {
		t.Fatalf("%d duplicates counted for the %d records of the lost answer", dup, lost)
	}
	p.proxy.drop.Store(1)
	bulk(t, p.edge, p.edgeLab, 20)
	eventually(t, "a second answer dropped", func() bool { return p.proxy.dropped.Load() == 2 })
	bulk(t, p.edge, p.edgeLab, 30)
	sameLogsPG(t, p.db, p.edgeLab.data)
	if n := len(pgLogStamps(t, p.db)); n != 100 {
		t.Fatalf("%d logs at the hub, want 100", n)
	}
	eventually(t, "the edge's backlog empties", func() bool { return p.edge.hubStatus(t).Pending == 0 })
	if lost, dup := int64(p.proxy.lost.Load()), p.duplicates(t); dup != lost {
		t.Fatalf("%d duplicates counted for the %d records of the two lost answers", dup, lost)
	}
}

// TestHubOnPostgresEdgeRestored: an edge restored from `fieldkit backup` starts a new
// epoch; what it writes under the ids its lost logs had is new at the hub on
// PostgreSQL, and nothing the hub held is overwritten.
func TestHubOnPostgresEdgeRestored(t *testing.T) {
	processesOnly(t)
	p := startPGPair(t)
	bulk(t, p.edge, p.edgeLab, 20)
	eventually(t, "the edge's backlog empties", func() bool { return p.edge.hubStatus(t).Pending == 0 })
	backup := backupOf(t, p.edgeLab)
	bulk(t, p.edge, p.edgeLab, 20)
	sameLogsPG(t, p.db, p.edgeLab.data)
	before := pgLogStamps(t, p.db)
	oldEpoch := p.edge.hubStatus(t).Epoch
	p.edge.stop(t)
	restoreInto(t, p.edgeLab, backup)
	p.edge = startServer(t, p.edgeLab, edgeEnv(p.proxy.srv.URL, p.token))
	bulk(t, p.edge, p.edgeLab, 15)
	eventually(t, "the restored edge's backlog empties", func() bool { st := p.edge.hubStatus(t); return st.State == "ok" && st.Pending == 0 })
	now := logStamps(t, p.edgeLab.data)
	got := pgLogStamps(t, p.db)
	if want := append(slices.Clone(before), now[20:]...); !slices.Equal(got, want) {
		t.Fatalf("the hub holds %d logs, want %d (40 kept, 15 new): %s", len(got), len(want), firstDiff(got, want))
	}
	s, err := p.db.HubSiteNamed(context.Background(), "Paris")
	if ep := p.edge.hubStatus(t).Epoch; err != nil || ep == oldEpoch || s.Epoch != ep {
		t.Fatalf("epochs: before %s, edge now %s, hub %s (%v)", oldEpoch, ep, s.Epoch, err)
	}
}

// TestHubOnPostgresTokens: a second FieldKit with the site's token is refused and the
// first goes on; a revoked token is refused and the edge keeps its records.
func TestHubOnPostgresTokens(t *testing.T) {
	processesOnly(t)
	p := startPGPair(t)
	second := startServer(t, newLab(t, 0), edgeEnv("http://"+p.addr, p.token))
	eventually(t, "the second edge is refused", func() bool { return second.hubStatus(t).State == "refused" })
	if st := second.hubStatus(t); !strings.Contains(st.LastError, "in use by another FieldKit") {
		t.Fatalf("the second edge says: %+v", st)
	}
	bulk(t, p.edge, p.edgeLab, 5)
	sameLogsPG(t, p.db, p.edgeLab.data)
	s, err := p.db.HubSiteNamed(context.Background(), "Paris")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.db.RevokeHubSite(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	bulk(t, p.edge, p.edgeLab, 5)
	eventually(t, "the edge is refused", func() bool { return p.edge.hubStatus(t).State == "refused" })
	if st := p.edge.hubStatus(t); st.Pending < 5 || !strings.Contains(st.LastError, "revoked") {
		t.Fatalf("the edge: %+v", st)
	}
	if n := len(pgLogStamps(t, p.db)); n != 5 {
		t.Fatalf("the hub holds %d logs after the revoke, want 5", n)
	}
}

// TestHubOnPostgresJobRuns: a job queued in the hub's PostgreSQL for a site's device is
// taken by the site's poll, run there once with its hub credential set, and its answer
// (the device's output) and its log come back to PostgreSQL through the outbox.
func TestHubOnPostgresJobRuns(t *testing.T) {
	processesOnly(t)
	ctx := context.Background()
	db, err := store.OpenPostgres(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	siteID, token, err := db.CreateHubSite(ctx, "Paris", "", "", store.All)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	startPGHub(t, db, addr)
	edgeLab := newLab(t, 0)
	serviceSet(t, edgeLab, "noc jobs")
	startServer(t, edgeLab, edgeEnv("http://"+addr, token, "FIELDKIT_HUB_CREDENTIAL_SET=noc jobs"))
	var cmd, dev int64
	eventually(t, "the site's command and device at the hub", func() bool {
		var okC, okD bool
		cmd, okC, _ = db.HubObject(ctx, siteID, store.KindCommand, fmt.Sprint(edgeLab.cmdID))
		dev, okD, _ = db.HubObject(ctx, siteID, store.KindDevice, fmt.Sprint(edgeLab.deviceID))
		return okC && okD
	})
	id, err := db.QueueHubJob(ctx, store.HubJob{Site: siteID, CommandID: cmd, DeviceID: dev, EdgeCommandID: edgeLab.cmdID,
		EdgeDeviceID: edgeLab.deviceID, Timeout: 30, UserID: 1, Username: "noc", Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var job store.HubJob
	eventually(t, "the job done", func() bool {
		job, err = db.HubJob(ctx, id)
		return err == nil && job.State == "done"
	})
	if job.Status != 200 || !strings.Contains(string(job.Answer), "Cisco IOS Software") || job.LogID == 0 {
		t.Fatalf("the job: status %d, log %d, answer %.200s", job.Status, job.LogID, job.Answer)
	}
	logs, err := db.Rows(ctx, store.CommandLogs, []int64{job.LogID})
	if err != nil || len(logs) != 1 || logs[0]["source"] != "hub" || logs[0]["client_address"] != "hub:noc" ||
		!strings.Contains(fmt.Sprint(logs[0]["output"]), "Cisco IOS Software") {
		t.Fatalf("the hub's log of the job: %v, %v", logs, err)
	}
	if n := len(logStamps(t, edgeLab.data)); n != 1 {
		t.Fatalf("the site ran %d executions, want 1", n)
	}
}

// BenchmarkHubBacklog: an edge cut off from its hub holds a backlog of 100,000 logs
// (1 KB of output each) in its outbox; its hub, on PostgreSQL, comes back. The edge
// (`serve`, in this process) has tried the hub once and backs off; the clock runs from
// the hub's start until the hub has acknowledged every record of the outbox. The
// pusher sends batches of 1,000 records (or 4 MiB) one after the other, at once while
// a backlog remains. backlog-s is that time; logs/s the rate.
func BenchmarkHubBacklog(b *testing.B) {
	const backlog = 100_000
	ctx := context.Background()
	out := strings.Repeat("GigabitEthernet0/1 is up, line protocol is up\n", 22)
	var elapsed time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		db, err := store.OpenPostgres(ctx, pgtest.DSN(b))
		if err != nil {
			b.Fatal(err)
		}
		_, token, err := db.CreateHubSite(ctx, "Paris", "", "", store.All)
		if err != nil {
			b.Fatal(err)
		}
		addr := freeAddr(b)
		l := &lab{data: b.TempDir(), key: labKey}
		last := fillOutbox(b, l.data, "http://"+addr, backlog, out)
		edge := startEdgeIn(b, l, "http://"+addr, token, nil)
		for !strings.Contains(edge.logs.String(), "push failed") { // the edge found the hub down
			time.Sleep(10 * time.Millisecond)
		}
		b.StartTimer()
		start := time.Now()
		h := startPGHub(b, db, addr)
		for {
			s, err := db.HubSiteNamed(ctx, "Paris")
			if err != nil {
				b.Fatal(err)
			}
			if s.NextSeq > last {
				break
			}
			if time.Since(start) > 10*time.Minute {
				b.Fatalf("after 10 minutes the hub expects record %d of %d", s.NextSeq, last)
			}
			time.Sleep(20 * time.Millisecond)
		}
		elapsed += time.Since(start)
		b.StopTimer()
		var logs int
		if err := db.Reader().QueryRow(`SELECT count(*) FROM command_logs`).Scan(&logs); err != nil || logs != backlog {
			b.Fatalf("%d logs at the hub, want %d (%v)", logs, backlog, err)
		}
		h.srv.Close()
		db.Close()
	}
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "backlog-s")
	b.ReportMetric(float64(b.N*backlog)/elapsed.Seconds(), "logs/s")
}

// fillOutbox makes an edge's database in data whose outbox, enabled for the hub at
// url, holds n logs (written in one transaction, as the store's bulk insert does), and
// returns the outbox's last record.
func fillOutbox(t testing.TB, data, url string, n int, output string) int64 {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.EnableOutbox(ctx, url); err != nil {
		t.Fatal(err)
	}
	created := time.Now().UTC().Add(-time.Duration(n) * time.Second)
	logs := func(yield func(store.Values) bool) {
		for i := range n {
			at := created.Add(time.Duration(i) * time.Second)
			if !yield(store.Values{"command_name": "Show version", "device_name": "r1", "username": "alice", "success": true,
				"sent_command": "show version", "output": output, "execution_duration": 0.4, "created": at}) {
				return
			}
		}
	}
	if _, err := db.InsertLogSeq(ctx, logs); err != nil {
		t.Fatal(err)
	}
	st, err := db.OutboxState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending < int64(n) {
		t.Fatalf("the outbox holds %d records, want %d or more", st.Pending, n)
	}
	return st.Last
}
