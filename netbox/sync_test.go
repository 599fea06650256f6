package netbox_test

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/netbox"
	"fieldkit/netbox/fakenetbox"
	"fieldkit/store"
)

const fixtures = "../testdata/netbox"

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newSyncer(db *store.DB, nb *fakenetbox.NetBox, filter string) *netbox.Syncer {
	return netbox.NewSyncer(db, netbox.Config{URL: nb.URL, Token: fakenetbox.Token, Filter: filter, PageSize: 2}, nil)
}

// syncedOnce is a fresh store after a first sync of the managed devices from a fake
// NetBox serving the recorded shapes.
func syncedOnce(t *testing.T) (*store.DB, *fakenetbox.NetBox, *netbox.Syncer) {
	t.Helper()
	db := openDB(t)
	nb := fakenetbox.Start(t, fixtures, false)
	s := newSyncer(db, nb, "tag=managed")
	if _, err := s.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return db, nb, s
}

// device is a synced device as the store has it, by name.
func device(t *testing.T, db *store.DB, name string) store.Row {
	t.Helper()
	ids, _, err := db.ListIDs(context.Background(), store.Query{Model: store.TypeDevice,
		Where: []store.Expr{{SQL: "t.name = ?", Args: []any{name}}}, Limit: 2})
	if err != nil || len(ids) != 1 {
		t.Fatalf("device %s: %v %v", name, ids, err)
	}
	rows, err := db.Rows(context.Background(), store.Devices, ids)
	if err != nil {
		t.Fatal(err)
	}
	return rows[0]
}

func count(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func addressOf(v any) string {
	if r, ok := v.(store.Row); ok {
		return fmt.Sprint(r["address"])
	}
	return ""
}

// TestSyncFirstRun: the managed devices and everything they refer to arrive, in pages,
// with NetBox's ids, their primary IPs, SSH ports, VLANs and tags.
func TestSyncFirstRun(t *testing.T) {
	db := openDB(t)
	nb := fakenetbox.Start(t, fixtures, false)
	nb.NextHost = "http://netbox.internal:8000" // next links naming a host we cannot reach
	var lines []string
	rep, err := newSyncer(db, nb, "tag=managed").Sync(context.Background(), func(s string) { lines = append(lines, s) })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]netbox.Count{"devices": {Fetched: 4, Created: 4}, "sites": {Fetched: 2, Created: 2},
		"platforms": {Fetched: 3, Created: 3}, "interfaces": {Fetched: 8, Created: 8}, "ip-addresses": {Fetched: 5, Created: 5},
		"vlans": {Fetched: 3, Created: 3}, "tags": {Fetched: 3, Created: 3}}
	for kind, w := range want {
		if got := *rep.Objects[kind]; got != w {
			t.Errorf("%s: %+v, want %+v", kind, got, w)
		}
	}
	if rep.Pages < 6 || len(lines) < rep.Pages {
		t.Errorf("%d pages, %d progress lines", rep.Pages, len(lines))
	}
	sw := device(t, db, "par-sw-1")
	if sw["netbox_id"] != int64(102) || addressOf(sw["primary_ip4"]) != "192.0.2.12/24" || addressOf(sw["primary_ip6"]) != "2001:db8:10::12/64" ||
		sw["platform"].(store.Row)["slug"] != "arista-eos" || sw["site"].(store.Row)["slug"] != "paris-1" {
		t.Errorf("par-sw-1: %v", sw)
	}
	target, err := db.DeviceTarget(context.Background(), sw.ID())
	if err != nil || target.Port != 2222 {
		t.Errorf("par-sw-1's SSH port: %+v %v", target, err)
	}
	if d := device(t, db, "lyo-sw-2"); d["status"] != "inventory" || len(d["tags"].([]store.Row)) != 2 {
		t.Errorf("lyo-sw-2: %v", d)
	}
	var mode, untagged string
	var tagged int
	err = db.Reader().QueryRow(`SELECT i.mode, v.name, (SELECT count(*) FROM interface_tagged_vlans WHERE interface_id = i.id)
		FROM interfaces i JOIN vlans v ON v.id = i.untagged_vlan_id WHERE i.name = 'GigabitEthernet0/0/1'`).Scan(&mode, &untagged, &tagged)
	if err != nil || mode != "tagged" || untagged != "users" || tagged != 2 {
		t.Errorf("GigabitEthernet0/0/1: %s %s %d %v", mode, untagged, tagged, err)
	}
	if n := count(t, db, "devices WHERE name = 'par-unmanaged'"); n != 0 {
		t.Error("the filter let an unmanaged device in")
	}
	for _, r := range nb.Requests() {
		if !strings.Contains(r, "limit=2") && r != "/api/status/" {
			t.Errorf("a request without the page size: %s", r)
		}
	}
	// Again: nothing changed upstream, so nothing is written.
	rep, err = newSyncer(db, nb, "tag=managed").Sync(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for kind, c := range rep.Objects {
		if c.Created+c.Updated+c.Deleted+c.Kept != 0 || c.Unchanged != c.Fetched {
			t.Errorf("second sync, %s: %+v", kind, c)
		}
	}
}

// TestSyncChangesAndDeletions: a change upstream is applied; a device gone upstream is
// deleted, unless its logs keep it (offline, FieldKit's own), and so is what only it
// used; a platform a command uses stays.
func TestSyncChangesAndDeletions(t *testing.T) {
	ctx := context.Background()
	db, nb, s := syncedOnce(t)
	lyo := device(t, db, "lyo-sw-2")
	if _, err := db.CreateLog(ctx, store.Values{"command_name": "show version", "device": lyo.ID(), "device_name": "lyo-sw-2",
		"username": "admin", "success": true, "created": time.Now()}); err != nil {
		t.Fatal(err)
	}
	junos := device(t, db, "lyo-edge-1")["platform"].(store.Row).ID()
	if _, err := db.Create(ctx, store.Commands, store.Values{"name": "Version", "command": "show version", "platforms": []int64{junos}}, store.All); err != nil {
		t.Fatal(err)
	}
	nb.Change("devices", func(ds []map[string]any) []map[string]any {
		var out []map[string]any
		for _, d := range ds {
			switch d["name"] {
			case "par-core-1":
				d["status"] = map[string]any{"value": "offline", "label": "Offline"}
				d["description"] = "replaced on site"
				d["last_updated"] = "2024-06-01T08:00:00.000000Z"
			case "lyo-sw-2", "lyo-edge-1":
				continue
			}
			out = append(out, d)
		}
		return out
	})
	nb.Change("interfaces", func(is []map[string]any) []map[string]any {
		for _, i := range is {
			if i["name"] == "GigabitEthernet0/0/0" {
				i["description"], i["last_updated"] = "uplink to the new core", "2024-06-01T08:00:00.000000Z"
			}
		}
		return is
	})
	rep, err := s.Sync(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Objects["devices"]; c.Updated != 1 || c.Deleted != 1 || c.Kept != 1 || c.Unchanged != 1 {
		t.Errorf("devices: %+v", c)
	}
	if d := device(t, db, "par-core-1"); d["status"] != "offline" || d["description"] != "replaced on site" {
		t.Errorf("par-core-1: %v", d)
	}
	kept := device(t, db, "lyo-sw-2")
	if kept["status"] != "offline" || kept["netbox_id"] != nil {
		t.Errorf("lyo-sw-2, kept for its logs: %v", kept)
	}
	if n := count(t, db, "devices WHERE name = 'lyo-edge-1'"); n != 0 {
		t.Error("lyo-edge-1 is gone from NetBox and has no logs: it should be deleted")
	}
	var plat, site any
	db.Reader().QueryRow(`SELECT netbox_id FROM platforms WHERE id = ?`, junos).Scan(&plat)
	db.Reader().QueryRow(`SELECT netbox_id FROM sites WHERE slug = 'lyon-2'`).Scan(&site)
	if plat != nil || site != nil || count(t, db, "platforms") != 3 {
		t.Errorf("the platform a command uses and the site a kept device uses stay, as FieldKit's own: %v %v", plat, site)
	}
	var desc string
	db.Reader().QueryRow(`SELECT description FROM interfaces WHERE name = 'GigabitEthernet0/0/0'`).Scan(&desc)
	if desc != "uplink to the new core" {
		t.Errorf("interface description: %q", desc)
	}
	// The kept device is FieldKit's now: it can be edited and deleted here.
	if err := db.Update(ctx, store.Devices, kept.ID(), store.Values{"description": "decommissioned"}, store.All); err != nil {
		t.Errorf("edit of a kept device: %v", err)
	}
}

// TestSyncFailureChangesNothing: a refused page ends the sync with NetBox's reason;
// the inventory is as it was; the next sync resumes without fetching again what it had.
func TestSyncFailureChangesNothing(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	nb := fakenetbox.Start(t, fixtures, false)
	s := newSyncer(db, nb, "tag=managed")
	failed := false
	nb.Hook = func(r *http.Request) int {
		if r.URL.Path == "/api/dcim/interfaces/" && !failed {
			failed = true
			return http.StatusInternalServerError
		}
		return 0
	}
	_, err := s.Sync(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "/api/dcim/interfaces/") || !strings.Contains(err.Error(), "500") {
		t.Fatalf("error: %v", err)
	}
	if n := count(t, db, "devices"); n != 0 {
		t.Errorf("%d devices after a failed sync", n)
	}
	before := len(nb.Requests())
	rep, err := s.Sync(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Resumed || rep.Objects["devices"].Created != 4 {
		t.Errorf("resumed sync: %+v", rep)
	}
	for _, r := range nb.Requests()[before:] {
		if strings.HasPrefix(r, "/api/dcim/devices/") || strings.HasPrefix(r, "/api/dcim/sites/") {
			t.Errorf("fetched again after resuming: %s", r)
		}
	}
}

// TestSyncInterrupted: a sync stopped mid-fetch (Ctrl-C) keeps the pages it staged and
// the next one goes on from the page it was fetching.
func TestSyncInterrupted(t *testing.T) {
	db := openDB(t)
	nb := fakenetbox.Start(t, fixtures, false)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	nb.Hook = func(r *http.Request) int {
		if r.URL.Path == "/api/dcim/devices/" && r.URL.Query().Get("offset") == "2" {
			once.Do(func() {
				cancel()
				<-r.Context().Done() // the client gives up on this page
			})
		}
		return 0
	}
	_, err := newSyncer(db, nb, "tag=managed").Sync(ctx, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sync: %v", err)
	}
	runs, _ := db.SyncRuns(context.Background(), 1)
	if len(runs) != 1 || runs[0].State != "fetching" || runs[0].Pages != 1 {
		t.Fatalf("the run: %+v", runs)
	}
	before := len(nb.Requests())
	rep, err := newSyncer(db, nb, "tag=managed").Sync(context.Background(), nil)
	if err != nil || !rep.Resumed || rep.Objects["devices"].Created != 4 {
		t.Fatalf("resumed: %+v %v", rep, err)
	}
	first := nb.Requests()[before]
	if !strings.Contains(first, "offset=2") {
		t.Errorf("the resumed sync began with %s, not the page it was fetching", first)
	}
	// A changed filter does not resume: it starts over.
	if _, err := newSyncer(db, nb, "site=paris-1").Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "devices WHERE name LIKE 'lyo-%'"); n != 0 {
		t.Errorf("%d Lyon devices after syncing Paris only", n)
	}
}

// TestSyncRefusals: a wrong token and an untrusted certificate are said as such, and the
// token never appears in a message.
func TestSyncRefusals(t *testing.T) {
	db := openDB(t)
	nb := fakenetbox.Start(t, fixtures, true)
	secret := "feedfacefeedfacefeedfacefeedfacefeedface"
	_, err := netbox.NewSyncer(db, netbox.Config{URL: nb.URL, Token: secret}, nil).Sync(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: nb.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = netbox.NewSyncer(db, netbox.Config{URL: nb.URL, Token: secret, CAFile: ca}, nil).Sync(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "403 Forbidden: Invalid token") || strings.Contains(err.Error(), secret) {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := netbox.NewSyncer(db, netbox.Config{URL: nb.URL, Token: fakenetbox.Token, CAFile: ca}, nil).Sync(context.Background(), nil); err != nil {
		t.Errorf("with the CA file: %v", err)
	}
	if _, err := netbox.NewSyncer(db, netbox.Config{}, nil).Sync(context.Background(), nil); !errors.Is(err, netbox.ErrNotConfigured) {
		t.Errorf("no NetBox: %v", err)
	}
}

// TestSyncedObjectsAreReadOnly: only the sync writes what came from NetBox; FieldKit's
// own settings of it stay writable; a device made here with a NetBox device's name and
// site is adopted rather than duplicated.
func TestSyncedObjectsAreReadOnly(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	site, _ := db.Create(ctx, store.Sites, store.Values{"name": "Paris 1", "slug": "paris-1"}, store.All)
	local, _ := db.Create(ctx, store.Devices, store.Values{"name": "par-core-1", "site": site}, store.All)
	eos, _ := db.Create(ctx, store.Platforms, store.Values{"name": "Arista EOS", "slug": "arista_eos"}, store.All) // NetBox's is arista-eos
	nb := fakenetbox.Start(t, fixtures, false)
	if _, err := newSyncer(db, nb, "tag=managed").Sync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if d := device(t, db, "par-core-1"); d.ID() != local || d["netbox_id"] != int64(101) {
		t.Errorf("adopted: %v", d)
	}
	err := db.Update(ctx, store.Devices, local, store.Values{"description": "x"}, store.All)
	var fe *store.FieldError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "comes from NetBox (NetBox id 101)") {
		t.Errorf("edit of a synced device: %v", err)
	}
	if err := db.Delete(ctx, store.Devices, local); err == nil || !strings.Contains(err.Error(), "comes from NetBox") {
		t.Errorf("delete of a synced device: %v", err)
	}
	if err := db.Update(ctx, store.Devices, local, store.Values{"connect_timeout": int64(20)}, store.All); err != nil {
		t.Errorf("FieldKit's own setting of a synced device: %v", err)
	}
	plat := device(t, db, "par-core-1")["platform"].(store.Row).ID()
	if err := db.Update(ctx, store.Platforms, plat, store.Values{"driver": "cisco_ios"}, store.All); err != nil {
		t.Errorf("a synced platform's driver: %v", err)
	}
	var nbID any
	db.Reader().QueryRow(`SELECT netbox_id FROM platforms WHERE id = ?`, eos).Scan(&nbID)
	if n := count(t, db, "platforms"); n != 3 || nbID != int64(2) {
		t.Errorf("a platform made here with NetBox's name and another slug is adopted: %d platforms, netbox_id %v", n, nbID)
	}
}

// TestSyncApplyFailureRollsBack: a sync whose data cannot be applied (NetBox renamed a
// device to the name of one made here at the same site) changes nothing, not even
// what it had applied before the refusal, and says which object and why; once the
// clash is gone the next sync applies it all.
func TestSyncApplyFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	db, nb, s := syncedOnce(t)
	paris := device(t, db, "par-core-1")["site"].(store.Row).ID()
	local, err := db.Create(ctx, store.Devices, store.Values{"name": "par-core-9", "site": paris}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	const later = "2024-06-01T08:00:00.000000Z"
	nb.Change("sites", func(ss []map[string]any) []map[string]any {
		for _, st := range ss {
			if st["slug"] == "paris-1" {
				st["description"], st["last_updated"] = "moved to hall 2", later
			}
		}
		return ss
	})
	nb.Change("devices", func(ds []map[string]any) []map[string]any {
		for _, d := range ds {
			if d["name"] == "par-core-1" {
				d["name"], d["last_updated"] = "par-core-9", later
			}
		}
		return ds
	})
	_, err = s.Sync(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "nothing was changed: device 101") || !strings.Contains(err.Error(), "already has this name") {
		t.Fatalf("error: %v", err)
	}
	var desc string
	db.Reader().QueryRow(`SELECT description FROM sites WHERE slug = 'paris-1'`).Scan(&desc)
	if desc != "Paris data centre, hall 1" {
		t.Errorf("the site's change, applied before the refusal, stayed: %q", desc)
	}
	if d := device(t, db, "par-core-1"); d["netbox_id"] != int64(101) {
		t.Errorf("par-core-1: %v", d)
	}
	if d := device(t, db, "par-core-9"); d.ID() != local || d["netbox_id"] != nil {
		t.Errorf("the device made here: %v", d)
	}
	runs, _ := db.SyncRuns(ctx, 1)
	if len(runs) != 1 || runs[0].State != "failed" || !strings.Contains(runs[0].Error, "already has this name") {
		t.Errorf("the failed run: %+v", runs)
	}
	if err := db.Delete(ctx, store.Devices, local); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sync(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Objects["devices"]; c.Updated != 1 {
		t.Errorf("devices: %+v", c)
	}
	if d := device(t, db, "par-core-9"); d["netbox_id"] != int64(101) {
		t.Errorf("renamed: %v", d)
	}
	db.Reader().QueryRow(`SELECT description FROM sites WHERE slug = 'paris-1'`).Scan(&desc)
	if desc != "moved to hall 2" {
		t.Errorf("the site after the good sync: %q", desc)
	}
}

// TestSyncEmptyAnswerRefused: a filter that suddenly matches nothing (an emptied tag, a
// token that lost its permissions) does not empty the inventory: the sync is refused,
// says why and what to check, and changes nothing; --allow-empty removes them.
func TestSyncEmptyAnswerRefused(t *testing.T) {
	ctx := context.Background()
	db, nb, _ := syncedOnce(t)
	before := count(t, db, "devices")
	if before == 0 {
		t.Fatal("the first sync brought no device")
	}
	nb.Change("devices", func([]map[string]any) []map[string]any { return nil })
	_, err := newSyncer(db, nb, "tag=managed").Sync(ctx, nil)
	if !errors.Is(err, netbox.ErrEmpty) || !strings.Contains(err.Error(), "nothing was changed") ||
		!strings.Contains(err.Error(), "inventory.netbox_filter") || !strings.Contains(err.Error(), "--allow-empty") {
		t.Fatalf("an empty answer: %v", err)
	}
	if n := count(t, db, "devices"); n != before {
		t.Fatalf("%d devices after a refused sync, want %d", n, before)
	}
	s := netbox.NewSyncer(db, netbox.Config{URL: nb.URL, Token: fakenetbox.Token, Filter: "tag=managed", PageSize: 2, AllowEmpty: true}, nil)
	rep, err := s.Sync(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "devices"); n != 0 || rep.Objects["devices"].Deleted != before {
		t.Errorf("allowed: %d devices left, report %+v", n, rep.Objects["devices"])
	}
}
