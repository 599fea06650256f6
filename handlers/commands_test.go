package handlers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const cmdPath = "/api/plugins/toolkit/commands/"

func cmdURL(id any) string { return fmt.Sprintf("%s%v/", cmdPath, id) }

func num(v any) int { return int(v.(float64)) }

func TestCommandsCRUD(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "Cisco IOS", "cisco_ios")
	eos := tkPlatform(t, e.db, "Arista EOS", "arista_eos")
	tag := tkTag(t, e.db, "Core", "core")
	c := e.must(201, "POST", cmdPath, e.admin, map[string]any{
		"name": "Show interface", "command": "show interface <iface> | include <cr>",
		"platforms": []any{ios, map[string]any{"slug": "arista_eos"}},
		"tags":      []any{tag}, "custom_fields": map[string]any{"owner": "noc"},
		"variables": []any{map[string]any{"name": "iface", "variable_type": "netbox_interface", "help_text": "the port"}},
	})
	if c["command_type"] != "show" {
		t.Errorf("command_type default: %v", c["command_type"])
	}
	if c["display"] != "Show interface (Arista EOS, Cisco IOS)" {
		t.Errorf("display: %v", c["display"])
	}
	plats := c["platforms"].([]any)
	p0 := plats[0].(map[string]any)
	if len(plats) != 2 || num(p0["id"]) != int(eos) || p0["slug"] != "arista_eos" || p0["name"] != "Arista EOS" ||
		p0["display"] != "Arista EOS" || !strings.HasSuffix(p0["url"].(string), fmt.Sprintf("/api/dcim/platforms/%d/", eos)) {
		t.Errorf("platforms: %v", plats)
	}
	vars := c["variables"].([]any)
	v0 := vars[0].(map[string]any)
	want := map[string]any{"id": v0["id"], "name": "iface", "display_name": "iface", "variable_type": "inventory_interface",
		"required": true, "help_text": "the port", "default_value": "", "pattern": ""}
	if len(vars) != 1 || !reflect.DeepEqual(v0, want) {
		t.Errorf("variables: %v", vars)
	}
	if tags := c["tags"].([]any); len(tags) != 1 || tags[0].(map[string]any)["slug"] != "core" {
		t.Errorf("tags: %v", c["tags"])
	}
	if c["custom_fields"].(map[string]any)["owner"] != "noc" || c["created"] == nil || c["last_updated"] == nil {
		t.Errorf("custom fields/stamps: %v", c)
	}
	id := num(c["id"])
	if got := e.must(200, "GET", cmdURL(id), e.admin, nil); !reflect.DeepEqual(got, c) {
		t.Errorf("detail differs from create response:\n%v\n%v", got, c)
	}

	// PATCH with variables replaces the list by name: iface keeps its id.
	p := e.must(200, "PATCH", cmdURL(id), e.admin, map[string]any{
		"command": "show interface <iface> vlan <vid>",
		"variables": []any{
			map[string]any{"name": "vid", "variable_type": "inventory_vlan", "required": false, "default_value": "1"},
			map[string]any{"name": "iface", "display_name": "Interface", "variable_type": "inventory_interface"},
		},
	})
	pv := p["variables"].([]any)
	if len(pv) != 2 || pv[1].(map[string]any)["id"] != v0["id"] || pv[1].(map[string]any)["display_name"] != "Interface" ||
		pv[0].(map[string]any)["name"] != "vid" || pv[0].(map[string]any)["required"] != false {
		t.Errorf("patched variables: %v", pv)
	}
	// PATCH without variables leaves them.
	p = e.must(200, "PATCH", cmdURL(id), e.admin, map[string]any{"description": "d", "command_type": "config"})
	if len(p["variables"].([]any)) != 2 || p["description"] != "d" || p["command_type"] != "config" {
		t.Errorf("patch kept variables: %v", p)
	}
	// PUT replaces the whole object; no variables sent means none.
	p = e.must(200, "PUT", cmdURL(id), e.admin, map[string]any{"name": "Version", "command": "show version", "platforms": []any{ios}})
	if p["name"] != "Version" || len(p["variables"].([]any)) != 0 || len(p["platforms"].([]any)) != 1 {
		t.Errorf("put: %v", p)
	}
	e.must(204, "DELETE", cmdURL(id), e.admin, nil)
	e.must(404, "GET", cmdURL(id), e.admin, nil)
	e.must(404, "DELETE", cmdURL(id), e.admin, nil)
}

func TestCommandDisplayManyPlatforms(t *testing.T) {
	e := newEnv(t)
	var ids []any
	for _, n := range []string{"E", "D", "C", "B", "A"} {
		ids = append(ids, tkPlatform(t, e.db, n, strings.ToLower(n)))
	}
	c := e.must(201, "POST", cmdPath, e.admin, map[string]any{"name": "v", "command": "show version", "platforms": ids})
	if c["display"] != "v (A, B, C +2 more)" {
		t.Fatalf("display: %v", c["display"])
	}
	// deleting a platform: the command loses it
	tkExec(t, e.db, `DELETE FROM platforms WHERE slug = 'a'`)
	if c := e.must(200, "GET", cmdURL(c["id"]), e.admin, nil); c["display"] != "v (B, C, D +1 more)" {
		t.Fatalf("display after delete: %v", c["display"])
	}
}

func TestCommandValidation(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "Cisco IOS", "cisco_ios")
	ok := func(kv ...any) map[string]any {
		b := map[string]any{"name": "n", "command": "show version", "platforms": []any{ios}}
		for i := 0; i < len(kv); i += 2 {
			b[kv[i].(string)] = kv[i+1]
		}
		return b
	}
	v := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name string
		body any
		want string // the JSON of the expected error body
	}{
		{"missing name", map[string]any{"command": "x", "platforms": []any{ios}}, `{"name":["This field is required."]}`},
		{"long name", ok("name", strings.Repeat("n", 101)), `{"name":["Ensure this field has no more than 100 characters."]}`},
		{"blank command", ok("command", "  "), `{"command":["This field may not be blank."]}`},
		{"no platforms", map[string]any{"name": "n", "command": "x"}, `{"platforms":["This field is required."]}`},
		{"empty platforms", ok("platforms", []any{}), `{"platforms":["This list may not be empty."]}`},
		{"unknown platform", ok("platforms", []any{999}), `{"platforms":["Related object not found using the provided numeric ID: 999"]}`},
		{"bad type", ok("command_type", "exec"), `{"command_type":["\"exec\" is not a valid choice."]}`},
		{"placeholder without variable", ok("command", "show int <iface>"),
			`{"command":["Placeholder <iface> has no variable; add a variable named \"iface\"."]}`},
		{"variable not in command", ok("command", "show int <a>", "variables", []any{v("name", "a"), v("name", "b")}),
			`{"variables":[{},{"name":["Variable \"b\" does not appear in the command as <b>."]}]}`},
		{"duplicate names", ok("command", "show int <a>", "variables", []any{v("name", "a"), v("name", "a")}),
			`{"variables":[{},{"name":["Variable names must be unique within a command."]}]}`},
		{"bad variable type", ok("command", "show int <a>", "variables", []any{v("name", "a", "variable_type", "netbox_device")}),
			`{"variables":[{"variable_type":["\"netbox_device\" is not a valid choice."]}]}`},
		{"bad variable name", ok("command", "show <1-4094>", "variables", []any{v("name", "1-4094")}),
			`{"variables":[{"name":["Enter a valid variable name: a letter, then letters, digits or underscores."]}]}`},
		{"reserved variable name", ok("command", "show <cr>", "variables", []any{v("name", "cr")}),
			`{"variables":[{"name":["\"cr\" is reserved: <cr> is literal command text."]}]}`},
		{"variable missing name", ok("variables", []any{v("required", false)}), `{"variables":[{"name":["This field is required."]}]}`},
		{"variable unknown field", ok("command", "x <a>", "variables", []any{v("name", "a", "colour", 1)}),
			`{"variables":[{"colour":["Unknown field."]}]}`},
		{"variable not an object", ok("variables", []any{5}),
			`{"variables":[{"non_field_errors":["Invalid data. Expected a dictionary, but got int."]}]}`},
		{"variables not a list", ok("variables", "a"), `{"variables":["Expected a list of items but got type \"str\"."]}`},
		{"unknown field", ok("colour", "red"), `{"colour":["Unknown field."]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", cmdPath, e.admin, c.body)
			if r.status != 400 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if got := strings.TrimSpace(string(r.body)); got != c.want {
				t.Fatalf("body\n got %s\nwant %s", got, c.want)
			}
		})
	}
	// literal angle brackets are not placeholders
	e.must(201, "POST", cmdPath, e.admin, ok("command", "show vlan id <1-4094> | include <cr>"))
	// PATCH that drops a variable the stored command needs names the command
	c := e.must(201, "POST", cmdPath, e.admin, ok("name", "m", "command", "ping <host>", "variables", []any{v("name", "host")}))
	r := e.do("PATCH", cmdURL(c["id"]), e.admin, map[string]any{"variables": []any{}})
	if r.status != 400 || !strings.Contains(string(r.body), `"command":["Placeholder <host> has no variable`) {
		t.Fatalf("patch dropping a variable: %d %s", r.status, r.body)
	}
	r = e.do("PATCH", cmdURL(c["id"]), e.admin, map[string]any{"command": "ping 10.0.0.1"})
	if r.status != 400 || !strings.Contains(string(r.body), `Variable \"host\" does not appear`) {
		t.Fatalf("patch dropping a placeholder: %d %s", r.status, r.body)
	}
	r = e.do("PATCH", cmdURL(c["id"]), e.admin, map[string]any{"name": ""})
	if r.status != 400 || !strings.Contains(string(r.body), `"name":["This field may not be blank."]`) {
		t.Fatalf("patch blank name: %d %s", r.status, r.body)
	}
}

func TestCommandFiltersAndOrdering(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "Cisco IOS", "cisco_ios")
	eos := tkPlatform(t, e.db, "Arista EOS", "arista_eos")
	core := tkTag(t, e.db, "Core", "core")
	mk := func(name, typ string, plats []any, tags []any) int {
		c := e.must(201, "POST", cmdPath, e.admin, map[string]any{"name": name, "command": name + " text",
			"command_type": typ, "platforms": plats, "tags": tags, "description": "about " + name})
		return num(c["id"])
	}
	a := mk("alpha", "show", []any{ios}, []any{core})
	b := mk("bravo", "config", []any{eos}, nil)
	c := mk("charlie", "show", []any{ios, eos}, nil)
	cases := []struct {
		query string
		want  []int
	}{
		{"", []int{a, b, c}},
		{"name=bravo", []int{b}},
		{"name__ic=AR", []int{c}},
		{"command_type=show", []int{a, c}},
		{"platform_id=" + itoa(eos), []int{b, c}},
		{"platform=cisco_ios", []int{a, c}},
		{"platform=cisco_ios&platform=arista_eos", []int{a, b, c}},
		{"tag=core", []int{a}},
		{"q=ABOUT%20BR", []int{b}},
		{fmt.Sprintf("id=%d&id=%d", a, c), []int{a, c}},
		{"ordering=-name", []int{c, b, a}},
		{"ordering=command_type,-id", []int{b, c, a}},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			got := e.must(200, "GET", cmdPath+"?"+tc.query, e.admin, nil)
			if !eqInts(ids(got), tc.want) {
				t.Fatalf("got %v, want %v", ids(got), tc.want)
			}
		})
	}
	for _, bad := range []string{"platform_id=x", "ordering=command", "colour=red"} {
		e.must(400, "GET", cmdPath+"?"+bad, e.admin, nil)
	}
	brief := e.must(200, "GET", cmdPath+"?brief=true&name=alpha", e.admin, nil)["results"].([]any)[0].(map[string]any)
	if _, has := brief["variables"]; has || brief["display"] != "alpha (Cisco IOS)" {
		t.Fatalf("brief: %v", brief)
	}
}

func TestCommandPermissions(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "Cisco IOS", "cisco_ios")
	eos := tkPlatform(t, e.db, "Arista EOS", "arista_eos")
	onIOS := num(e.must(201, "POST", cmdPath, e.admin, map[string]any{"name": "a", "command": "x", "platforms": []any{ios}})["id"])
	onEOS := num(e.must(201, "POST", cmdPath, e.admin, map[string]any{"name": "b", "command": "x", "platforms": []any{eos}})["id"])
	bob := e.user("bob", false)
	e.must(403, "GET", cmdPath, bob, nil)
	e.must(404, "GET", cmdURL(onIOS), bob, nil)
	e.grant("bob", "netbox_toolkit_plugin.command", []string{"view"}, `{"platforms__slug": "cisco_ios"}`)
	if got := e.must(200, "GET", cmdPath, bob, nil); !eqInts(ids(got), []int{onIOS}) {
		t.Fatalf("constrained list: %v", ids(got))
	}
	e.must(200, "GET", cmdURL(onIOS), bob, nil)
	e.must(404, "GET", cmdURL(onEOS), bob, nil)

	body := func(typ string) map[string]any {
		return map[string]any{"name": "n" + typ, "command": "x", "command_type": typ, "platforms": []any{ios}}
	}
	e.must(403, "POST", cmdPath, bob, body("show"))
	e.grant("bob", "netbox_toolkit_plugin.command", []string{"add", "change", "delete"}, `{"command_type": "show"}`)
	e.must(403, "POST", cmdPath, bob, body("config"))
	if got := e.must(200, "GET", cmdPath+"?name=nconfig", e.admin, nil); num(got["count"]) != 0 {
		t.Fatalf("refused create was written: %v", got)
	}
	id := num(e.must(201, "POST", cmdPath, bob, body("show"))["id"])
	e.must(403, "PATCH", cmdURL(id), bob, map[string]any{"command_type": "config"})
	e.must(200, "PATCH", cmdURL(id), bob, map[string]any{"description": "ok"})
	e.must(404, "DELETE", cmdURL(onEOS), bob, nil)
	e.must(204, "DELETE", cmdURL(id), bob, nil)
}

func TestCommandStoreLoader(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "Cisco IOS", "cisco_ios")
	c := e.must(201, "POST", cmdPath, e.admin, map[string]any{"name": "p", "command": "ping <host> repeat <n>",
		"platforms": []any{ios}, "variables": []any{map[string]any{"name": "host"}, map[string]any{"name": "n", "default_value": "5"}}})
	got, err := e.db.Command(t.Context(), int64(num(c["id"])))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.PlatformIDs, []int64{ios}) || len(got.Variables) != 2 || got.Variables[1].DefaultValue != "5" {
		raw, _ := json.Marshal(got)
		t.Fatalf("loaded command: %s", raw)
	}
	if _, err := e.db.Command(t.Context(), 9999); err == nil {
		t.Fatal("missing command loaded")
	}
}
