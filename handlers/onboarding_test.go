package handlers

import (
	"fmt"
	"strings"
	"testing"

	"fieldkit/exec/devsim"
)

// TestOneRequestOnboarding: a device created with its management address and SSH port
// in one request can run a command at once; FieldKit made the interface and the
// address behind it.
func TestOneRequestOnboarding(t *testing.T) {
	x := newXEnv(t, 100)
	sim, err := devsim.Start(devsim.Config{Vendor: "cisco_ios", Hostname: "edge1", Username: simUser, Password: simPass,
		EnableSecret: simEnable, Interfaces: []devsim.Interface{{Name: "GigabitEthernet0/1", Enabled: true}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	dev := x.must(201, "POST", pathDevices, x.admin, map[string]any{"name": "edge1", "site": map[string]any{"slug": "lab"},
		"platform": x.iosPlat, "mgmt_ip": "127.0.0.1/8", "ssh_port": sim.Port()})
	if dev["mgmt_ip"] != "127.0.0.1/8" || dev["ssh_port"] != float64(sim.Port()) ||
		dev["custom_fields"].(map[string]any)["ssh_port"] != float64(sim.Port()) || dev["primary_ip4"] == nil {
		t.Fatalf("created: %v", dev)
	}
	id := int64(dev["id"].(float64))
	ifs := x.must(200, "GET", pathInterfaces+"?device_id="+itoa(id), x.admin, nil)["results"].([]any)
	if len(ifs) != 1 || ifs[0].(map[string]any)["name"] != "mgmt0" || ifs[0].(map[string]any)["type"].(map[string]any)["value"] != "virtual" {
		t.Fatalf("interfaces: %v", ifs)
	}
	cmd := x.command("Version", "show version", "show")
	// The id as a string, as Ansible's uri module sends a templated value.
	res := x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": fmt.Sprint(id), "credential_token": x.token})
	if res["success"] != true {
		t.Fatalf("execute on the onboarded device: %v", res)
	}
}

// TestMgmtIP: writing mgmt_ip keeps one management address, moved in place, and
// uses an address the device already has rather than adding one.
func TestMgmtIP(t *testing.T) {
	e := newEnv(t)
	site := e.must(201, "POST", pathSites, e.admin, map[string]any{"name": "North", "slug": "north"})
	dev := e.must(201, "POST", pathDevices, e.admin, map[string]any{"name": "r1", "site": site["id"], "mgmt_ip": "10.0.0.1/24"})
	path := pathDevices + itoa(int64(dev["id"].(float64))) + "/"
	ipOf := func(d map[string]any, f string) float64 {
		if ip, ok := d[f].(map[string]any); ok {
			return ip["id"].(float64)
		}
		return 0
	}
	first := ipOf(dev, "primary_ip4")
	count := func() float64 { return e.must(200, "GET", pathIPAddresses, e.admin, nil)["count"].(float64) }

	d := e.must(200, "PATCH", path, e.admin, map[string]any{"mgmt_ip": "10.0.0.2/24"})
	if ipOf(d, "primary_ip4") != first || d["mgmt_ip"] != "10.0.0.2/24" || count() != 1 {
		t.Errorf("moved address: %v (%v addresses)", d, count())
	}
	// An address already on another of its interfaces is chosen as it is; the one
	// FieldKit kept on mgmt0 goes.
	gi := e.must(201, "POST", pathInterfaces, e.admin, map[string]any{"name": "Gi0/1", "device": dev["id"]})
	own := e.must(201, "POST", pathIPAddresses, e.admin, map[string]any{"address": "192.0.2.5/24",
		"assigned_object_type": "dcim.interface", "assigned_object_id": gi["id"]})
	d = e.must(200, "PATCH", path, e.admin, map[string]any{"mgmt_ip": "192.0.2.5/24"})
	if ipOf(d, "primary_ip4") != own["id"] || count() != 1 {
		t.Errorf("existing address: %v (%v addresses)", d, count())
	}
	// IPv6: the IPv4 primary on the user's interface is unset, not deleted.
	d = e.must(200, "PATCH", path, e.admin, map[string]any{"mgmt_ip": "2001:db8::1/64"})
	if d["primary_ip4"] != nil || d["primary_ip6"] == nil || d["mgmt_ip"] != "2001:db8::1/64" || count() != 2 {
		t.Errorf("IPv6: %v (%v addresses)", d, count())
	}
	// null removes the address FieldKit made.
	d = e.must(200, "PATCH", path, e.admin, map[string]any{"mgmt_ip": nil})
	if d["primary_ip6"] != nil || d["mgmt_ip"] != nil || count() != 1 {
		t.Errorf("removed: %v (%v addresses)", d, count())
	}
	for _, c := range []map[string]any{
		{"mgmt_ip": "10.0.0.1"}, {"mgmt_ip": "not an address"}, {"mgmt_ip": 5},
		{"mgmt_ip": "10.0.0.9/24", "primary_ip4": own["id"]}, {"ssh_port": 0}, {"ssh_port": 70000}, {"ssh_port": "x"},
	} {
		r := e.do("PATCH", path, e.admin, c)
		name := "mgmt_ip"
		if _, ok := c["ssh_port"]; ok {
			name = "ssh_port"
		}
		if r.status != 400 || r.json(t)[name] == nil {
			t.Errorf("%v: %d %s", c, r.status, r.body)
		}
	}
	d = e.must(200, "PATCH", path, e.admin, map[string]any{"ssh_port": "2222", "custom_fields": map[string]any{"owner": "noc"}})
	if d["ssh_port"] != 2222.0 || fmt.Sprint(d["custom_fields"]) != "map[owner:noc ssh_port:2222]" {
		t.Errorf("ssh_port: %v", d)
	}
	d = e.must(200, "PATCH", path, e.admin, map[string]any{"ssh_port": nil})
	if d["ssh_port"] != nil || fmt.Sprint(d["custom_fields"]) != "map[owner:noc]" {
		t.Errorf("ssh_port cleared: %v", d)
	}
}

// TestDevicesFoundByManagementIP: a person looks a device up by the address they reach
// it at: ?q= matches the start of its primary IPs (as NetBox's search does), and
// ?mgmt_ip= is that address, with or without its prefix length.
func TestDevicesFoundByManagementIP(t *testing.T) {
	e := newEnv(t)
	site := e.must(201, "POST", pathSites, e.admin, map[string]any{"name": "North", "slug": "north"})
	for _, d := range []map[string]any{
		{"name": "r1", "mgmt_ip": "192.0.2.11/24"},
		{"name": "r2", "mgmt_ip": "192.0.2.110/24"},
		{"name": "r3", "mgmt_ip": "2001:db8::11/64"},
		{"name": "r4"},
	} {
		d["site"] = site["id"]
		e.must(201, "POST", pathDevices, e.admin, d)
	}
	names := func(query string) string {
		var out []string
		for _, r := range e.must(200, "GET", pathDevices+query, e.admin, nil)["results"].([]any) {
			out = append(out, r.(map[string]any)["name"].(string))
		}
		return strings.Join(out, ",")
	}
	for query, want := range map[string]string{
		"?q=192.0.2.11":                           "r1,r2",
		"?q=192.0.2.11/24":                        "r1",
		"?q=2001:db8::11":                         "r3",
		"?q=r4":                                   "r4",
		"?mgmt_ip=192.0.2.11":                     "r1",
		"?mgmt_ip=192.0.2.11/24":                  "r1",
		"?mgmt_ip=192.0.2.11/25":                  "",
		"?mgmt_ip=2001:0db8::0011":                "r3",
		"?mgmt_ip=192.0.2.11&mgmt_ip=192.0.2.110": "r1,r2",
	} {
		if got := names(query); got != want {
			t.Errorf("%s: %q, want %q", query, got, want)
		}
	}
	body := e.must(400, "GET", pathDevices+"?mgmt_ip=router-1", e.admin, nil)
	if msg := fmt.Sprint(body["mgmt_ip"]); !strings.Contains(msg, "not an IP address") {
		t.Errorf("a bad mgmt_ip: %v", body)
	}
}
