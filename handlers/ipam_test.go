package handlers

import (
	"testing"
)

// wired seeds the inventory plus a device with two interfaces, VLANs and addresses:
// device 1 "sw1" (site north), interfaces 1 Gi0/1 and 2 Gi0/2, VLAN 1 (10, north),
// VLAN 2 (20, global), VLAN 3 (30, south), IPs 1 10.0.0.10/24 and 2 2001:db8::1/64 on
// Gi0/1, IP 3 10.0.0.2/24 unassigned.
func (e *env) wired() {
	e.t.Helper()
	e.inventory()
	e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{"name": "sw1", "site": 1, "platform": 1})
	e.must(201, "POST", "/api/dcim/interfaces/", e.admin, map[string]any{"device": 1, "name": "Gi0/1", "type": "1000base-t"})
	e.must(201, "POST", "/api/dcim/interfaces/", e.admin, map[string]any{"device": map[string]any{"name": "sw1"}, "name": "Gi0/2", "enabled": false})
	e.must(201, "POST", "/api/ipam/vlans/", e.admin, map[string]any{"vid": 10, "name": "users", "site": map[string]any{"slug": "north"}})
	e.must(201, "POST", "/api/ipam/vlans/", e.admin, map[string]any{"vid": 20, "name": "voice"})
	e.must(201, "POST", "/api/ipam/vlans/", e.admin, map[string]any{"vid": 30, "name": "south", "site": 2})
	e.must(201, "POST", "/api/ipam/ip-addresses/", e.admin, map[string]any{"address": "10.0.0.10/24", "assigned_object_type": "dcim.interface", "assigned_object_id": 1})
	e.must(201, "POST", "/api/ipam/ip-addresses/", e.admin, map[string]any{"address": "2001:db8:0::1/64", "assigned_object_type": "dcim.interface", "assigned_object_id": 1})
	e.must(201, "POST", "/api/ipam/ip-addresses/", e.admin, map[string]any{"address": "10.0.0.2/24", "status": "reserved"})
}

func TestInterfacesCRUDAndVLANRules(t *testing.T) {
	e := newEnv(t)
	e.wired()
	it := e.must(200, "GET", "/api/dcim/interfaces/1/", e.admin, nil)
	if it["device"].(map[string]any)["name"] != "sw1" || it["type"].(map[string]any)["label"] != "1000BASE-T (1GE)" || it["mode"] != nil || it["enabled"] != true {
		t.Fatalf("interface: %v", it)
	}
	it = e.must(200, "PATCH", "/api/dcim/interfaces/1/", e.admin, map[string]any{"mode": "tagged", "untagged_vlan": 1,
		"tagged_vlans": []any{2, map[string]any{"vid": 10}}})
	if it["mode"].(map[string]any)["value"] != "tagged" || it["untagged_vlan"].(map[string]any)["vid"] != 10.0 || len(it["tagged_vlans"].([]any)) != 2 {
		t.Fatalf("tagged: %v", it)
	}
	// access drops the tagged VLANs, no mode drops the untagged one too (as NetBox does)
	it = e.must(200, "PATCH", "/api/dcim/interfaces/1/", e.admin, map[string]any{"mode": "access"})
	if len(it["tagged_vlans"].([]any)) != 0 || it["untagged_vlan"] == nil {
		t.Fatalf("access: %v", it)
	}
	it = e.must(200, "PATCH", "/api/dcim/interfaces/1/", e.admin, map[string]any{"mode": nil})
	if it["mode"] != nil || it["untagged_vlan"] != nil {
		t.Fatalf("no mode: %v", it)
	}
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"untagged without mode", map[string]any{"untagged_vlan": 1}, "untagged_vlan"},
		{"tagged with access", map[string]any{"mode": "access", "tagged_vlans": []any{1}}, "tagged_vlans"},
		{"vlan of another site", map[string]any{"mode": "access", "untagged_vlan": 3}, "untagged_vlan"},
		{"tagged vlan of another site", map[string]any{"mode": "tagged", "tagged_vlans": []any{3}}, "tagged_vlans"},
		{"bad mode", map[string]any{"mode": "trunk"}, "mode"},
		{"bad type", map[string]any{"type": "Gig E"}, "type"},
		{"unknown vlan", map[string]any{"mode": "access", "untagged_vlan": 99}, "untagged_vlan"},
		{"duplicate name", map[string]any{"name": "Gi0/2"}, "name"},
		{"null device", map[string]any{"device": nil}, "device"},
		{"enabled not bool", map[string]any{"enabled": "yes"}, "enabled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := e.must(400, "PATCH", "/api/dcim/interfaces/1/", e.admin, c.body)
			if _, ok := m[c.field]; !ok {
				t.Fatalf("400 does not name %s: %v", c.field, m)
			}
		})
	}
	m := e.must(400, "POST", "/api/dcim/interfaces/", e.admin, map[string]any{"name": "x"})
	if _, ok := m["device"]; !ok {
		t.Fatalf("missing device: %v", m)
	}
	e.must(201, "POST", "/api/dcim/interfaces/", e.admin, map[string]any{"device": 1, "name": "Vl10", "type": "virtual",
		"mode": "access", "untagged_vlan": 1})
	for q, want := range map[string][]int{
		"":                          {1, 2, 3},
		"device_id=1&enabled=true":  {1, 3},
		"device=sw1&name=Gi0/2":     {2},
		"site=north&ordering=-name": {3, 2, 1},
		"mode=access":               {3},
		"vlan_id=1":                 {3},
		"enabled=0":                 {2},
		"type__n=virtual":           {1, 2},
	} {
		if got := ids(e.must(200, "GET", "/api/dcim/interfaces/?"+q, e.admin, nil)); !eqInts(got, want) {
			t.Errorf("%s: got %v, want %v", q, got, want)
		}
	}
	e.must(400, "GET", "/api/dcim/interfaces/?enabled=maybe", e.admin, nil)
	e.must(204, "DELETE", "/api/dcim/interfaces/3/", e.admin, nil)
	// deleting a device takes its interfaces with it
	e.must(204, "DELETE", "/api/dcim/devices/1/", e.admin, nil)
	if got := e.must(200, "GET", "/api/dcim/interfaces/", e.admin, nil); got["count"].(float64) != 0 {
		t.Fatalf("interfaces after device delete: %v", got)
	}
	ip := e.must(200, "GET", "/api/ipam/ip-addresses/1/", e.admin, nil)
	if ip["assigned_object"] != nil || ip["assigned_object_type"] != nil {
		t.Fatalf("address after its interface went: %v", ip)
	}
}

func TestVLANs(t *testing.T) {
	e := newEnv(t)
	e.wired()
	v := e.must(200, "GET", "/api/ipam/vlans/1/", e.admin, nil)
	if v["display"] != "users (10)" || v["site"].(map[string]any)["slug"] != "north" || v["status"].(map[string]any)["value"] != "active" {
		t.Fatalf("vlan: %v", v)
	}
	v = e.must(200, "PATCH", "/api/ipam/vlans/1/", e.admin, map[string]any{"site": nil, "status": "deprecated"})
	if v["site"] != nil || v["status"].(map[string]any)["label"] != "Deprecated" {
		t.Fatalf("patched: %v", v)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"vid": 0, "name": "x"}, "vid"}, {map[string]any{"vid": 4095, "name": "x"}, "vid"},
		{map[string]any{"vid": "ten", "name": "x"}, "vid"}, {map[string]any{"vid": "10.5", "name": "x"}, "vid"}, {map[string]any{"name": "x"}, "vid"},
		{map[string]any{"vid": 5}, "name"}, {map[string]any{"vid": 5, "name": "x", "status": "up"}, "status"},
		{map[string]any{"vid": 5, "name": "x", "site": 9}, "site"},
	} {
		m := e.must(400, "POST", "/api/ipam/vlans/", e.admin, c.body)
		if _, ok := m[c.field]; !ok {
			t.Errorf("%v: 400 does not name %s: %v", c.body, c.field, m)
		}
	}
	e.must(200, "PATCH", "/api/dcim/interfaces/2/", e.admin, map[string]any{"mode": "tagged", "tagged_vlans": []any{2}})
	for q, want := range map[string][]int{
		"":                  {1, 2, 3},
		"ordering=-vid":     {3, 2, 1},
		"vid=10&vid=30":     {1, 3},
		"vid__gte=20":       {2, 3},
		"site=south":        {3},
		"site_id=null":      {1, 2},
		"device_id=1":       {2},
		"q=voi":             {2},
		"status=deprecated": {1},
	} {
		if got := ids(e.must(200, "GET", "/api/ipam/vlans/?"+q, e.admin, nil)); !eqInts(got, want) {
			t.Errorf("%s: got %v, want %v", q, got, want)
		}
	}
	e.must(400, "GET", "/api/ipam/vlans/?device_id=x", e.admin, nil)
	e.must(204, "DELETE", "/api/ipam/vlans/2/", e.admin, nil)
	if it := e.must(200, "GET", "/api/dcim/interfaces/2/", e.admin, nil); len(it["tagged_vlans"].([]any)) != 0 {
		t.Fatalf("deleted VLAN still tagged: %v", it)
	}
}

func TestIPAddresses(t *testing.T) {
	e := newEnv(t)
	e.wired()
	ip := e.must(200, "GET", "/api/ipam/ip-addresses/2/", e.admin, nil)
	ao := ip["assigned_object"].(map[string]any)
	if ip["address"] != "2001:db8::1/64" || ip["family"].(map[string]any)["value"] != 6.0 || ao["name"] != "Gi0/1" ||
		ao["device"].(map[string]any)["name"] != "sw1" || ip["assigned_object_type"] != "dcim.interface" {
		t.Fatalf("ip: %v", ip)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"address": "10.0.0.1"}, "address"}, {map[string]any{"address": "10.0.0.1/33"}, "address"},
		{map[string]any{"address": "fe80::1%eth0/64"}, "address"}, {map[string]any{}, "address"},
		{map[string]any{"address": "10.0.0.1/24", "status": "up"}, "status"},
		{map[string]any{"address": "10.0.0.1/24", "dns_name": "a b"}, "dns_name"},
		{map[string]any{"address": "10.0.0.1/24", "assigned_object_type": "dcim.device", "assigned_object_id": 1}, "assigned_object_type"},
		{map[string]any{"address": "10.0.0.1/24", "assigned_object_type": "dcim.interface", "assigned_object_id": 99}, "assigned_object_id"},
		{map[string]any{"address": "10.0.0.1/24", "assigned_object_type": "dcim.interface"}, "assigned_object_id"},
		{map[string]any{"address": "10.0.0.1/24", "assigned_object_type": nil, "assigned_object_id": 1}, "assigned_object_type"},
		{map[string]any{"address": "10.0.0.1/24", "assigned_object": 1}, "assigned_object"},
	} {
		m := e.must(400, "POST", "/api/ipam/ip-addresses/", e.admin, c.body)
		if _, ok := m[c.field]; !ok {
			t.Errorf("%v: 400 does not name %s: %v", c.body, c.field, m)
		}
	}
	for q, want := range map[string][]int{
		"":                  {3, 1, 2},
		"ordering=-address": {2, 1, 3},
		"family=4":          {3, 1},
		"family=6":          {2},
		"address=10.0.0.10": {1},
		"address=10.0.0.2/24&address=2001:db8::1": {3, 2},
		"device_id=1":          {1, 2},
		"device=sw1&family=4":  {1},
		"interface_id=1":       {1, 2},
		"assigned_object_id=1": {1, 2},
		"assigned=false":       {3},
		"status=reserved":      {3},
		"q=db8":                {2},
	} {
		if got := ids(e.must(200, "GET", "/api/ipam/ip-addresses/?"+q, e.admin, nil)); !eqInts(got, want) {
			t.Errorf("%s: got %v, want %v", q, got, want)
		}
	}
	for _, bad := range []string{"family=5", "address=nope", "device_id=x", "assigned=maybe"} {
		e.must(400, "GET", "/api/ipam/ip-addresses/?"+bad, e.admin, nil)
	}
	// unassign with a null type alone, reassign with both
	ip = e.must(200, "PATCH", "/api/ipam/ip-addresses/2/", e.admin, map[string]any{"assigned_object_type": nil})
	if ip["assigned_object"] != nil || ip["assigned_object_id"] != nil {
		t.Fatalf("unassigned: %v", ip)
	}
	ip = e.must(200, "PATCH", "/api/ipam/ip-addresses/2/", e.admin, map[string]any{"assigned_object_type": "dcim.interface", "assigned_object_id": 2})
	if ip["assigned_object"].(map[string]any)["name"] != "Gi0/2" {
		t.Fatalf("reassigned: %v", ip)
	}
}

func TestDevicePrimaryIPs(t *testing.T) {
	e := newEnv(t)
	e.wired()
	e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{"name": "sw2", "site": 1})
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"primary_ip4": 2}, "primary_ip4"}, // IPv6 as IPv4
		{map[string]any{"primary_ip6": 1}, "primary_ip6"}, // IPv4 as IPv6
		{map[string]any{"primary_ip4": 3}, "primary_ip4"}, // not on an interface
		{map[string]any{"primary_ip4": 99}, "primary_ip4"},
	} {
		m := e.must(400, "PATCH", "/api/dcim/devices/1/", e.admin, c.body)
		if _, ok := m[c.field]; !ok {
			t.Errorf("%v: 400 does not name %s: %v", c.body, c.field, m)
		}
	}
	// an address on sw1 cannot be sw2's primary
	e.must(400, "PATCH", "/api/dcim/devices/2/", e.admin, map[string]any{"primary_ip4": 1})
	d := e.must(200, "PATCH", "/api/dcim/devices/1/", e.admin, map[string]any{"primary_ip6": map[string]any{"address": "2001:db8::1/64"}})
	if d["primary_ip"].(map[string]any)["id"] != 2.0 || d["primary_ip4"] != nil {
		t.Fatalf("primary_ip from ip6: %v", d)
	}
	d = e.must(200, "PATCH", "/api/dcim/devices/1/", e.admin, map[string]any{"primary_ip4": 1})
	if pi := d["primary_ip"].(map[string]any); pi["address"] != "10.0.0.10/24" || pi["family"].(map[string]any)["value"] != 4.0 {
		t.Fatalf("primary_ip prefers ip4: %v", d)
	}
	if got := ids(e.must(200, "GET", "/api/dcim/devices/?has_primary_ip=true", e.admin, nil)); !eqInts(got, []int{1}) {
		t.Fatalf("has_primary_ip: %v", got)
	}
	// a primary address cannot leave its device, nor change family
	e.must(400, "PATCH", "/api/ipam/ip-addresses/1/", e.admin, map[string]any{"assigned_object_id": nil})
	e.must(400, "PATCH", "/api/ipam/ip-addresses/1/", e.admin, map[string]any{"address": "2001:db8::9/64"})
	e.must(200, "PATCH", "/api/ipam/ip-addresses/1/", e.admin, map[string]any{"assigned_object_type": "dcim.interface", "assigned_object_id": 2})
	// deleting the address clears the primary
	e.must(204, "DELETE", "/api/ipam/ip-addresses/1/", e.admin, nil)
	if d := e.must(200, "GET", "/api/dcim/devices/1/", e.admin, nil); d["primary_ip4"] != nil || d["primary_ip"].(map[string]any)["id"] != 2.0 {
		t.Fatalf("after delete: %v", d)
	}
}

func TestInventoryPermissions(t *testing.T) {
	e := newEnv(t)
	e.wired()
	bob := e.user("bob", false)
	for _, p := range []string{"/api/dcim/interfaces/", "/api/ipam/vlans/", "/api/ipam/ip-addresses/", "/api/extras/tags/", "/api/dcim/platforms/"} {
		e.must(403, "GET", p, bob, nil)
	}
	e.grant("bob", "dcim.interface", []string{"view", "change"}, `{"device__site__slug": "north", "enabled": true}`)
	if got := ids(e.must(200, "GET", "/api/dcim/interfaces/", bob, nil)); !eqInts(got, []int{1}) {
		t.Fatalf("interface constraint: %v", got)
	}
	e.must(404, "PATCH", "/api/dcim/interfaces/2/", bob, map[string]any{"description": "x"})
	e.must(403, "PATCH", "/api/dcim/interfaces/1/", bob, map[string]any{"enabled": false})
	e.must(403, "DELETE", "/api/dcim/interfaces/1/", bob, nil)
	e.grant("bob", "ipam.ipaddress", []string{"view"}, `{"interface__device__name": "sw1"}`)
	if got := ids(e.must(200, "GET", "/api/ipam/ip-addresses/", bob, nil)); !eqInts(got, []int{1, 2}) {
		t.Fatalf("ip constraint: %v", got)
	}
	e.grant("bob", "ipam.vlan", []string{"view"}, `{"site__isnull": true}`)
	if got := ids(e.must(200, "GET", "/api/ipam/vlans/", bob, nil)); !eqInts(got, []int{2}) {
		t.Fatalf("vlan constraint: %v", got)
	}
	e.grant("bob", "extras.tag", []string{"view", "add"}, `{"slug__isw": "bob-"}`)
	e.must(403, "POST", "/api/extras/tags/", bob, map[string]any{"name": "x", "slug": "x"})
	e.must(201, "POST", "/api/extras/tags/", bob, map[string]any{"name": "mine", "slug": "bob-mine", "color": "FF0000"})
	if m := e.must(200, "GET", "/api/extras/tags/?slug=bob-mine", bob, nil); m["results"].([]any)[0].(map[string]any)["color"] != "ff0000" {
		t.Fatalf("tag: %v", m)
	}
	e.must(400, "POST", "/api/extras/tags/", e.admin, map[string]any{"name": "y", "slug": "y", "color": "red"})
}
