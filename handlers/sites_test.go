package handlers

import (
	"net/http"
	"strings"
	"testing"
)

func TestSitesCRUD(t *testing.T) {
	e := newEnv(t)
	a := e.must(201, "POST", "/api/dcim/sites/", e.admin, map[string]any{"name": "Alpha", "slug": "alpha"})
	id := int(a["id"].(float64))
	if !strings.HasPrefix(a["url"].(string), "http://127.0.0.1") || a["display"] != "Alpha" {
		t.Fatalf("created site: %v", a)
	}
	e.must(201, "POST", "/api/dcim/sites/", e.admin, map[string]any{"name": "Beta", "slug": "beta", "description": "second"})
	got := e.must(200, "GET", "/api/dcim/sites/?ordering=-name", e.admin, nil)
	if got["count"].(float64) != 2 || got["results"].([]any)[0].(map[string]any)["name"] != "Beta" {
		t.Fatalf("list: %v", got)
	}
	p := e.must(200, "PATCH", "/api/dcim/sites/"+itoa(int64(id))+"/", e.admin, map[string]any{"description": "first"})
	if p["description"] != "first" || p["name"] != "Alpha" {
		t.Fatalf("patch: %v", p)
	}
	e.must(204, "DELETE", "/api/dcim/sites/"+itoa(int64(id))+"/", e.admin, nil)
	e.must(404, "GET", "/api/dcim/sites/"+itoa(int64(id))+"/", e.admin, nil)
}

func TestSitesValidation(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", "/api/dcim/sites/", e.admin, map[string]any{"name": "Alpha", "slug": "alpha"})
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing name", map[string]any{"slug": "x"}, "name"},
		{"name wrong type", map[string]any{"name": 5, "slug": "x"}, "name"},
		{"bad slug", map[string]any{"name": "X", "slug": "a b"}, "slug"},
		{"duplicate slug", map[string]any{"name": "X", "slug": "alpha"}, "slug"},
		{"unknown field", map[string]any{"name": "X", "slug": "x", "colour": 1}, "colour"},
		{"not an object", `"site"`, "non_field_errors"},
		{"invalid json", `{"name":`, "non_field_errors"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := e.must(400, "POST", "/api/dcim/sites/", e.admin, c.body)
			if _, ok := m[c.field]; !ok {
				t.Fatalf("400 body does not name %q: %v", c.field, m)
			}
		})
	}
	big := `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
	if r := e.do("POST", "/api/dcim/sites/", e.admin, big); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("big body: %d", r.status)
	}
}

func TestListParameters(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		e.must(201, "POST", "/api/dcim/sites/", e.admin, map[string]any{"name": n, "slug": n})
	}
	got := e.must(200, "GET", "/api/dcim/sites/?limit=1&offset=1", e.admin, nil)
	if got["count"].(float64) != 3 || len(got["results"].([]any)) != 1 || got["next"] == nil || got["previous"] == nil {
		t.Fatalf("page: %v", got)
	}
	if !strings.HasPrefix(got["next"].(string), "http://") {
		t.Fatalf("next is not absolute: %v", got["next"])
	}
	if m := e.must(200, "GET", "/api/dcim/sites/?slug=a&slug=c", e.admin, nil); m["count"].(float64) != 2 {
		t.Fatalf("repeated filter OR: %v", m)
	}
	if m := e.must(200, "GET", "/api/dcim/sites/?name__ic=B", e.admin, nil); m["count"].(float64) != 1 {
		t.Fatalf("lookup: %v", m)
	}
	if m := e.must(200, "GET", "/api/dcim/sites/?q=C", e.admin, nil); m["count"].(float64) != 1 {
		t.Fatalf("q: %v", m)
	}
	for _, bad := range []struct{ q, field string }{
		{"ordering=nope", "ordering"}, {"limit=x", "limit"}, {"offset=-1", "offset"},
		{"nmae=a", "nmae"}, {"id=abc", "id"}, {"brief=maybe", "brief"}, {"slug__zz=a", "slug__zz"},
	} {
		m := e.must(400, "GET", "/api/dcim/sites/?"+bad.q, e.admin, nil)
		if _, ok := m[bad.field]; !ok {
			t.Errorf("%s: 400 does not name %s: %v", bad.q, bad.field, m)
		}
	}
	m := e.must(400, "GET", "/api/dcim/sites/?ordering=nope", e.admin, nil)
	if m["ordering"].([]any)[0] != "Unknown ordering field 'nope'." {
		t.Fatalf("ordering message: %v", m)
	}
}

func TestAuth(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/api/dcim/sites/", "", nil)
	if r.status != 401 || r.json(t)["detail"] != "Authentication credentials were not provided." || r.header.Get("WWW-Authenticate") != "Token" {
		t.Fatalf("no token: %d %s %v", r.status, r.body, r.header)
	}
	if r := e.do("GET", "/api/dcim/sites/", "0123456789012345678901234567890123456789", nil); r.status != 401 || r.json(t)["detail"] != "Invalid token" {
		t.Fatalf("bad token: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/api/dcim/sites/", e.admin, nil); r.header.Get("X-Request-ID") == "" || r.header.Get("API-Version") == "" {
		t.Fatalf("headers: %v", r.header)
	}
	if r := e.do("GET", "/api/dcim/sites", e.admin, nil); r.status != 301 && r.status != 308 {
		t.Fatalf("no trailing slash: %d", r.status)
	}
	if r := e.do("POST", "/api/dcim/sites", e.admin, map[string]any{}); r.status != 307 && r.status != 308 {
		t.Fatalf("POST without trailing slash: %d", r.status)
	}
}

func TestSitePermissions(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"north", "south"} {
		e.must(201, "POST", "/api/dcim/sites/", e.admin, map[string]any{"name": n, "slug": n})
	}
	bob := e.user("bob", false)
	e.must(403, "GET", "/api/dcim/sites/", bob, nil)
	e.must(403, "POST", "/api/dcim/sites/", bob, map[string]any{"name": "x", "slug": "x"})
	e.grant("bob", "dcim.site", []string{"view"}, `{"slug": "north"}`)
	got := e.must(200, "GET", "/api/dcim/sites/", bob, nil)
	if got["count"].(float64) != 1 {
		t.Fatalf("constrained list: %v", got)
	}
	e.must(404, "GET", "/api/dcim/sites/2/", bob, nil)
	e.must(200, "GET", "/api/dcim/sites/1/", bob, nil)
	e.must(403, "PATCH", "/api/dcim/sites/1/", bob, map[string]any{"description": "x"})
	e.grant("bob", "dcim.site", []string{"change"}, `[{"slug__isw": "no"}]`)
	e.must(200, "PATCH", "/api/dcim/sites/1/", bob, map[string]any{"description": "x"})
	// the change would move the site out of bob's change scope: refused, nothing written
	e.must(403, "PATCH", "/api/dcim/sites/1/", bob, map[string]any{"slug": "elsewhere"})
	if m := e.must(200, "GET", "/api/dcim/sites/1/", e.admin, nil); m["slug"] != "north" {
		t.Fatalf("refused change was written: %v", m)
	}
	// a constraint naming an unknown field grants nothing, and never a 500
	carol := e.user("carol", false)
	e.grant("carol", "dcim.site", []string{"view"}, `{"colour": "red"}`)
	if m := e.must(200, "GET", "/api/dcim/sites/", carol, nil); m["count"].(float64) != 0 {
		t.Fatalf("fail-closed: %v", m)
	}
}

func TestSectionIndexes(t *testing.T) {
	e := newEnv(t)
	root := e.must(200, "GET", "/api/", "", nil)
	for _, sec := range []string{"dcim", "ipam", "extras", "users", "plugins"} {
		u := root[sec].(string)
		m := e.must(200, "GET", strings.TrimPrefix(u, e.srv.URL), "", nil)
		if len(m) == 0 {
			t.Errorf("%s: empty index", sec)
		}
	}
	m := e.must(200, "GET", "/api/plugins/toolkit/", "", nil)
	if !strings.HasSuffix(m["commands"].(string), "/api/plugins/toolkit/commands/") || m["command-logs"] == nil {
		t.Fatalf("toolkit index: %v", m)
	}
	if d := e.must(200, "GET", "/api/dcim/", "", nil); d["devices"] == nil || d["sites"] == nil {
		t.Fatalf("dcim index: %v", d)
	}
}
