package handlers

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"fieldkit/store"
)

// importBody posts a file to the import endpoint.
func (e *env) importFile(token, name, data string, extra map[string]any) resp {
	body := map[string]any{"filename": name, "data": data}
	for k, v := range extra {
		body[k] = v
	}
	return e.do("POST", pathImport, token, body)
}

const sitesCSV = `name,status,region,description
Paris 1,active,Europe,first floor
Lyon,planned,,
`

const platformsCSV = "name,slug,driver,manufacturer\nCisco IOS,cisco_ios,cisco_ios,Cisco\nArista EOS,eos,,Arista\n"

const devicesCSV = `name,site,platform,status,mgmt_ip,ssh_port,tags,cf_owner,role,device_type
par-r1,Paris 1,cisco_ios,Active,192.0.2.11/24,2222,core,noc,router,isr4431
par-sw1,paris-1,Arista EOS,planned,192.0.2.12/24,,,,switch,7050
lyo-r1,lyon,cisco_ios,,2001:db8::21/64,830,core,,router,isr4431
`

// TestImportCSV: NetBox-style CSV files make sites, platforms and devices with their
// management addresses; importing them again changes nothing.
func TestImportCSV(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", pathTags, e.admin, map[string]any{"name": "Core", "slug": "core"})
	for _, f := range []struct{ name, data string }{{"sites.csv", sitesCSV}, {"platforms.csv", platformsCSV}, {"devices.csv", devicesCSV}} {
		rep := e.importFile(e.admin, f.name, f.data, nil).json(t)
		if rep["dry_run"] != false || rep["created"] == 0.0 || rep["updated"] != 0.0 {
			t.Fatalf("%s: %v", f.name, rep)
		}
	}
	site := e.must(200, "GET", pathSites+"?slug=paris-1", e.admin, nil)["results"].([]any)
	if len(site) != 1 || site[0].(map[string]any)["description"] != "first floor" {
		t.Fatalf("the site's slug comes from its name: %v", site)
	}
	dev := e.must(200, "GET", pathDevices+"?name=par-r1", e.admin, nil)["results"].([]any)[0].(map[string]any)
	if dev["mgmt_ip"] != "192.0.2.11/24" || dev["ssh_port"] != 2222.0 || dev["platform"].(map[string]any)["slug"] != "cisco_ios" ||
		dev["status"].(map[string]any)["value"] != "active" || len(dev["tags"].([]any)) != 1 ||
		dev["custom_fields"].(map[string]any)["owner"] != "noc" {
		t.Errorf("par-r1: %v", dev)
	}
	lyo := e.must(200, "GET", pathDevices+"?name=lyo-r1", e.admin, nil)["results"].([]any)[0].(map[string]any)
	if lyo["primary_ip6"] == nil || lyo["mgmt_ip"] != "2001:db8::21/64" {
		t.Errorf("lyo-r1: %v", lyo)
	}
	// Again: everything is there already, so nothing changes.
	rep := e.importFile(e.admin, "devices.csv", devicesCSV, nil).json(t)
	if rep["unchanged"] != 3.0 || rep["created"] != 0.0 || rep["updated"] != 0.0 {
		t.Errorf("second import: %v", rep)
	}
	types := rep["types"].([]any)[0].(map[string]any)
	if fmt.Sprint(types["ignored_columns"]) != "[role device_type]" {
		t.Errorf("ignored columns: %v", types["ignored_columns"])
	}
	if n := e.must(200, "GET", pathIPAddresses, e.admin, nil)["count"]; n != 3.0 {
		t.Errorf("%v addresses after two imports", n)
	}
	// A changed cell updates that device only.
	rep = e.importFile(e.admin, "devices.csv", strings.Replace(devicesCSV, "par-sw1,paris-1,Arista EOS,planned", "par-sw1,paris-1,Arista EOS,active", 1), nil).json(t)
	if rep["updated"] != 1.0 || rep["unchanged"] != 2.0 {
		t.Errorf("one change: %v", rep)
	}
}

// TestImportAllOrNothing: a file with problems writes nothing, and the 400 names each
// problem's row and column.
func TestImportAllOrNothing(t *testing.T) {
	e := newEnv(t)
	e.importFile(e.admin, "sites.csv", sitesCSV, nil)
	bad := `name,site,mgmt_ip,ssh_port,colour
ok-1,Lyon,10.0.0.1/24,22,
bad-site,Nowhere,,0,
bad-port,Lyon,,70000,
bad-ip,Lyon,10.0.0.300/24,,
,Lyon,,,blue
`
	r := e.importFile(e.admin, "devices.csv", bad, nil)
	if r.status != 400 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var got []string
	for _, p := range r.json(t)["errors"].([]any) {
		p := p.(map[string]any)
		got = append(got, fmt.Sprintf("%v/%v", p["row"], p["column"]))
	}
	want := "[3/site 3/ssh_port 4/ssh_port 5/mgmt_ip 6/colour]" // a bad reference does not hide the row's other problems
	if fmt.Sprint(got) != want {
		t.Errorf("problems at %v, want %v: %s", got, want, r.body)
	}
	if !strings.Contains(string(r.body), `no site named or with slug \"Nowhere\"`) {
		t.Errorf("the message names the site: %s", r.body)
	}
	if n := e.must(200, "GET", pathDevices, e.admin, nil)["count"]; n != 0.0 {
		t.Errorf("%v devices written by a refused import", n)
	}
	// Duplicates within the file are refused, naming the first.
	r = e.importFile(e.admin, "devices.csv", "name,site\na,Lyon\nb,Lyon\na,lyon\n", nil)
	if r.status != 400 || !strings.Contains(string(r.body), "the same device as row 2") {
		t.Errorf("duplicate: %d %s", r.status, r.body)
	}
	for _, c := range []struct{ name, data, want string }{
		{"stuff.csv", "name\nx\n", "cannot tell which objects"},
		{"devices.csv", "", "empty"},
		{"devices.csv", "name,site\n\"unterminated,Lyon\n", "CSV"},
		{"devices.csv", "name,site\na,Lyon,extra\n", "row 2: 3 values for 2 columns"},
		{"devices.yaml", "- name: [unclosed", "YAML"},
	} {
		r := e.importFile(e.admin, c.name, c.data, nil)
		if r.status != 400 || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s %q: %d %s", c.name, c.data, r.status, r.body)
		}
	}
}

// TestImportDryRun: a preview says what would be created and changed and writes nothing.
func TestImportDryRun(t *testing.T) {
	e := newEnv(t)
	e.importFile(e.admin, "sites.csv", sitesCSV, nil)
	rep := e.importFile(e.admin, "sites.csv", "name,description\nLyon,moved\nNice,\n", map[string]any{"dry_run": true}).json(t)
	rows := rep["rows"].([]any)
	if rep["dry_run"] != true || rep["created"] != 1.0 || rep["updated"] != 1.0 || len(rows) != 2 ||
		rows[0].(map[string]any)["action"] != "update" || rows[1].(map[string]any)["action"] != "create" ||
		rows[1].(map[string]any)["row"] != 3.0 {
		t.Fatalf("preview: %v", rep)
	}
	if n := e.must(200, "GET", pathSites, e.admin, nil)["count"]; n != 2.0 {
		t.Errorf("a dry run wrote: %v sites", n)
	}
	if s := e.must(200, "GET", pathSites+"?name=Lyon", e.admin, nil)["results"].([]any)[0].(map[string]any); s["description"] != "" {
		t.Errorf("a dry run changed Lyon: %v", s)
	}
}

// TestImportDocument: one YAML document with several object types, in any order:
// addresses on interfaces of devices it makes, one of them primary; JSON too.
func TestImportDocument(t *testing.T) {
	e := newEnv(t)
	doc := `
ip-addresses:
  - {address: 10.1.0.1/24, device: core1, interface: Gi0/1, is_primary: true}
  - {address: 10.9.0.9/24, status: reserved}
interfaces:
  - {device: core1, name: Gi0/1, type: 1000base-t, mode: access, untagged_vlan: 100}
  - {device: core1, name: Gi0/2, mode: tagged, tagged_vlans: [100, users]}
devices:
  - {name: core1, site: Paris 1, ssh_port: 2200}
vlans:
  - {vid: 100, name: users, site: paris-1}
sites:
  - {name: Paris 1, tags: [edge]}
tags:
  - {name: Edge, color: 00ff00}
`
	r := e.importFile(e.admin, "site.yaml", doc, nil)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if rep := r.json(t); rep["created"] != 8.0 {
		t.Errorf("created %v: %v", rep["created"], rep)
	}
	dev := e.must(200, "GET", pathDevices+"?name=core1", e.admin, nil)["results"].([]any)[0].(map[string]any)
	if dev["mgmt_ip"] != "10.1.0.1/24" || dev["ssh_port"] != 2200.0 {
		t.Errorf("core1: %v", dev)
	}
	gi2 := e.must(200, "GET", pathInterfaces+"?name=Gi0/2", e.admin, nil)["results"].([]any)[0].(map[string]any)
	if len(gi2["tagged_vlans"].([]any)) != 1 {
		t.Errorf("Gi0/2: %v", gi2)
	}
	r = e.importFile(e.admin, "more", `[{"name": "core2", "site": "paris-1", "mgmt_ip": "10.1.0.2/24"}]`, map[string]any{"type": "devices"})
	if r.status != 200 || r.json(t)["created"] != 1.0 {
		t.Errorf("JSON list: %d %s", r.status, r.body)
	}
}

// TestImportPermissions: each object type written needs its own permission; a user
// allowed to add devices imports devices at existing sites and no sites.
func TestImportPermissions(t *testing.T) {
	e := newEnv(t)
	e.importFile(e.admin, "sites.csv", sitesCSV, nil)
	tech := e.user("tech", false)
	e.grant("tech", "dcim.device", []string{"view", "add"}, "")
	if r := e.importFile(tech, "sites.csv", "name\nNice\n", nil); r.status != 403 {
		t.Errorf("sites without dcim.site add: %d %s", r.status, r.body)
	}
	if r := e.importFile(tech, "devices.csv", "name,site\nd1,Lyon\n", nil); r.status != 200 {
		t.Errorf("devices: %d %s", r.status, r.body)
	}
	// Changing it needs change.
	if r := e.importFile(tech, "devices.csv", "name,site,description\nd1,Lyon,x\n", nil); r.status != 403 {
		t.Errorf("update without change: %d %s", r.status, r.body)
	}
	if n := e.must(200, "GET", pathSites, e.admin, nil)["count"]; n != 2.0 {
		t.Errorf("%v sites", n)
	}
	if r := e.importFile("", "devices.csv", "name,site\nd2,Lyon\n", nil); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
}

// TestImportMetadata: OPTIONS on the import path names the object types and formats the
// import takes, the list the web UI's Import page shows; without a login it is refused.
func TestImportMetadata(t *testing.T) {
	e := newEnv(t)
	if r := e.do("OPTIONS", pathImport, "", nil); r.status != 401 && r.status != 403 {
		t.Fatalf("OPTIONS without a token: %d %s", r.status, r.body)
	}
	m := e.must(200, "OPTIONS", pathImport, e.admin, nil)
	post, _ := m["actions"].(map[string]any)["POST"].(map[string]any)
	values := func(field string) []string {
		var out []string
		f, _ := post[field].(map[string]any)
		cs, _ := f["choices"].([]any)
		for _, c := range cs {
			out = append(out, fmt.Sprint(c.(map[string]any)["value"]))
		}
		return out
	}
	if got := strings.Join(values("type"), ","); got != strings.Join(importKindNames(), ",") || !strings.Contains(got, "ip-addresses") {
		t.Errorf("type choices %q, want %q", got, importKindNames())
	}
	if got := strings.Join(values("format"), ","); got != "csv,yaml,json" {
		t.Errorf("format choices %q", got)
	}
	// Every type offered is one the import accepts.
	for _, k := range values("type") {
		r := e.importFile(e.admin, "x.csv", "name\n", map[string]any{"type": k, "dry_run": true})
		if r.status == 400 && strings.Contains(string(r.body), "Unknown object type") {
			t.Errorf("offered type %q is refused: %s", k, r.body)
		}
	}
}

// A NetBox column that FieldKit has a field for is imported, even while netboxOnly
// still lists it: a field added to a model is never dropped by an import.
func TestImportIgnoresOnlyWhatFieldKitLacks(t *testing.T) {
	if got := ignoredColumns(store.Sites, []string{"description", "region", "slug"}); !slices.Equal(got, []string{"region"}) {
		t.Fatalf("ignored %v, want [region]", got)
	}
	for _, k := range importOrder {
		for _, c := range k.ignored {
			if f, ok := k.res.Model.Field(c); ok && f.Writable(true) {
				t.Errorf("%s: the import ignores %s, a field of %s", k.name, c, k.res.Model.Type)
			}
		}
	}
}

// TestImportTellsTheTypeFromTheFile: a browser's second download (devices (1).csv),
// a name with a word after the type (devices-badcol.csv) and a name that says nothing
// (upload.csv, a YAML list) are read as what their name's words or their columns say;
// columns several types fit alike are refused naming those types.
func TestImportTellsTheTypeFromTheFile(t *testing.T) {
	e := newEnv(t)
	rep := e.importFile(e.admin, "export.csv", sitesCSV, nil)
	if rep.status != 200 || !strings.Contains(string(rep.body), `"sites"`) {
		t.Fatalf("sites by their columns (name, status, region, description): %d %s", rep.status, rep.body)
	}
	for _, c := range []struct{ name, data, want string }{
		{"download.csv", platformsCSV, `"platforms"`},
		{"devices (1).csv", "name,site\nr1,Lyon\n", `"devices"`},
		{"devices-badcol.csv", "name,site\nr2,Lyon\n", `"devices"`},
		{"upload.csv", "name,site,platform,mgmt_ip\nr3,Lyon,cisco_ios,192.0.2.31/24\n", `"devices"`},
		{"list.yaml", "- name: r4\n  site: Lyon\n", `"devices"`},
		{"vl.csv", "vid,name,site\n10,users,Lyon\n", `"vlans"`},
		{"nets.csv", "address,device,interface\n192.0.2.41/24,r3,mgmt0\n", `"ip-addresses"`},
	} {
		r := e.importFile(e.admin, c.name, c.data, nil)
		if r.status != 200 || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	if n := e.must(200, "GET", pathDevices, e.admin, nil)["count"]; n != 4.0 {
		t.Errorf("%v devices, want 4", n)
	}
	// A column no type has, in a file the name does not place: the devices it fits best
	// are named, with the bad column, rather than "cannot tell".
	r := e.importFile(e.admin, "data.csv", "name,site,colour\nr5,Lyon,red\n", nil)
	if r.status != 400 || !strings.Contains(string(r.body), `"column":"colour"`) || !strings.Contains(string(r.body), "unknown column") {
		t.Errorf("a bad column: %d %s", r.status, r.body)
	}
	r = e.importFile(e.admin, "names.csv", "name,description\nx,y\n", nil)
	if r.status != 400 || !strings.Contains(string(r.body), "fit tags or sites or platforms alike") {
		t.Errorf("columns several types fit: %d %s", r.status, r.body)
	}
}
