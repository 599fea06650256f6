package handlers

import (
	"strings"
	"testing"
)

func TestGroupsCRUD(t *testing.T) {
	e := newEnv(t)
	g := e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "noc"})
	if g["display"] != "noc" || g["user_count"].(float64) != 0 {
		t.Fatalf("created group: %v", g)
	}
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "ops"})
	e.must(201, "POST", "/api/users/users/", e.admin, map[string]any{"username": "bob", "password": "x", "groups": []any{1}})
	if m := e.must(200, "GET", "/api/users/groups/1/", e.admin, nil); m["user_count"].(float64) != 1 {
		t.Fatalf("user_count: %v", m)
	}
	for q, want := range map[string]string{"name=ops": "ops", "q=NO": "noc", "user=bob": "noc", "user_id=2": "noc",
		"ordering=-user_count&limit=1": "noc", "name__n=noc": "ops"} {
		m := e.must(200, "GET", "/api/users/groups/?"+q, e.admin, nil)
		res := m["results"].([]any)
		if len(res) != 1 || res[0].(map[string]any)["name"] != want {
			t.Errorf("%s: %v", q, m)
		}
	}
	e.must(200, "PUT", "/api/users/groups/1/", e.admin, map[string]any{"name": "netops"})
	for _, bad := range []map[string]any{{}, {"name": ""}, {"name": "ops"}, {"name": strings.Repeat("n", 151)}, {"name": "x", "users": []any{}}} {
		e.must(400, "PUT", "/api/users/groups/1/", e.admin, bad)
	}
	e.must(204, "DELETE", "/api/users/groups/1/", e.admin, nil)
	if m := e.must(200, "GET", "/api/users/users/2/", e.admin, nil); len(m["groups"].([]any)) != 0 {
		t.Fatalf("deleted group still linked: %v", m)
	}
}

func TestPermissionsCRUD(t *testing.T) {
	e := newEnv(t)
	e.user("bob", false)
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "noc"})
	p := e.must(201, "POST", "/api/users/permissions/", e.admin, map[string]any{
		"name": "run show", "object_types": []string{"netbox_toolkit_plugin.command"},
		"actions":     []string{"view", "execute_show", "view"},
		"constraints": map[string]any{"command_type": "show", "platforms__slug__in": []string{"cisco_ios"}},
		"users":       []any{map[string]any{"username": "bob"}}, "groups": []any{1},
	})
	if p["display"] != "run show" || p["enabled"] != true || len(p["actions"].([]any)) != 2 {
		t.Fatalf("created: %v", p)
	}
	if u := p["users"].([]any); len(u) != 1 || u[0].(map[string]any)["username"] != "bob" {
		t.Fatalf("users: %v", p["users"])
	}
	if g := p["groups"].([]any); len(g) != 1 || g[0].(map[string]any)["name"] != "noc" {
		t.Fatalf("groups: %v", p["groups"])
	}
	if c := p["constraints"].(map[string]any); c["command_type"] != "show" {
		t.Fatalf("constraints: %v", p["constraints"])
	}
	q := e.must(200, "PATCH", "/api/users/permissions/1/", e.admin, map[string]any{"constraints": nil, "enabled": false})
	if q["constraints"] != nil || q["enabled"] != false || q["name"] != "run show" {
		t.Fatalf("patch: %v", q)
	}
	e.must(200, "PATCH", "/api/users/permissions/1/", e.admin, map[string]any{"constraints": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}})
	e.must(201, "POST", "/api/users/permissions/", e.admin, map[string]any{"name": "sites", "object_types": []string{"dcim.site"}, "actions": []string{"view"}})
	for q, want := range map[string]string{"object_type=dcim.site": "sites", "action=execute_show": "run show",
		"user=bob": "run show", "group_id=1": "run show", "group=noc": "run show", "enabled=false": "run show",
		"q=SITE": "sites", "object_type=dcim.site&object_type=netbox_toolkit_plugin.command": "run show,sites",
		"ordering=-name": "sites,run show"} {
		m := e.must(200, "GET", "/api/users/permissions/?"+q, e.admin, nil)
		var got []string
		for _, r := range m["results"].([]any) {
			got = append(got, r.(map[string]any)["name"].(string))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: got %v, want %s", q, got, want)
		}
	}
	e.must(400, "GET", "/api/users/permissions/?object_type=dcim.nothing", e.admin, nil)
	e.must(204, "DELETE", "/api/users/permissions/1/", e.admin, nil)
	if n := countRows(t, e, `SELECT count(*) FROM permission_users`); n != 0 {
		t.Fatalf("links left: %d", n)
	}
}

func TestPermissionsValidation(t *testing.T) {
	e := newEnv(t)
	ok := func(extra map[string]any) map[string]any {
		b := map[string]any{"name": "p", "object_types": []string{"dcim.site"}, "actions": []string{"view"}}
		for k, v := range extra {
			if v == nil {
				delete(b, k)
				continue
			}
			b[k] = v
		}
		return b
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"missing name", ok(map[string]any{"name": nil}), "name"},
		{"missing object_types", ok(map[string]any{"object_types": nil}), "object_types"},
		{"empty object_types", ok(map[string]any{"object_types": []string{}}), "object_types"},
		{"unknown object type", ok(map[string]any{"object_types": []string{"dcim.cable"}}), "object_types"},
		{"object_types not a list", ok(map[string]any{"object_types": "dcim.site"}), "object_types"},
		{"missing actions", ok(map[string]any{"actions": nil}), "actions"},
		{"unknown action", ok(map[string]any{"actions": []string{"fly"}}), "actions"},
		{"execute on a site", ok(map[string]any{"actions": []string{"execute_show"}}), "actions"},
		{"execute_config on a device", ok(map[string]any{"object_types": []string{"dcim.device"}, "actions": []string{"execute_config"}}), "actions"},
		{"constraints a string", ok(map[string]any{"constraints": "slug=x"}), "constraints"},
		{"constraints a number", ok(map[string]any{"constraints": 5}), "constraints"},
		{"constraints list of non-objects", ok(map[string]any{"constraints": []any{1}}), "constraints"},
		{"constraint on unknown field", ok(map[string]any{"constraints": map[string]any{"colour": "red"}}), "constraints"},
		{"constraint on unknown relation field", ok(map[string]any{"object_types": []string{"dcim.device"}, "constraints": map[string]any{"site__colour": "red"}}), "constraints"},
		{"constraint value of the wrong type", ok(map[string]any{"constraints": map[string]any{"id": "abc"}}), "constraints"},
		{"constraint list with a scalar lookup", ok(map[string]any{"constraints": map[string]any{"slug__ic": []string{"a"}}}), "constraints"},
		{"constraint fits one type, not the other", ok(map[string]any{"object_types": []string{"dcim.site", "dcim.device"}, "constraints": map[string]any{"slug": "x"}}), "constraints"},
		{"unknown user", ok(map[string]any{"users": []any{42}}), "users"},
		{"unknown group", ok(map[string]any{"groups": []any{map[string]any{"name": "nope"}}}), "groups"},
		{"enabled not bool", ok(map[string]any{"enabled": "yes"}), "enabled"},
		{"unknown field", ok(map[string]any{"permissions": []string{}}), "permissions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := e.must(400, "POST", "/api/users/permissions/", e.admin, c.body)
			if _, ok := m[c.field]; !ok {
				t.Fatalf("400 body does not name %q: %v", c.field, m)
			}
		})
	}
	e.must(201, "POST", "/api/users/permissions/", e.admin, ok(map[string]any{"constraints": map[string]any{"slug__isw": "n", "id__in": []int{1, 2}}}))
	e.must(400, "POST", "/api/users/permissions/", e.admin, ok(nil)) // duplicate name
	// PATCH validates against the stored fields it leaves alone
	for _, body := range []map[string]any{
		{"actions": []string{"execute_show"}},                   // stored types: dcim.site
		{"object_types": []string{"dcim.interface"}},            // stored constraint names slug
		{"constraints": map[string]any{"command_type": "show"}}, // not a site field
	} {
		if m := e.must(400, "PATCH", "/api/users/permissions/1/", e.admin, body); len(m) != 1 {
			t.Fatalf("patch %v: %v", body, m)
		}
	}
	e.must(200, "PATCH", "/api/users/permissions/1/", e.admin, map[string]any{"object_types": []string{"dcim.site", "dcim.platform"}})
}

// TestUsersEndpointsPermissions checks each users endpoint with and without its
// permission, and that constraints scope lists, details and writes.
func TestUsersEndpointsPermissions(t *testing.T) {
	e := newEnv(t)
	bob := e.user("bob", false)
	e.user("carol", false)
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "noc"})
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "ops"})
	e.must(201, "POST", "/api/users/permissions/", e.admin, map[string]any{"name": "seed", "object_types": []string{"dcim.site"}, "actions": []string{"view"}})

	endpoints := []struct {
		objectType string
		list       string
		create     map[string]any
		patch      map[string]any
	}{
		{"users.user", "/api/users/users/", map[string]any{"username": "dave", "password": "x"}, map[string]any{"first_name": "X"}},
		{"users.group", "/api/users/groups/", map[string]any{"name": "sec"}, map[string]any{"name": "noc2"}},
		// a permission bob creates grants only what he holds himself (view on permissions)
		{"users.objectpermission", "/api/users/permissions/", map[string]any{"name": "p2", "object_types": []string{"users.objectpermission"}, "actions": []string{"view"}}, map[string]any{"description": "x"}},
	}
	for _, ep := range endpoints {
		t.Run(ep.objectType, func(t *testing.T) {
			detail := ep.list + "1/"
			// without permission: lists and creates are 403, objects are hidden
			e.must(403, "GET", ep.list, bob, nil)
			e.must(403, "POST", ep.list, bob, ep.create)
			e.must(404, "GET", detail, bob, nil)
			e.must(404, "PATCH", detail, bob, ep.patch)
			e.must(404, "DELETE", detail, bob, nil)
			e.grant("bob", ep.objectType, []string{"view"}, "")
			e.must(200, "GET", ep.list, bob, nil)
			e.must(200, "GET", detail, bob, nil)
			e.must(403, "PATCH", detail, bob, ep.patch)
			e.must(403, "DELETE", detail, bob, nil)
			e.must(403, "POST", ep.list, bob, ep.create)
			e.grant("bob", ep.objectType, []string{"add", "change"}, "")
			c := e.must(201, "POST", ep.list, bob, ep.create)
			e.must(200, "PATCH", ep.list+itoa(int64(c["id"].(float64)))+"/", bob, ep.patch)
			e.grant("bob", ep.objectType, []string{"delete"}, "")
			e.must(204, "DELETE", ep.list+itoa(int64(c["id"].(float64)))+"/", bob, nil)
		})
	}
}

func TestUsersConstrainedPermissions(t *testing.T) {
	e := newEnv(t)
	bob := e.user("bob", false)
	e.user("carol", false)
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "noc"})
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "ops"})
	e.must(200, "PATCH", "/api/users/users/3/", e.admin, map[string]any{"groups": []any{1}})

	// bob sees only members of noc, and himself
	e.grant("bob", "users.user", []string{"view"}, `[{"groups__name": "noc"}, {"id": "$user"}]`)
	m := e.must(200, "GET", "/api/users/users/", bob, nil)
	var names []string
	for _, r := range m["results"].([]any) {
		names = append(names, r.(map[string]any)["username"].(string))
	}
	if strings.Join(names, ",") != "bob,carol" {
		t.Fatalf("constrained users: %v", names)
	}
	e.must(404, "GET", "/api/users/users/1/", bob, nil)
	// bob may change non-superusers only, and may not promote anyone
	e.grant("bob", "users.user", []string{"change"}, `{"is_superuser": false}`)
	e.must(200, "PATCH", "/api/users/users/3/", bob, map[string]any{"email": "c@example.net"})
	e.must(403, "PATCH", "/api/users/users/3/", bob, map[string]any{"is_superuser": true})
	e.grant("bob", "users.user", []string{"view", "change", "delete"}, "")
	e.must(403, "PATCH", "/api/users/users/1/", bob, map[string]any{"password": "taken-over"})
	e.must(403, "DELETE", "/api/users/users/1/", bob, nil)
	e.grant("bob", "users.user", []string{"add"}, "")
	e.must(403, "POST", "/api/users/users/", bob, map[string]any{"username": "eve", "password": "x", "is_superuser": true})
	e.must(201, "POST", "/api/users/users/", bob, map[string]any{"username": "eve", "password": "x", "is_superuser": false})

	// a group scope: bob's change on groups is limited by name; renaming out of it is refused
	e.grant("bob", "users.group", []string{"view"}, "")
	e.grant("bob", "users.group", []string{"change"}, `{"name__isw": "n"}`)
	e.must(200, "PATCH", "/api/users/groups/1/", bob, map[string]any{"name": "noc-east"})
	e.must(403, "PATCH", "/api/users/groups/1/", bob, map[string]any{"name": "east"})
	e.must(403, "PATCH", "/api/users/groups/2/", bob, map[string]any{"name": "nops"})
	if m := e.must(200, "GET", "/api/users/groups/1/", e.admin, nil); m["name"] != "noc-east" {
		t.Fatalf("refused rename written: %v", m)
	}
	// a permission scope: bob may add only disabled permissions (of what he holds himself)
	e.grant("bob", "dcim.site", []string{"view"}, "")
	e.grant("bob", "users.objectpermission", []string{"add"}, `{"enabled": false}`)
	body := map[string]any{"name": "x", "object_types": []string{"dcim.site"}, "actions": []string{"view"}}
	e.must(403, "POST", "/api/users/permissions/", bob, body)
	body["enabled"] = false
	e.must(201, "POST", "/api/users/permissions/", bob, body)
}

// TestPermissionsTakeEffect checks permissions written through the API: a group's
// permission reaches its members, disabling it takes it away at once, and a constraint
// that names an unknown field (written before a type was added) grants nothing and is
// logged once.
func TestPermissionsTakeEffect(t *testing.T) {
	e := newEnv(t)
	bob := e.user("bob", false)
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "noc"})
	e.must(201, "POST", "/api/users/permissions/", e.admin, map[string]any{
		"name": "noc views groups", "object_types": []string{"users.group"}, "actions": []string{"view"}, "groups": []any{1},
	})
	e.must(403, "GET", "/api/users/groups/", bob, nil)
	e.must(200, "PATCH", "/api/users/users/2/", e.admin, map[string]any{"groups": []any{1}})
	e.must(200, "GET", "/api/users/groups/", bob, nil)
	e.must(200, "PATCH", "/api/users/permissions/1/", e.admin, map[string]any{"enabled": false})
	e.must(403, "GET", "/api/users/groups/", bob, nil)

	e.grant("bob", "users.group", []string{"view"}, `{"colour": "red"}`)
	for range 2 {
		if m := e.must(200, "GET", "/api/users/groups/", bob, nil); m["count"].(float64) != 0 {
			t.Fatalf("unknown-field constraint granted: %v", m)
		}
	}
	if n := strings.Count(e.logs.String(), "permission constraint grants nothing"); n != 1 {
		t.Fatalf("problem logged %d times: %s", n, e.logs)
	}
}
