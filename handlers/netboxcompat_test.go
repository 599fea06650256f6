package handlers

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// seedReadOnly writes one row into each table of the read-only NetBox object types
// (which no API call can write) through a connection of its own, and returns their
// ids by object type. site is a site the rows may refer to.
func seedReadOnly(e *env, site int64) map[string]int64 {
	e.t.Helper()
	db, err := sql.Open("sqlite", "file:"+e.db.Path()+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	now := time.Now().UTC().Format(store.TimeFormat)
	ins := func(table, cols string, vals ...any) int64 {
		q := fmt.Sprintf("INSERT INTO %s (%s, created, last_updated) VALUES (%s?, ?)", table, cols, strings.Repeat("?, ", len(vals)))
		res, err := db.ExecContext(context.Background(), q, append(vals, now, now)...)
		if err != nil {
			e.t.Fatalf("%s: %v", table, err)
		}
		id, _ := res.LastInsertId()
		return id
	}
	out := map[string]int64{}
	out[store.TypeRegion] = ins("regions", "name, slug", "Europe", "europe")
	out[store.TypeSiteGroup] = ins("site_groups", "name, slug", "Campus", "campus")
	out[store.TypeLocation] = ins("locations", "name, slug, site_id", "Floor 1", "floor-1", site)
	out[store.TypeRack] = ins("racks", "name, site_id, location_id", "R1", site, out[store.TypeLocation])
	out[store.TypeDeviceRole] = ins("device_roles", "name, slug", "Access", "access")
	out[store.TypeManufacturer] = ins("manufacturers", "name, slug", "Acme", "acme")
	out[store.TypeDeviceType] = ins("device_types", "manufacturer_id, model, slug", out[store.TypeManufacturer], "X1", "x1")
	out[store.TypeTenant] = ins("tenants", "name, slug", "Ops", "ops")
	out[store.TypeCluster] = ins("clusters", "name", "c1")
	out[store.TypeVirtualMachine] = ins("virtual_machines", "name, site_id, cluster_id", "vm1", site, out[store.TypeCluster])
	out[store.TypeVMInterface] = ins("vm_interfaces", "virtual_machine_id, name", out[store.TypeVirtualMachine], "eth0")
	out[store.TypeService] = ins("services", "virtual_machine_id, name, ports", out[store.TypeVirtualMachine], "ssh", "[22]")
	out[store.TypePrefix] = ins("prefixes", "prefix, site_id", "10.0.0.0/24", site)
	return out
}

// TestReadOnlyNetBoxTypes: the object types NetBox clients list before the ones they
// need answer as NetBox does — an empty page, filters accepted, OPTIONS in DRF's
// shape with no write action — and refuse every write.
func TestReadOnlyNetBoxTypes(t *testing.T) {
	e := newEnv(t)
	for _, res := range readOnlyResources {
		t.Run(res.Name(), func(t *testing.T) {
			page := e.must(200, "GET", res.Path+"?limit=0&brief=true", e.admin, nil)
			if page["count"] != 0.0 || len(page["results"].([]any)) != 0 || page["next"] != nil {
				t.Errorf("list: %v", page)
			}
			opts := e.must(200, "OPTIONS", res.Path, e.admin, nil)
			if acts, _ := opts["actions"].(map[string]any); len(acts) != 0 || opts["name"] == nil {
				t.Errorf("OPTIONS: %v", opts)
			}
			for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
				if r := e.do(m, res.Path, e.admin, map[string]any{"name": "x"}); r.status != 405 {
					t.Errorf("%s: %d, want 405", m, r.status)
				}
			}
		})
	}
	// The filters Ansible's nb_inventory sends when it fetches per device.
	for _, q := range []string{"/api/ipam/services/?limit=0&device_id=1&device_id=2", "/api/ipam/services/?virtual_machine_id=3",
		"/api/virtualization/interfaces/?limit=0&virtual_machine_id=4", "/api/ipam/prefixes/?site=paris-1",
		"/api/virtualization/virtual-machines/?limit=0&exclude=config_context&site=paris-1&status=active",
		"/api/ipam/ip-addresses/?limit=0&assigned_to_interface=true&device_id=1"} {
		e.must(200, "GET", q, e.admin, nil)
	}
	// A user with no permission on them is refused as for any object type, and one
	// granted view reads them.
	bob := e.user("bob", false)
	e.must(403, "GET", "/api/dcim/regions/", bob, nil)
	e.grant("bob", store.TypeRegion, []string{"view"}, "")
	e.must(200, "GET", "/api/dcim/regions/", bob, nil)
}

// TestNetBoxCounts: sites carry prefix_count and interfaces count_ipaddresses, which
// nb_inventory reads to decide what to fetch.
func TestNetBoxCounts(t *testing.T) {
	e := newEnv(t)
	site := e.must(201, "POST", pathSites, e.admin, map[string]any{"name": "Paris 1", "slug": "paris-1"})
	if site["prefix_count"] != 0.0 {
		t.Errorf("prefix_count: %v", site["prefix_count"])
	}
	dev := e.must(201, "POST", pathDevices, e.admin, map[string]any{"name": "r1", "site": site["id"]})
	iface := e.must(201, "POST", pathInterfaces, e.admin, map[string]any{"name": "eth0", "device": dev["id"]})
	for _, a := range []string{"10.1.0.1/24", "10.1.0.2/24"} {
		e.must(201, "POST", pathIPAddresses, e.admin, map[string]any{"address": a,
			"assigned_object_type": "dcim.interface", "assigned_object_id": iface["id"]})
	}
	e.must(201, "POST", pathIPAddresses, e.admin, map[string]any{"address": "10.9.0.1/24"})
	got := e.must(200, "GET", pathInterfaces+itoa(int64(iface["id"].(float64)))+"/", e.admin, nil)
	if got["count_ipaddresses"] != 2.0 {
		t.Errorf("count_ipaddresses: %v", got["count_ipaddresses"])
	}
	seedReadOnly(e, int64(site["id"].(float64)))
	if s := e.must(200, "GET", pathSites+"?slug=paris-1", e.admin, nil)["results"].([]any)[0].(map[string]any); s["prefix_count"] != 1.0 {
		t.Errorf("prefix_count after a prefix: %v", s["prefix_count"])
	}
	for q, want := range map[string]float64{"assigned_to_interface=true": 2, "assigned_to_interface=false": 1, "": 3} {
		if n := e.must(200, "GET", pathIPAddresses+"?"+q, e.admin, nil)["count"]; n != want {
			t.Errorf("ip-addresses?%s: count %v, want %v", q, n, want)
		}
	}
}

// TestNumericStrings: integer fields and references take a number written as a
// string, as DRF's do ({"device_id": "1"} from Ansible's uri module).
func TestNumericStrings(t *testing.T) {
	e := newEnv(t)
	site := e.must(201, "POST", pathSites, e.admin, map[string]any{"name": "North", "slug": "north"})
	dev := e.must(201, "POST", pathDevices, e.admin, map[string]any{"name": "sw1", "site": fmt.Sprint(site["id"])})
	if dev["site"].(map[string]any)["slug"] != "north" {
		t.Fatalf("device: %v", dev)
	}
	v := e.must(201, "POST", pathVLANs, e.admin, map[string]any{"vid": " 10 ", "name": "users"})
	if v["vid"] != 10.0 {
		t.Errorf("vid: %v", v["vid"])
	}
	v = e.must(200, "PATCH", pathVLANs+itoa(int64(v["id"].(float64)))+"/", e.admin, map[string]any{"vid": "20.0"})
	if v["vid"] != 20.0 {
		t.Errorf("vid: %v", v["vid"])
	}
	for _, bad := range []any{"twenty", "20.5", "", "1e3", "0x10"} {
		if r := e.do("POST", pathVLANs, e.admin, map[string]any{"vid": bad, "name": "x"}); r.status != 400 || !strings.Contains(string(r.body), "vid") {
			t.Errorf("vid %q: %d %s", bad, r.status, r.body)
		}
	}
}

// TestProvisionToken: a username and password buy a token with no other credentials,
// as NetBox's users/tokens/provision/; the key is shown once and works.
func TestProvisionToken(t *testing.T) {
	e := newEnv(t)
	name, pw, active := "alice", "s3cret-pw", true
	if _, err := e.db.CreateUser(context.Background(), store.UserInput{Username: &name, Password: &pw, IsActive: &active}, store.All); err != nil {
		t.Fatal(err)
	}
	tok := e.must(201, "POST", pathProvision, "", map[string]any{"username": "alice", "password": pw,
		"description": "ansible", "write_enabled": true})
	key, _ := tok["key"].(string)
	if len(key) != 40 || tok["user"].(map[string]any)["username"] != "alice" || tok["description"] != "ansible" {
		t.Fatalf("provisioned: %v", tok)
	}
	if u := e.must(200, "GET", pathTokens, key, nil); u["count"] != 1.0 {
		t.Errorf("the new key does not authenticate: %v", u)
	}
	detail := e.must(200, "GET", pathTokens+itoa(int64(tok["id"].(float64)))+"/", key, nil)
	if _, shown := detail["key"]; shown {
		t.Errorf("the key is shown again: %v", detail)
	}
	for _, c := range []struct {
		body   map[string]any
		status int
		field  string
	}{
		{map[string]any{"username": "alice", "password": "wrong"}, 401, "detail"},
		{map[string]any{"username": "nobody", "password": pw}, 401, "detail"},
		{map[string]any{"username": "alice"}, 400, "password"},
		{map[string]any{"username": "alice", "password": pw, "user": 1}, 400, "user"},
		{map[string]any{"username": "alice", "password": pw, "expires": "2001-01-01T00:00:00Z"}, 400, "expires"},
	} {
		r := e.do("POST", pathProvision, "", c.body)
		if r.status != c.status || r.json(t)[c.field] == nil {
			t.Errorf("%v: %d %s", c.body, r.status, r.body)
		}
	}
	if r := e.do("POST", pathProvision, "", map[string]any{"username": "alice", "password": "wrong"}); r.json(t)["detail"] != "Invalid username/password" {
		t.Errorf("wrong password: %s", r.body)
	}
	if strings.Contains(e.logs.String(), pw) {
		t.Error("the password is in the log")
	}
}
