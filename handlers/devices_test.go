package handlers

import (
	"context"
	"database/sql"
	"testing"

	"fieldkit/store"
)

// inventory seeds two sites, two platforms and a tag through the API.
func (e *env) inventory() {
	e.t.Helper()
	e.must(201, "POST", "/api/dcim/sites/", e.admin, map[string]any{"name": "North", "slug": "north"})
	e.must(201, "POST", "/api/dcim/sites/", e.admin, map[string]any{"name": "South", "slug": "south"})
	e.must(201, "POST", "/api/dcim/platforms/", e.admin, map[string]any{"name": "Cisco IOS", "slug": "ios"})
	e.must(201, "POST", "/api/dcim/platforms/", e.admin, map[string]any{"name": "Arista EOS", "slug": "arista_eos"})
	e.must(201, "POST", "/api/extras/tags/", e.admin, map[string]any{"name": "Core", "slug": "core"})
}

func TestDevicesCRUD(t *testing.T) {
	e := newEnv(t)
	e.inventory()
	d := e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{
		"name": "sw1", "site": map[string]any{"slug": "north"}, "platform": map[string]any{"slug": "ios"},
		"tags": []any{map[string]any{"slug": "core"}}, "custom_fields": map[string]any{"ssh_port": 2222, "rack": "A1"},
	})
	if d["site"].(map[string]any)["slug"] != "north" || d["platform"].(map[string]any)["slug"] != "ios" {
		t.Fatalf("nested refs: %v", d)
	}
	if st := d["status"].(map[string]any); st["value"] != "active" || st["label"] != "Active" {
		t.Fatalf("status: %v", d["status"])
	}
	if tags := d["tags"].([]any); len(tags) != 1 || tags[0].(map[string]any)["slug"] != "core" {
		t.Fatalf("tags: %v", d["tags"])
	}
	if d["primary_ip"] != nil || d["host_key_fingerprint"] != "" || d["custom_fields"].(map[string]any)["ssh_port"] != 2222.0 {
		t.Fatalf("created: %v", d)
	}
	id := itoa(int64(d["id"].(float64)))
	// PATCH: status as value or as read back, custom fields merged, platform cleared
	d = e.must(200, "PATCH", "/api/dcim/devices/"+id+"/", e.admin, map[string]any{
		"status": map[string]any{"value": "offline", "label": "Offline"}, "platform": nil,
		"custom_fields": map[string]any{"ssh_port": 22}, "tags": []any{},
	})
	cf := d["custom_fields"].(map[string]any)
	if d["status"].(map[string]any)["value"] != "offline" || d["platform"] != nil || cf["rack"] != "A1" || cf["ssh_port"] != 22.0 || len(d["tags"].([]any)) != 0 {
		t.Fatalf("patched: %v", d)
	}
	if d := e.must(200, "PATCH", "/api/dcim/devices/"+id+"/", e.admin, map[string]any{"custom_fields": nil}); len(d["custom_fields"].(map[string]any)) != 0 {
		t.Fatalf("null custom_fields: %v", d)
	}
	// PUT replaces custom fields
	d = e.must(200, "PUT", "/api/dcim/devices/"+id+"/", e.admin, map[string]any{"name": "sw1", "site": 2, "custom_fields": map[string]any{}})
	if len(d["custom_fields"].(map[string]any)) != 0 || d["site"].(map[string]any)["id"] != 2.0 {
		t.Fatalf("put: %v", d)
	}
	b := e.must(200, "GET", "/api/dcim/devices/"+id+"/?brief=1", e.admin, nil)
	if len(b) != 5 || b["name"] != "sw1" {
		t.Fatalf("brief: %v", b)
	}
	e.must(204, "DELETE", "/api/dcim/devices/"+id+"/", e.admin, nil)
	e.must(404, "GET", "/api/dcim/devices/"+id+"/", e.admin, nil)
}

func TestDeviceValidation(t *testing.T) {
	e := newEnv(t)
	e.inventory()
	e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{"name": "sw1", "site": 1})
	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"missing site", map[string]any{"name": "x"}, "site"},
		{"null site", map[string]any{"name": "x", "site": nil}, "site"},
		{"unknown site id", map[string]any{"name": "x", "site": 99}, "site"},
		{"unknown site slug", map[string]any{"name": "x", "site": map[string]any{"slug": "nope"}}, "site"},
		{"site bad ref", map[string]any{"name": "x", "site": "north"}, "site"},
		{"missing name", map[string]any{"site": 1}, "name"},
		{"duplicate name in site", map[string]any{"name": "sw1", "site": 1}, "name"},
		{"bad status", map[string]any{"name": "x", "site": 1, "status": "broken"}, "status"},
		{"unknown platform", map[string]any{"name": "x", "site": 1, "platform": 9}, "platform"},
		{"unknown tag", map[string]any{"name": "x", "site": 1, "tags": []any{map[string]any{"slug": "edge"}}}, "tags"},
		{"tags not list", map[string]any{"name": "x", "site": 1, "tags": "core"}, "tags"},
		{"ssh_port too big", map[string]any{"name": "x", "site": 1, "custom_fields": map[string]any{"ssh_port": 70000}}, "custom_fields"},
		{"ssh_port text", map[string]any{"name": "x", "site": 1, "custom_fields": map[string]any{"ssh_port": "22"}}, "custom_fields"},
		{"ssh_port fraction", map[string]any{"name": "x", "site": 1, "custom_fields": map[string]any{"ssh_port": 22.5}}, "custom_fields"},
		{"custom_fields not object", map[string]any{"name": "x", "site": 1, "custom_fields": []any{}}, "custom_fields"},
		{"primary_ip4 unknown", map[string]any{"name": "x", "site": 1, "primary_ip4": 5}, "primary_ip4"},
		{"legacy not bool", map[string]any{"name": "x", "site": 1, "legacy_algorithms": 1}, "legacy_algorithms"},
		{"read-only field", map[string]any{"name": "x", "site": 1, "host_key_fingerprint": ""}, "host_key_fingerprint"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := e.must(400, "POST", "/api/dcim/devices/", e.admin, c.body)
			if _, ok := m[c.field]; !ok {
				t.Fatalf("400 does not name %s: %v", c.field, m)
			}
		})
	}
	// the same name at another site is fine
	e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{"name": "sw1", "site": 2})
	e.must(400, "PATCH", "/api/dcim/devices/1/", e.admin, map[string]any{"site": nil})
}

func TestDeviceFiltersAndOrdering(t *testing.T) {
	e := newEnv(t)
	e.inventory()
	for _, d := range []map[string]any{
		{"name": "c-sw", "site": 1, "platform": 1, "tags": []any{1}},
		{"name": "a-sw", "site": 2, "platform": 2, "status": "planned"},
		{"name": "b-sw", "site": 1},
	} {
		e.must(201, "POST", "/api/dcim/devices/", e.admin, d)
	}
	for _, c := range []struct {
		q    string
		want []int
	}{
		{"", []int{2, 3, 1}},
		{"ordering=-name", []int{1, 3, 2}},
		{"ordering=site,name", []int{3, 1, 2}},
		{"site_id=1", []int{3, 1}},
		{"site=south", []int{2}},
		{"site_id=1&site_id=2", []int{2, 3, 1}},
		{"platform_id=1&platform_id=2", []int{2, 1}},
		{"platform=arista_eos", []int{2}},
		{"platform_id=null", []int{3}},
		{"platform__n=ios", []int{2, 3}},
		{"tag=core", []int{1}},
		{"status=planned", []int{2}},
		{"name__isw=B", []int{3}},
		{"q=sw&site=north", []int{3, 1}},
		{"id=1&id=2", []int{2, 1}},
		{"has_primary_ip=false", []int{2, 3, 1}},
		{"exclude=config_context&site_id=1", []int{3, 1}},
	} {
		if got := ids(e.must(200, "GET", "/api/dcim/devices/?"+c.q, e.admin, nil)); !eqInts(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.q, got, c.want)
		}
	}
	for _, bad := range []string{"site_id=x", "sitee=1", "ordering=colour", "has_primary_ip=maybe", "status__zz=a", "exclude=colour"} {
		e.must(400, "GET", "/api/dcim/devices/?"+bad, e.admin, nil)
	}
	if m := e.must(400, "GET", "/api/dcim/devices/?exclude=config_context&exclude=colour", e.admin, nil); m["exclude"] == nil {
		t.Errorf("exclude=colour: 400 does not name the parameter: %v", m)
	}
}

func TestDevicePermissions(t *testing.T) {
	e := newEnv(t)
	e.inventory()
	e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{"name": "n1", "site": 1, "platform": 1})
	e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{"name": "s1", "site": 2, "platform": 2})
	bob := e.user("bob", false)
	e.must(403, "GET", "/api/dcim/devices/", bob, nil)
	e.grant("bob", "dcim.device", []string{"view"}, `{"site__slug": "north"}`)
	if got := ids(e.must(200, "GET", "/api/dcim/devices/", bob, nil)); !eqInts(got, []int{1}) {
		t.Fatalf("site constraint: %v", got)
	}
	e.must(404, "GET", "/api/dcim/devices/2/", bob, nil)
	e.must(403, "POST", "/api/dcim/devices/", bob, map[string]any{"name": "x", "site": 1})
	e.must(403, "DELETE", "/api/dcim/devices/1/", bob, nil)
	e.must(403, "DELETE", "/api/dcim/devices/1/host-key/", bob, nil)

	carol := e.user("carol", false)
	e.grant("carol", "dcim.device", []string{"view", "add", "change"}, `{"platform__slug": "ios"}`)
	if got := ids(e.must(200, "GET", "/api/dcim/devices/", carol, nil)); !eqInts(got, []int{1}) {
		t.Fatalf("platform constraint: %v", got)
	}
	e.must(201, "POST", "/api/dcim/devices/", carol, map[string]any{"name": "n2", "site": 1, "platform": map[string]any{"slug": "ios"}})
	// a device outside the constraint cannot be created, nor can one be moved out of it
	e.must(403, "POST", "/api/dcim/devices/", carol, map[string]any{"name": "n3", "site": 1, "platform": 2})
	e.must(403, "PATCH", "/api/dcim/devices/1/", carol, map[string]any{"platform": 2})
	e.must(200, "PATCH", "/api/dcim/devices/1/", carol, map[string]any{"description": "ok"})
	// clearing a pinned host key is an action of its own: change is not enough
	e.must(403, "DELETE", "/api/dcim/devices/1/host-key/", carol, nil)
	e.grant("carol", "dcim.device", []string{"clear_host_key"}, `{"platform__slug": "ios"}`)
	e.must(204, "DELETE", "/api/dcim/devices/1/host-key/", carol, nil)
	e.must(404, "DELETE", "/api/dcim/devices/2/host-key/", carol, nil)
	if got := ids(e.must(200, "GET", "/api/dcim/devices/?ordering=id", e.admin, nil)); !eqInts(got, []int{1, 2, 3}) {
		t.Fatalf("refused create was written: %v", got)
	}
	e.must(401, "GET", "/api/dcim/devices/", "", nil)
}

func TestDeviceHostKey(t *testing.T) {
	e := newEnv(t)
	e.inventory()
	e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{"name": "sw1", "site": 1})
	ctx := context.Background()
	// ssh-keygen -l on this key prints SHA256:+a3FoNyN7PMY3/DyPFp3aOVLnP2s/YOkl1Sd0MmqT2s
	key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMTmUxJRYwcMzyiGCNJfqfxIsdm4N6J2ymqe6UeB2cDc"
	if err := e.db.SaveHostKey(ctx, 1, key); err != nil {
		t.Fatal(err)
	}
	d := e.must(200, "GET", "/api/dcim/devices/1/", e.admin, nil)
	fp, _ := d["host_key_fingerprint"].(string)
	if fp != store.HostKeyFingerprint(key) || len(fp) != len("SHA256:")+43 {
		t.Fatalf("fingerprint: %q", fp)
	}
	e.must(204, "DELETE", "/api/dcim/devices/1/host-key/", e.admin, nil)
	if k, err := e.db.KnownHostKey(ctx, 1); err != nil || k != "" {
		t.Fatalf("after clear: %q %v", k, err)
	}
	e.must(404, "DELETE", "/api/dcim/devices/9/host-key/", e.admin, nil)
}

func TestDeviceDeleteKeepsLogsAndSiteInUse(t *testing.T) {
	e := newEnv(t)
	e.inventory()
	e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{"name": "sw1", "site": 1, "platform": 1})
	ctx := context.Background()
	err := e.db.Write(ctx, func(tx *sql.Tx) error {
		now := store.Stamp(e.db.Now())
		_, err := tx.ExecContext(ctx, `INSERT INTO command_logs (command_name, device_id, device_name, username, success,
			execution_time, created, last_updated) VALUES ('show version', 1, 'sw1', 'admin', 1, ?, ?, ?)`, now, now, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m := e.must(409, "DELETE", "/api/dcim/sites/1/", e.admin, nil)
	if m["detail"] == nil {
		t.Fatalf("409 body: %v", m)
	}
	e.must(204, "DELETE", "/api/dcim/platforms/1/", e.admin, nil)
	if d := e.must(200, "GET", "/api/dcim/devices/1/", e.admin, nil); d["platform"] != nil {
		t.Fatalf("device kept a deleted platform: %v", d)
	}
	e.must(204, "DELETE", "/api/dcim/devices/1/", e.admin, nil)
	var devID sql.NullInt64
	var name string
	if err := e.db.Reader().QueryRowContext(ctx, `SELECT device_id, device_name FROM command_logs`).Scan(&devID, &name); err != nil {
		t.Fatal(err)
	}
	if devID.Valid || name != "sw1" {
		t.Fatalf("log after device delete: %v %q", devID, name)
	}
	e.must(204, "DELETE", "/api/dcim/sites/1/", e.admin, nil)
}
