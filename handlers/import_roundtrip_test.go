package handlers

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// roundTripDoc is a site's inventory with every object type and reference an import
// takes: tags on objects, VLANs at a site and global, devices with a management
// address and an SSH port, interfaces with access and tagged VLANs, addresses on
// interfaces and one unassigned.
const roundTripDoc = `
tags:
  - {name: Core, color: ff0000, description: the backbone}
  - {name: Managed}
sites:
  - {name: Paris 1, status: active, description: hall 1, tags: [managed]}
  - {name: Lyon, status: planned}
platforms:
  - {name: Cisco IOS, slug: cisco_ios, driver: cisco_ios, description: routers}
  - {name: Arista EOS, slug: arista_eos}
vlans:
  - {vid: 10, name: users, site: paris-1}
  - {vid: 20, name: voice, site: paris-1, status: reserved, tags: [core]}
  - {vid: 999, name: quarantine}
devices:
  - {name: par-r1, site: Paris 1, platform: cisco_ios, status: active, mgmt_ip: 192.0.2.11/24, ssh_port: 2222, tags: [core, managed], cf_owner: noc}
  - {name: par-sw1, site: paris-1, platform: Arista EOS, status: planned, mgmt_ip: 2001:db8::12/64, description: access switch}
  - {name: lyo-r1, site: lyon, platform: cisco_ios, status: offline}
interfaces:
  - {device: par-sw1, name: Ethernet1, type: 1000base-t, mode: access, untagged_vlan: 10, description: desk}
  - {device: par-sw1, name: Ethernet2, type: 1000base-t, mode: tagged, untagged_vlan: 10, tagged_vlans: [20, 999], enabled: false}
  - {device: lyo-r1, name: Gi0/0, type: 1000base-t}
ip-addresses:
  - {address: 10.0.1.1/24, device: par-sw1, interface: Ethernet1, dns_name: sw1.example.net}
  - {address: 198.51.100.7/24, device: lyo-r1, interface: Gi0/0, is_primary: true, status: reserved}
  - {address: 10.9.9.9/24, status: deprecated, description: spare}
`

// roundTripColumns are the CSV columns written back for each object type: the import's
// own field names.
var roundTripColumns = []struct {
	kind, path string
	cols       []string
}{
	{"tags", pathTags, []string{"name", "slug", "color", "description"}},
	{"sites", pathSites, []string{"name", "slug", "status", "description", "tags"}},
	{"platforms", pathPlatforms, []string{"name", "slug", "driver", "description"}},
	{"vlans", pathVLANs, []string{"vid", "name", "site", "status", "description", "tags"}},
	{"devices", pathDevices, []string{"name", "site", "platform", "status", "description", "mgmt_ip", "ssh_port", "tags", "cf_owner"}},
	{"interfaces", pathInterfaces, []string{"device", "name", "type", "enabled", "mode", "untagged_vlan", "tagged_vlans", "description"}},
	{"ip-addresses", pathIPAddresses, []string{"address", "status", "dns_name", "description", "device", "interface", "is_primary"}},
}

// csvCell is how an API value is written in an import CSV: a related object by its slug,
// name, VID or address, a choice by its value, a list comma-separated.
func csvCell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case map[string]any:
		for _, k := range []string{"value", "slug", "vid", "address", "name"} {
			if x, ok := v[k]; ok {
				return csvCell(x)
			}
		}
		return fmt.Sprint(v)
	case []any:
		var parts []string
		for _, x := range v {
			parts = append(parts, csvCell(x))
		}
		return strings.Join(parts, ",")
	case float64:
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprint(v)
}

// primaries are the ids of the addresses that are a device's primary IP, and whether
// each is on the interface mgmt0.
func primaries(t *testing.T, e *env) map[float64]bool {
	t.Helper()
	onMgmt := map[float64]bool{}
	for _, o := range e.must(200, "GET", pathDevices+"?limit=1000", e.admin, nil)["results"].([]any) {
		for _, f := range []string{"primary_ip4", "primary_ip6"} {
			if ip, _ := o.(map[string]any)[f].(map[string]any); ip != nil {
				onMgmt[ip["id"].(float64)] = false
			}
		}
	}
	for _, o := range e.must(200, "GET", pathIPAddresses+"?limit=1000", e.admin, nil)["results"].([]any) {
		ip := o.(map[string]any)
		if _, ok := onMgmt[ip["id"].(float64)]; ok {
			on, _ := ip["assigned_object"].(map[string]any)
			onMgmt[ip["id"].(float64)] = on != nil && on["name"] == "mgmt0"
		}
	}
	return onMgmt
}

// exportCSV writes what the API lists of one object type as an import CSV. A device's
// management address is its mgmt_ip when it is on mgmt0 (where mgmt_ip puts it), else
// is_primary on the address's own row.
func exportCSV(t *testing.T, e *env, path string, cols []string) string {
	t.Helper()
	prim := primaries(t, e)
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(cols)
	for _, o := range e.must(200, "GET", path+"?limit=1000", e.admin, nil)["results"].([]any) {
		obj := o.(map[string]any)
		row := make([]string, len(cols))
		for i, c := range cols {
			switch {
			case strings.HasPrefix(c, "cf_"):
				row[i] = csvCell(obj["custom_fields"].(map[string]any)[strings.TrimPrefix(c, "cf_")])
			case c == "mgmt_ip":
				for _, f := range []string{"primary_ip4", "primary_ip6"} {
					if ip, _ := obj[f].(map[string]any); ip != nil && prim[ip["id"].(float64)] && row[i] == "" {
						row[i] = csvCell(ip)
					}
				}
			case c == "is_primary":
				if onMgmt, ok := prim[obj["id"].(float64)]; ok && !onMgmt {
					row[i] = "true"
				}
			case path == pathIPAddresses && (c == "device" || c == "interface"):
				if on, _ := obj["assigned_object"].(map[string]any); on != nil {
					row[i] = csvCell(on["name"])
					if c == "device" {
						row[i] = csvCell(on["device"])
					}
				}
			default:
				row[i] = csvCell(obj[c])
			}
		}
		w.Write(row)
	}
	w.Flush()
	return b.String()
}

// snapshot is an object type as the API lists it, without what differs between two
// databases (ids, URLs, times), related objects by their natural key, in a stable order.
func snapshot(t *testing.T, e *env, path string) []string {
	t.Helper()
	var norm func(v any, top bool) any
	norm = func(v any, top bool) any {
		switch v := v.(type) {
		case map[string]any:
			if _, ref := v["id"]; ref && !top {
				key := csvCell(v)
				if d, ok := v["device"].(map[string]any); ok {
					key = csvCell(d) + "/" + key
				}
				return key
			}
			out := map[string]any{}
			for k, x := range v {
				switch k {
				case "id", "url", "display", "created", "last_updated", "assigned_object_id":
					continue
				}
				out[k] = norm(x, false)
			}
			return out
		case []any:
			var out []string
			for _, x := range v {
				b, _ := json.Marshal(norm(x, false))
				out = append(out, string(b))
			}
			slices.Sort(out)
			return out
		}
		return v
	}
	var out []string
	for _, o := range e.must(200, "GET", path+"?limit=1000", e.admin, nil)["results"].([]any) {
		b, _ := json.Marshal(norm(o, true))
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// TestImportRoundTrip: an inventory imported from one document, read back through the
// API and written out as one CSV file per object type, imports into an empty FieldKit
// as the same inventory, and importing those files again changes nothing.
func TestImportRoundTrip(t *testing.T) {
	a := newEnv(t)
	if r := a.importFile(a.admin, "site.yaml", roundTripDoc, nil); r.status != 200 {
		t.Fatalf("the document: %d %s", r.status, r.body)
	}
	files := map[string]string{}
	for _, k := range roundTripColumns {
		files[k.kind] = exportCSV(t, a, k.path, k.cols)
	}
	b := newEnv(t)
	total := 0
	for _, k := range roundTripColumns {
		r := b.importFile(b.admin, k.kind+".csv", files[k.kind], nil)
		if r.status != 200 {
			t.Fatalf("%s.csv: %d %s\n%s", k.kind, r.status, r.body, files[k.kind])
		}
		rep := r.json(t)
		total += int(rep["created"].(float64) + rep["updated"].(float64) + rep["unchanged"].(float64))
	}
	for _, k := range roundTripColumns {
		got, want := snapshot(t, b, k.path), snapshot(t, a, k.path)
		if !slices.Equal(got, want) {
			t.Errorf("%s after the round trip:\n%s\nwant:\n%s\nfrom the file:\n%s", k.kind,
				strings.Join(got, "\n"), strings.Join(want, "\n"), files[k.kind])
		}
	}
	if total != 2+2+2+3+3+5+5 {
		t.Errorf("%d rows imported in all", total)
	}
	for _, k := range roundTripColumns {
		rep := b.importFile(b.admin, k.kind+".csv", files[k.kind], nil).json(t)
		if rep["created"] != 0.0 || rep["updated"] != 0.0 {
			t.Errorf("%s.csv again: %v", k.kind, rep)
		}
	}
}

// TestImportMovesManagementAddress: a device imported with its mgmt_ip (put on mgmt0)
// and then an address file that puts that address on another of its interfaces keeps
// one address, moved there and still the primary IP; the same address on another
// device's interface is another address.
func TestImportMovesManagementAddress(t *testing.T) {
	e := newEnv(t)
	for _, f := range [][2]string{
		{"sites.csv", "name\nLyon\n"},
		{"devices.csv", "name,site,mgmt_ip\nlyo-r2,Lyon,198.51.100.8/24\nlyo-r3,Lyon,\n"},
		{"interfaces.csv", "device,name,type\nlyo-r2,Gi0/0,1000base-t\nlyo-r3,Gi0/0,1000base-t\n"},
	} {
		if r := e.importFile(e.admin, f[0], f[1], nil); r.status != 200 {
			t.Fatalf("%s: %d %s", f[0], r.status, r.body)
		}
	}
	before := e.must(200, "GET", pathDevices+"?name=lyo-r2", e.admin, nil)["results"].([]any)[0].(map[string]any)["primary_ip4"].(map[string]any)
	rep := e.importFile(e.admin, "ip-addresses.csv", "address,device,interface\n198.51.100.8/24,lyo-r2,Gi0/0\n198.51.100.8/24,lyo-r3,Gi0/0\n", nil).json(t)
	if rep["updated"] != 1.0 || rep["created"] != 1.0 {
		t.Errorf("report: %v", rep)
	}
	ips := e.must(200, "GET", pathIPAddresses+"?address=198.51.100.8/24", e.admin, nil)["results"].([]any)
	var on []string
	for _, ip := range ips {
		a := ip.(map[string]any)["assigned_object"].(map[string]any)
		on = append(on, csvCell(a["device"])+"/"+csvCell(a["name"]))
	}
	slices.Sort(on)
	if !slices.Equal(on, []string{"lyo-r2/Gi0/0", "lyo-r3/Gi0/0"}) {
		t.Errorf("the address is on %v", on)
	}
	after := e.must(200, "GET", pathDevices+"?name=lyo-r2", e.admin, nil)["results"].([]any)[0].(map[string]any)
	if p, _ := after["primary_ip4"].(map[string]any); p == nil || p["id"] != before["id"] || after["mgmt_ip"] != "198.51.100.8/24" {
		t.Errorf("lyo-r2's primary IP: %v, was %v", after["primary_ip4"], before)
	}
}

// TestImportKeepsAddressesInTwoVRFs: the same address on two interfaces of one device
// (two VRFs) is two addresses; only one on mgmt0 moves.
func TestImportKeepsAddressesInTwoVRFs(t *testing.T) {
	e := newEnv(t)
	for _, f := range [][2]string{
		{"sites.csv", "name\nLyon\n"},
		{"devices.csv", "name,site,mgmt_ip\nlyo-pe1,Lyon,10.0.0.1/24\n"},
		{"interfaces.csv", "device,name,type\nlyo-pe1,Gi0/1,1000base-t\nlyo-pe1,Gi0/2,1000base-t\n"},
		{"ip-addresses.csv", "address,device,interface,description\n10.0.0.1/24,lyo-pe1,Gi0/1,vrf red\n10.0.0.1/24,lyo-pe1,Gi0/2,vrf blue\n"},
	} {
		if r := e.importFile(e.admin, f[0], f[1], nil); r.status != 200 {
			t.Fatalf("%s: %d %s", f[0], r.status, r.body)
		}
	}
	var on []string
	for _, ip := range e.must(200, "GET", pathIPAddresses+"?address=10.0.0.1/24", e.admin, nil)["results"].([]any) {
		o := ip.(map[string]any)
		on = append(on, csvCell(o["assigned_object"])+" "+csvCell(o["description"]))
	}
	slices.Sort(on)
	if !slices.Equal(on, []string{"Gi0/1 vrf red", "Gi0/2 vrf blue"}) {
		t.Errorf("the addresses: %v", on)
	}
}
