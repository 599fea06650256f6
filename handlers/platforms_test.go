package handlers

import (
	"testing"
)

func TestPlatformsCRUD(t *testing.T) {
	e := newEnv(t)
	p := e.must(201, "POST", "/api/dcim/platforms/", e.admin, map[string]any{"name": "Cisco IOS", "slug": "ios"})
	if p["driver"] != "" || p["effective_driver"] != "cisco_ios" || p["legacy_algorithms"] != false || p["display"] != "Cisco IOS" {
		t.Fatalf("created: %v", p)
	}
	id := itoa(int64(p["id"].(float64)))
	p = e.must(200, "PATCH", "/api/dcim/platforms/"+id+"/", e.admin, map[string]any{"driver": "linux", "legacy_algorithms": true})
	if p["driver"] != "linux" || p["effective_driver"] != "linux" || p["legacy_algorithms"] != true || p["slug"] != "ios" {
		t.Fatalf("patched: %v", p)
	}
	p = e.must(200, "PUT", "/api/dcim/platforms/"+id+"/", e.admin, map[string]any{"name": "IOS", "slug": "cisco_xe", "driver": ""})
	if p["effective_driver"] != "cisco_ios" || p["name"] != "IOS" {
		t.Fatalf("put: %v", p)
	}
	b := e.must(200, "GET", "/api/dcim/platforms/"+id+"/?brief=true", e.admin, nil)
	if _, ok := b["driver"]; ok || b["slug"] != "cisco_xe" || b["url"] == nil {
		t.Fatalf("brief: %v", b)
	}
	e.must(204, "DELETE", "/api/dcim/platforms/"+id+"/", e.admin, nil)
	e.must(404, "GET", "/api/dcim/platforms/"+id+"/", e.admin, nil)
}

func TestPlatformValidation(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", "/api/dcim/platforms/", e.admin, map[string]any{"name": "EOS", "slug": "eos"})
	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"missing slug", map[string]any{"name": "x"}, "slug"},
		{"bad driver", map[string]any{"name": "x", "slug": "x", "driver": "cisco"}, "driver"},
		{"legacy not bool", map[string]any{"name": "x", "slug": "x", "legacy_algorithms": "yes"}, "legacy_algorithms"},
		{"duplicate name", map[string]any{"name": "EOS", "slug": "x"}, "name"},
		{"bad slug", map[string]any{"name": "x", "slug": "a/b"}, "slug"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := e.must(400, "POST", "/api/dcim/platforms/", e.admin, c.body)
			if _, ok := m[c.field]; !ok {
				t.Fatalf("400 does not name %s: %v", c.field, m)
			}
		})
	}
}

func TestPlatformFiltersAndOrdering(t *testing.T) {
	e := newEnv(t)
	for _, p := range [][3]string{{"NX-OS", "nxos", ""}, {"Junos", "junos", "juniper_junos"}, {"Alpine", "alpine", "linux"}} {
		e.must(201, "POST", "/api/dcim/platforms/", e.admin, map[string]any{"name": p[0], "slug": p[1], "driver": p[2]})
	}
	if got := ids(e.must(200, "GET", "/api/dcim/platforms/", e.admin, nil)); !eqInts(got, []int{3, 2, 1}) {
		t.Fatalf("default order by name: %v", got)
	}
	if got := ids(e.must(200, "GET", "/api/dcim/platforms/?ordering=-slug", e.admin, nil)); !eqInts(got, []int{1, 2, 3}) {
		t.Fatalf("ordering=-slug: %v", got)
	}
	if got := ids(e.must(200, "GET", "/api/dcim/platforms/?slug=nxos&slug=alpine&ordering=id", e.admin, nil)); !eqInts(got, []int{1, 3}) {
		t.Fatalf("repeated slug: %v", got)
	}
	if got := ids(e.must(200, "GET", "/api/dcim/platforms/?driver__empty=true", e.admin, nil)); !eqInts(got, []int{1}) {
		t.Fatalf("driver__empty: %v", got)
	}
	if got := ids(e.must(200, "GET", "/api/dcim/platforms/?q=JUN", e.admin, nil)); !eqInts(got, []int{2}) {
		t.Fatalf("q: %v", got)
	}
	e.must(400, "GET", "/api/dcim/platforms/?ordering=effective_driver", e.admin, nil)
	e.must(400, "GET", "/api/dcim/platforms/?drvier=linux", e.admin, nil)
}
