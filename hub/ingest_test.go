package hub

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/store"
	"fieldkit/store/pgtest"
	"fieldkit/web"
)

// rig is a hub on a real SQLite file or a real PostgreSQL, its push handler served over
// HTTP, and a site.
type rig struct {
	t     testing.TB
	db    *store.DB
	in    *Ingest
	srv   *httptest.Server
	token string
	site  store.HubSite
}

func newRig(t testing.TB) *rig {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	return rigOn(t, db)
}

// newPGRig is a rig whose hub's store is in PostgreSQL (a schema of the test's own).
func newPGRig(t testing.TB) *rig {
	t.Helper()
	db, err := store.OpenPostgres(context.Background(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	return rigOn(t, db)
}

// eachStore runs a test of the ingest on a hub on SQLite and on one on PostgreSQL.
func eachStore(t *testing.T, test func(t *testing.T, r *rig)) {
	t.Run("sqlite", func(t *testing.T) { test(t, newRig(t)) })
	t.Run("postgres", func(t *testing.T) { test(t, newPGRig(t)) })
}

func rigOn(t testing.TB, db *store.DB) *rig {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() { db.Close() })
	in := NewIngest(db, slog.New(slog.DiscardHandler))
	rt := &web.Router{Log: slog.New(slog.DiscardHandler)}
	rt.Handle(http.MethodPost, PushPath, in.Push)
	srv := httptest.NewServer(rt.Handler())
	t.Cleanup(srv.Close)
	_, token, err := db.CreateHubSite(ctx, "Paris", "", "", store.All)
	if err != nil {
		t.Fatal(err)
	}
	site, err := db.HubSiteNamed(ctx, "Paris")
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, db: db, in: in, srv: srv, token: token, site: site}
}

// push sends a batch of records (seq from first on) in epoch, as instance.
func (r *rig) push(instance, epoch string, first int64, recs ...Record) (int, Answer) {
	r.t.Helper()
	for i := range recs {
		recs[i].Seq = first + int64(i)
	}
	b := Batch{Protocol: Protocol, Instance: instance, Epoch: epoch, EpochStart: 1, SentAt: time.Now(), Version: "test", Records: recs}
	raw, _ := json.Marshal(b)
	return r.post(r.token, raw)
}

func (r *rig) post(token string, body []byte) (int, Answer) {
	r.t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(body)
	zw.Close()
	req, _ := http.NewRequest("POST", r.srv.URL+PushPath, &buf)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Encoding", "gzip")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	var ans Answer
	json.NewDecoder(res.Body).Decode(&ans)
	return res.StatusCode, ans
}

// count is a query's count on the hub.
func (r *rig) count(q string, args ...any) int {
	r.t.Helper()
	var n int
	if err := r.db.Reader().QueryRow(q, args...).Scan(&n); err != nil {
		r.t.Fatal(err)
	}
	return n
}

func body(v string) json.RawMessage { return json.RawMessage(v) }

var (
	platformIOS = Record{Kind: store.KindPlatform, Op: store.OpUpsert, ID: 3, Body: body(`{"id": 3, "name": "Cisco IOS", "slug": "cisco_ios"}`)}
	deviceR1    = Record{Kind: store.KindDevice, Op: store.OpUpsert, ID: 5, Body: body(`{"id": 5, "name": "r1",
		"site": {"id": 1, "name": "Edge site", "slug": "edge-site"}, "platform": {"id": 3, "name": "Cisco IOS", "slug": "cisco_ios"},
		"status": {"value": "planned", "label": "Planned"}, "mgmt_ip": "192.0.2.5/24", "tags": [{"id": 9, "name": "Core", "slug": "core", "color": "ff0000"}],
		"custom_fields": {"ssh_port": 2222}}`)}
	commandVer = Record{Kind: store.KindCommand, Op: store.OpUpsert, ID: 8, Body: body(`{"id": 8, "name": "Version",
		"command": "show version <v>", "command_type": "show", "platforms": [{"id": 3, "name": "Cisco IOS", "slug": "cisco_ios"}],
		"variables": [{"name": "v", "variable_type": "text", "required": false}], "tags": []}`)}
)

func logRecord(id int64, uid string) Record {
	return Record{Kind: store.KindLog, Op: store.OpUpsert, ID: id, UID: uid, Body: body(fmt.Sprintf(`{"id": %d,
		"command": {"id": 8, "name": "Version"}, "device": {"id": 5, "name": "r1"}, "username": "alice", "success": true,
		"command_type": "show", "output": "IOS 15", "created": "2030-01-02T03:04:05.000006Z", "source": "api"}`, id))}
}

// TestApplyEachKind: each kind lands in the hub's own tables, mapped to the site: the
// device at the site's dcim site with its platform, tags and address; the command with
// its platforms and variables; the log with its device and command.
func TestApplyEachKind(t *testing.T) { eachStore(t, testApplyEachKind) }

func testApplyEachKind(t *testing.T, r *rig) {
	st, ans := r.push("inst", "e1", 1, platformIOS, deviceR1, commandVer, logRecord(11, "u11"))
	if st != 200 || ans.Applied != 4 || ans.Acknowledged != 4 || len(ans.Problems) != 0 {
		t.Fatalf("push: %d %+v", st, ans)
	}
	ctx := context.Background()
	devs, err := r.db.Rows(ctx, store.Devices, []int64{r.hubID(store.KindDevice, "5")})
	if err != nil || len(devs) != 1 {
		t.Fatal(devs, err)
	}
	d := devs[0]
	if d["name"] != "r1" || d["site"].(store.Row).ID() != r.site.SiteID || d["status"] != "planned" ||
		d["platform"].(store.Row)["slug"] != "cisco_ios" || d["mgmt_ip"] != "192.0.2.5/24" || d["ssh_port"] != int64(2222) ||
		len(d["tags"].([]store.Row)) != 1 {
		t.Fatalf("device: %v", d)
	}
	cmds, _ := r.db.Rows(ctx, store.Commands, []int64{r.hubID(store.KindCommand, "8")})
	if c := cmds[0]; c["command"] != "show version <v>" || len(c["platforms"].([]store.Row)) != 1 || len(c["variables"].([]store.Row)) != 1 {
		t.Fatalf("command: %v", c)
	}
	logs, err := r.db.Rows(ctx, store.CommandLogs, []int64{r.hubID(store.KindLog, "u11")})
	if err != nil || len(logs) != 1 {
		t.Fatal(logs, err)
	}
	if l := logs[0]; l["device"].(store.Row)["id"] != d.ID() || l["output"] != "IOS 15" || l["source"] != "api" ||
		!l["created"].(time.Time).Equal(time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)) {
		t.Fatalf("log: %v", l)
	}

	// An update moves the device to another platform, made from its nested form.
	moved := Record{Kind: store.KindDevice, Op: store.OpUpsert, ID: 5, Body: body(`{"id": 5, "name": "r1-new",
		"platform": {"id": 4, "name": "Arista EOS", "slug": "eos"}, "status": {"value": "active"}}`)}
	if st, ans := r.push("inst", "e1", 5, moved); st != 200 || ans.Applied != 1 {
		t.Fatalf("update: %d %+v", st, ans)
	}
	if n := r.count(`SELECT count(*) FROM devices d JOIN platforms p ON p.id = d.platform_id WHERE d.name = 'r1-new' AND p.slug = 'eos'`); n != 1 {
		t.Fatal("the device was not updated onto its new platform")
	}
	// A snapshot lists what the edge has: the command is gone, the device stays.
	snap := Record{Kind: store.KindSnapshot, Op: store.OpUpsert, Body: body(`{"device": [5], "command": [], "platform": [3, 4]}`)}
	if st, ans := r.push("inst", "e1", 6, snap); st != 200 || ans.Applied != 1 {
		t.Fatalf("snapshot: %d %+v", st, ans)
	}
	if r.count(`SELECT count(*) FROM commands`) != 0 || r.count(`SELECT count(*) FROM devices`) != 1 {
		t.Fatal("the snapshot did not drop the command alone")
	}
	// A platform's delete keeps the hub's platform while a device uses it.
	if st, _ := r.push("inst", "e1", 7, Record{Kind: store.KindPlatform, Op: store.OpDelete, ID: 4}); st != 200 ||
		r.count(`SELECT count(*) FROM platforms WHERE slug = 'eos'`) != 1 {
		t.Fatal("a used platform was deleted")
	}
	// The device's delete deletes it; its log stays.
	if st, _ := r.push("inst", "e1", 8, Record{Kind: store.KindDevice, Op: store.OpDelete, ID: 5}); st != 200 ||
		r.count(`SELECT count(*) FROM devices`) != 0 || r.count(`SELECT count(*) FROM command_logs`) != 1 {
		t.Fatal("the device's delete")
	}
}

// hubID is the hub's object of an edge object of the rig's site.
func (r *rig) hubID(kind, key string) int64 {
	r.t.Helper()
	id, ok, err := r.db.HubObject(context.Background(), r.site.ID, kind, key)
	if err != nil || !ok {
		r.t.Fatalf("no hub object for %s %s: %v", kind, key, err)
	}
	return id
}

// TestIdempotentAndOrdered: a batch sent again is counted as duplicates and stored
// once; an overlapping one stores only its new records; a gap is refused with the
// record expected; a log sent again under a new epoch is recognised by its uid.
func TestIdempotentAndOrdered(t *testing.T) { eachStore(t, testIdempotentAndOrdered) }

func testIdempotentAndOrdered(t *testing.T, r *rig) {
	if st, ans := r.push("inst", "e1", 1, logRecord(1, "a"), logRecord(2, "b")); st != 200 || ans.Applied != 2 {
		t.Fatalf("first: %d %+v", st, ans)
	}
	if st, ans := r.push("inst", "e1", 1, logRecord(1, "a"), logRecord(2, "b")); st != 200 || ans.Duplicates != 2 || ans.Applied != 0 {
		t.Fatalf("again: %d %+v", st, ans)
	}
	if st, ans := r.push("inst", "e1", 2, logRecord(2, "b"), logRecord(3, "c")); st != 200 || ans.Duplicates != 1 || ans.Applied != 1 || ans.Acknowledged != 3 {
		t.Fatalf("overlap: %d %+v", st, ans)
	}
	if st, ans := r.push("inst", "e1", 6, logRecord(6, "f")); st != 409 || ans.Code != CodeGap || ans.Expected != 4 {
		t.Fatalf("gap: %d %+v", st, ans)
	}
	// Another database under the same epoch: the hub's record 3 is not its record 3.
	if st, ans := r.push("inst", "e1", 3, logRecord(3, "other")); st != 409 || ans.Code != CodeDiverged {
		t.Fatalf("diverged: %d %+v", st, ans)
	}
	// A restored edge: a new epoch, log c sent again, d new.
	if st, ans := r.push("inst", "e2", 1, logRecord(3, "c"), logRecord(3, "d")); st != 200 || ans.Applied != 1 || ans.Duplicates != 1 {
		t.Fatalf("new epoch: %d %+v", st, ans)
	}
	// The old epoch is over.
	if st, ans := r.push("inst", "e1", 4, logRecord(4, "x")); st != 409 || ans.Code != CodeSuperseded {
		t.Fatalf("old epoch: %d %+v", st, ans)
	}
	if n := r.count(`SELECT count(*) FROM command_logs`); n != 4 {
		t.Fatalf("%d logs, want a, b, c, d", n)
	}
	if n := r.count(`SELECT duplicates FROM hub_sites WHERE id = ?`, r.site.ID); n != 4 {
		t.Fatalf("%d duplicates counted, want 4", n)
	}
}

// TestProblemsDoNotBlock: a record the hub cannot apply is stored with its problem and
// acknowledged, and the records after it are applied.
func TestProblemsDoNotBlock(t *testing.T) { eachStore(t, testProblemsDoNotBlock) }

func testProblemsDoNotBlock(t *testing.T, r *rig) {
	twin := Record{Kind: store.KindDevice, Op: store.OpUpsert, ID: 6, Body: body(`{"id": 6, "name": "r1", "status": "active"}`)}
	st, ans := r.push("inst", "e1", 1, deviceR1, twin, logRecord(1, "a"))
	if st != 200 || ans.Applied != 3 || len(ans.Problems) != 1 || ans.Problems[0].Seq != 2 || ans.Acknowledged != 3 {
		t.Fatalf("push: %d %+v", st, ans)
	}
	if r.count(`SELECT count(*) FROM devices`) != 1 || r.count(`SELECT count(*) FROM command_logs`) != 1 ||
		r.count(`SELECT count(*) FROM hub_records WHERE problem <> ''`) != 1 {
		t.Fatal("the problem record held up the others, or was not kept")
	}
}

// TestLogRuns: a push's logs are stored a run at a time; within a run, a log with a
// problem is kept in the ledger alone, a log sent twice is stored once, and a log the
// database refuses (its device deleted at the hub meanwhile) sends the run record by
// record, where it alone is refused. Each log stored is counted once, and the ledger
// names the hub's log of each record.
func TestLogRuns(t *testing.T) { eachStore(t, testLogRuns) }

func testLogRuns(t *testing.T, r *rig) {
	noTime := Record{Kind: store.KindLog, Op: store.OpUpsert, ID: 3, UID: "c", Body: body(`{"id": 3, "username": "bob"}`)}
	notObject := Record{Kind: store.KindLog, Op: store.OpUpsert, ID: 4, UID: "d", Body: body(`[1]`)}
	st, ans := r.push("inst", "e1", 1, platformIOS, deviceR1, commandVer, logRecord(1, "a"), noTime, logRecord(2, "b"),
		notObject, logRecord(2, "b"))
	if st != 200 || ans.Applied != 7 || ans.Duplicates != 1 || len(ans.Problems) != 2 || ans.Problems[0].Seq != 5 ||
		ans.Problems[1].Seq != 7 || ans.Acknowledged != 8 {
		t.Fatalf("push: %d %+v", st, ans)
	}
	if n := r.count(`SELECT count(*) FROM command_logs WHERE device_id = ? AND command_id = ?`,
		r.hubID(store.KindDevice, "5"), r.hubID(store.KindCommand, "8")); n != 2 {
		t.Fatalf("%d logs with their device and command, want a and b", n)
	}
	if n := r.count(`SELECT count(*) FROM hub_records r JOIN hub_objects o ON o.hub_site_id = r.hub_site_id
		AND o.kind = 'log' AND o.edge_key = r.uid AND o.hub_id = r.hub_id WHERE r.kind = 'log'`); n != 3 {
		t.Fatalf("%d ledger rows name their log, want 3 (a, b twice)", n)
	}
	// A hub user deletes the device: the next run fails as a whole, then record by record.
	if err := r.db.Delete(context.Background(), store.Devices, r.hubID(store.KindDevice, "5")); err != nil {
		t.Fatal(err)
	}
	bare := Record{Kind: store.KindLog, Op: store.OpUpsert, ID: 9, UID: "e", Body: body(`{"id": 9, "username": "bob",
		"created": "2030-01-02T03:04:05Z"}`)}
	st, ans = r.push("inst", "e1", 9, bare, logRecord(10, "f"))
	if st != 200 || ans.Applied != 2 || len(ans.Problems) != 1 || ans.Problems[0].Seq != 10 || ans.Acknowledged != 10 {
		t.Fatalf("after the delete: %d %+v", st, ans)
	}
	logs := r.count(`SELECT count(*) FROM command_logs`)
	if counted := r.count(`SELECT coalesce(sum(n), 0) FROM command_log_counts`); counted != logs {
		t.Fatalf("%d logs counted, %d stored", counted, logs)
	}
	if n := r.count(`SELECT count(*) FROM hub_records WHERE seq = 9 AND hub_id IS NOT NULL AND problem = ''`); n != 1 {
		t.Fatal("the log without a device was held up by the refused one")
	}
}

// TestRefusals: the answers an edge must act on.
func TestRefusals(t *testing.T) { eachStore(t, testRefusals) }

func testRefusals(t *testing.T, r *rig) {
	if st, _ := r.push("inst", "e1", 1); st != 200 {
		t.Fatalf("heartbeat: %d", st)
	}
	if st, ans := r.push("other", "e9", 1); st != 403 || ans.Code != CodeInstance {
		t.Fatalf("a second database with the token: %d %+v", st, ans)
	}
	if st, _ := r.post("fkh_nope", []byte(`{}`)); st != 401 {
		t.Fatalf("an unknown token: %d", st)
	}
	big := bytes.Repeat([]byte(" "), MaxBodyBytes+10)
	if st, ans := r.post(r.token, big); st != 413 || ans.MaxBytes != MaxBodyBytes {
		t.Fatalf("too large: %d %+v", st, ans)
	}
	if st, _ := r.post(r.token, []byte(`{"protocol": 1, "epoch": "", "epoch_start": 1}`)); st != 400 {
		t.Fatalf("no epoch: %d", st)
	}
	if st, _ := r.post(r.token, []byte(`{"protocol": 1, "epoch": "e", "epoch_start": 1, "records": [{"seq": 1, "kind": "log", "op": "upsert", "id": 1, "body": {}},
		{"seq": 3, "kind": "log", "op": "upsert", "id": 1, "body": {}}]}`)); st != 400 {
		t.Fatalf("records not consecutive: %d", st)
	}
	if st, ans := r.post(r.token, []byte(`{"protocol": 2, "epoch": "e", "epoch_start": 1}`)); st != 426 || ans.Protocol != Protocol {
		t.Fatalf("a newer protocol: %d %+v", st, ans)
	}
	// Busy: every slot taken.
	for range pushSlots {
		r.in.slots <- struct{}{}
	}
	req, _ := http.NewRequest("POST", r.srv.URL+PushPath, strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+r.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("busy: %d %v", res.StatusCode, res.Header)
	}
	for range pushSlots {
		<-r.in.slots
	}
	if err := r.db.RevokeHubSite(context.Background(), r.site.ID); err != nil {
		t.Fatal(err)
	}
	if st, ans := r.push("inst", "e1", 1); st != 401 || !strings.Contains(ans.Detail, "revoked") {
		t.Fatalf("revoked: %d %+v", st, ans)
	}
}

// TestSkewCorrected: a log from an edge whose clock is off by more than SkewCorrected
// is stored in the hub's time, the correction kept in the ledger.
func TestSkewCorrected(t *testing.T) { eachStore(t, testSkewCorrected) }

func testSkewCorrected(t *testing.T, r *rig) {
	b := Batch{Protocol: Protocol, Instance: "i", Epoch: "e", EpochStart: 1, SentAt: time.Now().Add(-6 * time.Hour),
		Records: []Record{logRecord(1, "a")}}
	b.Records[0].Seq = 1
	raw, _ := json.Marshal(b)
	if st, ans := r.post(r.token, raw); st != 200 || ans.Applied != 1 {
		t.Fatalf("push: %d %+v", st, ans)
	}
	var created string
	var skew int64
	if err := r.db.Reader().QueryRow(`SELECT l.created, h.skew_ms FROM command_logs l, hub_records h`).Scan(&created, &skew); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2030, 1, 2, 9, 4, 5, 6000, time.UTC)
	if got := store.ParseStamp(created); got.Sub(want).Abs() > time.Minute || (time.Duration(skew)*time.Millisecond-6*time.Hour).Abs() > time.Minute {
		t.Fatalf("stored at %s (skew %d ms), want about %s", created, skew, want)
	}
	// The next push measures 30 s more (the network): the correction stays, so that the
	// logs keep their order; a clock set right takes it away.
	for i, c := range []struct {
		off  time.Duration
		same bool
	}{{-6*time.Hour - 30*time.Second, true}, {0, false}} {
		b := Batch{Protocol: Protocol, Instance: "i", Epoch: "e", EpochStart: 1, SentAt: time.Now().Add(c.off),
			Records: []Record{logRecord(int64(i+2), fmt.Sprint("b", i))}}
		b.Records[0].Seq = int64(i + 2)
		raw, _ := json.Marshal(b)
		if st, ans := r.post(r.token, raw); st != 200 || ans.Applied != 1 {
			t.Fatalf("push %d: %d %+v", i, st, ans)
		}
		var again int64
		if err := r.db.Reader().QueryRow(`SELECT skew_ms FROM hub_records WHERE seq = ?`, i+2).Scan(&again); err != nil {
			t.Fatal(err)
		}
		if (again == skew) != c.same || (!c.same && again != 0) {
			t.Fatalf("push %d: correction %d ms after %d ms", i, again, skew)
		}
	}
}

// BenchmarkIngestLogs: one site pushing batches of 1,000 logs (1 KB of output each) to
// a hub on SQLite, and to one on PostgreSQL, each batch one transaction; logs-stored/s
// is the hub's rate.
func BenchmarkIngestLogs(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchmarkIngest(b, newRig(b)) })
	b.Run("postgres", func(b *testing.B) { benchmarkIngest(b, newPGRig(b)) })
}

func benchmarkIngest(b *testing.B, r *rig) {
	out := strings.Repeat("GigabitEthernet0/1 is up, line protocol is up\n", 22)
	seq := int64(1)
	start := time.Now()
	for range b.N {
		recs := make([]Record, MaxRecords)
		for i := range recs {
			recs[i] = Record{Seq: seq, Kind: store.KindLog, Op: store.OpUpsert, ID: seq, UID: fmt.Sprint("u", seq),
				Body: body(fmt.Sprintf(`{"id": %d, "command": {"id": 8, "name": "Version"}, "device": {"id": 5, "name": "r1"},
				"username": "alice", "success": true, "output": %q, "created": "2030-01-02T03:04:05.000006Z"}`, seq, out))}
			seq++
		}
		raw, _ := json.Marshal(Batch{Protocol: Protocol, Instance: "i", Epoch: "e", EpochStart: 1, Records: recs})
		if st, ans := r.post(r.token, raw); st != 200 || ans.Applied != MaxRecords {
			b.Fatalf("push: %d %+v", st, ans)
		}
	}
	b.ReportMetric(float64(b.N*MaxRecords)/time.Since(start).Seconds(), "logs-stored/s")
}

// BenchmarkIngestSites: 50 sites pushing at once, each batches of 1,000 logs (1 KB of
// output each), gzip-compressed before the clock starts, to a hub on SQLite and to one
// on PostgreSQL. A push the hub answers 429 (it takes pushSlots at once) is sent again
// after 10 ms, as an edge backs off (much longer, with jitter: the figure is the hub's
// rate, not the edges' patience). logs-stored/s is the hub's rate across the sites;
// hub-cpu-us/log the CPU this process (the hub, and the sites' requests) used a log,
// PostgreSQL's own not counted.
func BenchmarkIngestSites(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchmarkIngestSites(b, newRig(b)) })
	b.Run("postgres", func(b *testing.B) { benchmarkIngestSites(b, newPGRig(b)) })
}

func benchmarkIngestSites(b *testing.B, r *rig) {
	const sites = 50
	tokens := make([]string, sites)
	for i := range tokens {
		var err error
		if _, tokens[i], err = r.db.CreateHubSite(context.Background(), fmt.Sprint("site-", i), "", "", store.All); err != nil {
			b.Fatal(err)
		}
	}
	out := strings.Repeat("GigabitEthernet0/1 is up, line protocol is up\n", 22)
	var elapsed time.Duration
	var cpu float64
	b.ResetTimer()
	for n := range b.N {
		b.StopTimer()
		bodies := make([][]byte, sites)
		for s := range bodies {
			recs := make([]Record, MaxRecords)
			for i := range recs {
				seq := int64(n*MaxRecords + i + 1)
				recs[i] = Record{Seq: seq, Kind: store.KindLog, Op: store.OpUpsert, ID: seq, UID: fmt.Sprint("u", seq),
					Body: body(fmt.Sprintf(`{"id": %d, "command": {"id": 8, "name": "Version"}, "device": {"id": 5, "name": "r1"},
					"username": "alice", "success": true, "output": %q, "created": "2030-01-02T03:04:05.000006Z"}`, seq, out))}
			}
			raw, _ := json.Marshal(Batch{Protocol: Protocol, Instance: fmt.Sprint("i", s), Epoch: "e", EpochStart: 1, Records: recs})
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(raw)
			zw.Close()
			bodies[s] = buf.Bytes()
		}
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU()
		var wg sync.WaitGroup
		for s := range sites {
			wg.Go(func() {
				for {
					req, _ := http.NewRequest("POST", r.srv.URL+PushPath, bytes.NewReader(bodies[s]))
					req.Header.Set("Authorization", "Bearer "+tokens[s])
					req.Header.Set("Content-Encoding", "gzip")
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					var ans Answer
					json.NewDecoder(res.Body).Decode(&ans)
					res.Body.Close()
					switch {
					case res.StatusCode == http.StatusTooManyRequests:
						time.Sleep(10 * time.Millisecond)
						continue
					case res.StatusCode != 200 || ans.Applied != MaxRecords:
						b.Errorf("site %d: %d %+v", s, res.StatusCode, ans)
					}
					return
				}
			})
		}
		wg.Wait()
		elapsed, cpu = elapsed+time.Since(start), cpu+processCPU()-cpu0
	}
	b.ReportMetric(float64(b.N*sites*MaxRecords)/elapsed.Seconds(), "logs-stored/s")
	b.ReportMetric(cpu*1e6/float64(b.N*sites*MaxRecords), "hub-cpu-us/log")
}

// TestSitesOfCopiedObjects: at a hub, a site's command is its own, filed under the
// site; a platform two sites have is one platform listing both; the hub's own command
// and platform have none. A permission's constraint on the site confines commands and
// platforms to that site's, on both stores.
func TestSitesOfCopiedObjects(t *testing.T) { eachStore(t, testSitesOfCopiedObjects) }

func testSitesOfCopiedObjects(t *testing.T, r *rig) {
	ctx := context.Background()
	_, lyonToken, err := r.db.CreateHubSite(ctx, "Lyon", "", "", store.All)
	if err != nil {
		t.Fatal(err)
	}
	lyon, err := r.db.HubSiteNamed(ctx, "Lyon")
	if err != nil {
		t.Fatal(err)
	}
	if st, ans := r.push("inst", "e1", 1, platformIOS, commandVer); st != 200 || ans.Applied != 2 {
		t.Fatalf("Paris's push: %d %+v", st, ans)
	}
	recs := []Record{platformIOS, commandVer}
	for i := range recs {
		recs[i].Seq = int64(i + 1)
	}
	raw, _ := json.Marshal(Batch{Protocol: Protocol, Instance: "lyon", Epoch: "l1", EpochStart: 1, SentAt: time.Now(), Version: "test", Records: recs})
	if st, ans := r.post(lyonToken, raw); st != 200 || ans.Applied != 2 {
		t.Fatalf("Lyon's push: %d %+v", st, ans)
	}
	hubPlatform, err := r.db.Create(ctx, store.Platforms, store.Values{"name": "Junos", "slug": "junos"}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	hubCommand, err := r.db.Create(ctx, store.Commands, store.Values{"name": "Version", "command": "show version",
		"platforms": []int64{hubPlatform}}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	lyonCommand, ok, err := r.db.HubObject(ctx, lyon.ID, store.KindCommand, "8")
	if err != nil || !ok {
		t.Fatalf("Lyon's command at the hub: %v %v", ok, err)
	}
	parisCommand := r.hubID(store.KindCommand, "8")
	ios := r.hubID(store.KindPlatform, "3")

	// Each command its site; the platform both sites, once.
	cmds, err := r.db.Rows(ctx, store.Commands, []int64{parisCommand, lyonCommand, hubCommand})
	if err != nil || len(cmds) != 3 {
		t.Fatal(cmds, err)
	}
	siteOf := func(row store.Row) any {
		if s, ok := row["site"].(store.Row); ok {
			return s["slug"]
		}
		return row["site"]
	}
	if got := []any{siteOf(cmds[0]), siteOf(cmds[1]), siteOf(cmds[2])}; fmt.Sprint(got) != "[paris lyon <nil>]" {
		t.Fatalf("the commands' sites (Paris's, Lyon's, the hub's): %v", got)
	}
	plats, err := r.db.Rows(ctx, store.Platforms, []int64{ios, hubPlatform})
	if err != nil || len(plats) != 2 {
		t.Fatal(plats, err)
	}
	var iosSites []any
	for _, s := range plats[0]["sites"].([]store.Row) {
		iosSites = append(iosSites, s["slug"])
	}
	if fmt.Sprint(iosSites) != "[paris lyon]" && fmt.Sprint(iosSites) != "[lyon paris]" || len(plats[1]["sites"].([]store.Row)) != 0 {
		t.Fatalf("the shared platform's sites %v, the hub's own platform's %v", iosSites, plats[1]["sites"])
	}

	// A constraint on the site (as a permission holds it) confines each list.
	confined := func(m *store.Model, constraint string) []int64 {
		t.Helper()
		e, err := store.CompileConstraints(m, constraint, 0)
		if err != nil {
			t.Fatal(err)
		}
		ids, n, err := r.db.ListIDs(ctx, store.Query{Model: m.Type, Where: []store.Expr{e}, Order: []store.Order{{SQL: "t.id"}}, Limit: 50})
		if err != nil || n != len(ids) {
			t.Fatalf("%s %s: %v (count %d) %v", m.Type, constraint, ids, n, err)
		}
		return ids
	}
	for _, c := range []struct {
		m          *store.Model
		constraint string
		want       []int64
	}{
		{store.Commands, `{"site__slug": "paris"}`, []int64{parisCommand}},
		{store.Commands, fmt.Sprintf(`{"site": %d}`, lyon.SiteID), []int64{lyonCommand}},
		{store.Commands, `{"site__isnull": true}`, []int64{hubCommand}},
		{store.Platforms, `{"sites__slug": "paris"}`, []int64{ios}},
		{store.Platforms, `{"sites__slug": "berlin"}`, nil},
		{store.Platforms, `{"sites__isnull": true}`, []int64{hubPlatform}},
	} {
		if got := confined(c.m, c.constraint); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s confined by %s: %v, want %v", c.m.Type, c.constraint, got, c.want)
		}
	}

	// Paris forgets the platform: it stays Lyon's.
	if st, _ := r.push("inst", "e1", 3, Record{Kind: store.KindPlatform, Op: store.OpDelete, ID: 3}); st != 200 {
		t.Fatal("Paris's platform delete")
	}
	if got := confined(store.Platforms, `{"sites__slug": "paris"}`); len(got) != 0 {
		t.Fatalf("a platform Paris forgot is still Paris's: %v", got)
	}
	if got := confined(store.Platforms, `{"sites__slug": "lyon"}`); fmt.Sprint(got) != fmt.Sprint([]int64{ios}) {
		t.Fatalf("Lyon's platforms once Paris forgot its: %v", got)
	}
}
