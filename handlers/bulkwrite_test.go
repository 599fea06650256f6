package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// doList sends a request whose answer must be a JSON list with the given status.
func (e *env) doList(t testing.TB, status int, method, path, token string, body any) []any {
	t.Helper()
	r := e.do(method, path, token, body)
	if r.status != status {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	var out []any
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("%s %s: body is not a JSON list: %s", method, path, r.body)
	}
	return out
}

// rows counts a table's rows.
func (e *env) rows(table string) int {
	e.t.Helper()
	var n int
	if err := e.db.Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// field collects one field of each object of a list.
func field(list []any, name string) []any {
	out := make([]any, len(list))
	for i, o := range list {
		out[i] = o.(map[string]any)[name]
	}
	return out
}

func site(slug string) map[string]any {
	return map[string]any{"name": strings.ToUpper(slug), "slug": slug}
}

func TestBulkCreate(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "IOS", "ios")
	tests := []struct {
		name, path, table, key string
		body                   []any
		check                  func(t *testing.T, got []any)
	}{
		{"sites", pathSites, "sites", "slug", []any{site("b"), site("a"), site("c")}, nil},
		{"commands with variables", pathCommands, "command_variables", "name", []any{
			map[string]any{"name": "show int", "command": "show interface <iface>", "platforms": []int64{ios},
				"variables": []any{map[string]any{"name": "iface", "variable_type": "netbox_interface"}}},
			map[string]any{"name": "ping", "command": "ping <dst> count <n>", "command_type": "show", "platforms": []int64{ios},
				"variables": []any{map[string]any{"name": "dst"}, map[string]any{"name": "n", "default_value": "5"}}},
		}, func(t *testing.T, got []any) {
			if vars := got[1].(map[string]any)["variables"].([]any); len(vars) != 2 || vars[1].(map[string]any)["default_value"] != "5" {
				t.Errorf("variables of the second command: %v", vars)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := e.doList(t, 201, "POST", tc.path, e.admin, tc.body)
			if want := field(tc.body, tc.key); !reflect.DeepEqual(field(got, tc.key), want) {
				t.Errorf("created %v, want %v in request order", field(got, tc.key), want)
			}
			for i, o := range got {
				id := int64(o.(map[string]any)["id"].(float64))
				if m := e.must(200, "GET", tc.path+itoa(id)+"/", e.admin, nil); m[tc.key] != field(tc.body, tc.key)[i] {
					t.Errorf("stored %v", m)
				}
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
	if n := e.rows("command_variables"); n != 3 {
		t.Errorf("command_variables rows = %d, want 3", n)
	}
}

// A bulk create with any bad element writes nothing.
func TestBulkCreateAllOrNothing(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", pathSites, e.admin, site("taken"))
	bob := e.user("bob", false)
	e.grant("bob", "dcim.site", []string{"add", "view"}, `{"slug__isw": "ok"}`)
	many := make([]any, maxBulk+1)
	for i := range many {
		many[i] = site(fmt.Sprintf("s%d", i))
	}
	tests := []struct {
		name   string
		token  string
		body   any
		status int
		want   string // the body, as JSON
	}{
		{"one bad element", e.admin, []any{site("a"), map[string]any{"name": "B"}, site("c")}, 400,
			`[{},{"slug":["This field is required."]},{}]`},
		{"every bad element is reported", e.admin, []any{map[string]any{"slug": "a"}, site("b"), map[string]any{"name": "C", "slug": "c", "x": 1}}, 400,
			`[{"name":["This field is required."]},{},{"x":["Unknown field."]}]`},
		{"conflict with a stored row", e.admin, []any{site("a"), site("taken")}, 400,
			`[{},{"slug":["An object with this slug already exists."]}]`},
		{"conflict within the list", e.admin, []any{site("a"), site("a")}, 400,
			`[{},{"slug":["An object with this slug already exists."]}]`},
		{"element not an object", e.admin, []any{site("a"), "b"}, 400,
			`[{},{"non_field_errors":["Invalid data. Expected a dictionary, but got str."]}]`},
		{"empty list", e.admin, []any{}, 400, `{"non_field_errors":["This list may not be empty."]}`},
		{"too many", e.admin, many, 400, `{"non_field_errors":["Ensure this field has no more than 1000 elements."]}`},
		{"outside the add scope", bob, []any{site("ok1"), site("no"), site("ok2")}, 403,
			`{"detail":"You do not have permission to perform this action."}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gen := e.db.Generation()
			r := e.do("POST", pathSites, tc.token, tc.body)
			if r.status != tc.status || strings.TrimSpace(string(r.body)) != tc.want {
				t.Errorf("got %d %s, want %d %s", r.status, r.body, tc.status, tc.want)
			}
			if n := e.rows("sites"); n != 1 {
				t.Errorf("sites = %d, want only the one stored before", n)
			}
			if e.db.Generation() != gen {
				t.Error("generation moved: something was committed")
			}
		})
	}
	// the same user within scope succeeds
	if got := e.doList(t, 201, "POST", pathSites, bob, []any{site("ok1"), site("ok2")}); len(got) != 2 {
		t.Fatalf("in-scope bulk create: %v", got)
	}
}

func TestBulkCreateCommandsAllOrNothing(t *testing.T) {
	e := newEnv(t)
	ios := []int64{tkPlatform(t, e.db, "IOS", "ios")}
	body := []any{
		map[string]any{"name": "a", "command": "show <x>", "platforms": ios, "variables": []any{map[string]any{"name": "x"}}},
		map[string]any{"name": "b", "command": "show <y>", "platforms": ios, "variables": []any{map[string]any{"name": "y", "variable_type": "nope"}}},
	}
	r := e.do("POST", pathCommands, e.admin, body)
	var errs []map[string]any
	if r.status != 400 || json.Unmarshal(r.body, &errs) != nil || len(errs) != 2 || len(errs[0]) != 0 || errs[1]["variables"] == nil {
		t.Fatalf("got %d %s, want 400 with the second element's variables error", r.status, r.body)
	}
	for _, table := range []string{"commands", "command_variables"} {
		if n := e.rows(table); n != 0 {
			t.Errorf("%s rows = %d after a failed bulk create", table, n)
		}
	}
}

func TestBulkUpdateAndDelete(t *testing.T) {
	e := newEnv(t)
	made := e.doList(t, 201, "POST", pathSites, e.admin, []any{site("a"), site("b"), site("c")})
	id := func(i int) int64 { return int64(made[i].(map[string]any)["id"].(float64)) }
	descs := func() []any {
		return field(e.must(200, "GET", pathSites+"?ordering=slug", e.admin, nil)["results"].([]any), "description")
	}
	tests := []struct {
		name, method string
		body         []any
		status       int
		want         string // a fragment of the answer
		descs        []any  // descriptions of a, b, c after
	}{
		{"patch", "PATCH", []any{map[string]any{"id": id(2), "description": "C"}, map[string]any{"id": id(0), "description": "A"}},
			200, `"description":"C"`, []any{"A", "", "C"}},
		{"put needs every required field", "PUT", []any{map[string]any{"id": id(1), "description": "B"}}, 400,
			`[{"name":["This field is required."],"slug":["This field is required."]}]`, []any{"A", "", "C"}},
		{"put", "PUT", []any{map[string]any{"id": id(1), "name": "Bee", "slug": "b", "description": "B"}}, 200,
			`"name":"Bee"`, []any{"A", "B", "C"}},
		{"unknown id changes nothing", "PATCH", []any{map[string]any{"id": id(0), "description": "x"}, map[string]any{"id": 999, "description": "x"}},
			400, `[{},{"id":["Object with id 999 does not exist."]}]`, []any{"A", "B", "C"}},
		{"element without id", "PATCH", []any{map[string]any{"description": "x"}}, 400, `[{"id":["This field is required."]}]`,
			[]any{"A", "B", "C"}},
		{"duplicate id", "PATCH", []any{map[string]any{"id": id(0), "description": "x"}, map[string]any{"id": id(0), "description": "y"}},
			400, `[{},{"id":["Object with id`, []any{"A", "B", "C"}},
		{"an object is not a list", "PATCH", nil, 400, `Expected a list of items but got type \"dict\".`, []any{"A", "B", "C"}},
		{"delete with an unknown id deletes nothing", "DELETE", []any{map[string]any{"id": id(0)}, map[string]any{"id": 999}}, 400,
			`[{},{"id":["Object with id 999 does not exist."]}]`, []any{"A", "B", "C"}},
		{"delete element with other fields", "DELETE", []any{map[string]any{"id": id(0), "name": "x"}}, 400,
			`[{"name":["Unknown field."]}]`, []any{"A", "B", "C"}},
		{"delete", "DELETE", []any{map[string]any{"id": id(0)}, map[string]any{"id": id(2)}}, 204, "", []any{"B"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body any = tc.body
			if tc.body == nil {
				body = map[string]any{"id": id(0)}
			}
			r := e.do(tc.method, pathSites, e.admin, body)
			if r.status != tc.status || !strings.Contains(string(r.body), tc.want) {
				t.Errorf("got %d %s, want %d with %s", r.status, r.body, tc.status, tc.want)
			}
			if got := descs(); !reflect.DeepEqual(got, tc.descs) {
				t.Errorf("descriptions %v, want %v", got, tc.descs)
			}
		})
	}
}

// A constrained user cannot bulk-change or bulk-delete objects outside their scope,
// even when the others in the list are within it.
func TestBulkScope(t *testing.T) {
	e := newEnv(t)
	e.doList(t, 201, "POST", pathSites, e.admin, []any{site("north"), site("south"), site("hidden")})
	bob := e.user("bob", false)
	e.grant("bob", "dcim.site", []string{"view"}, `{"slug__in": ["north", "south"]}`)
	ids := map[string]int64{}
	for _, o := range e.must(200, "GET", pathSites, e.admin, nil)["results"].([]any) {
		m := o.(map[string]any)
		ids[m["slug"].(string)] = int64(m["id"].(float64))
	}
	ref := func(slugs ...string) []any {
		var out []any
		for _, s := range slugs {
			out = append(out, map[string]any{"id": ids[s]})
		}
		return out
	}
	e.must(403, "DELETE", pathSites, bob, ref("north")) // no delete permission at all
	e.grant("bob", "dcim.site", []string{"delete", "change"}, `{"slug": "north"}`)
	tests := []struct {
		name, method string
		body         []any
		status       int
	}{
		{"delete outside the delete scope", "DELETE", ref("north", "south"), 403},
		{"delete what cannot be seen", "DELETE", ref("north", "hidden"), 400},
		{"change outside the change scope", "PATCH", []any{map[string]any{"id": ids["south"], "description": "x"}}, 403},
		{"change moving out of scope", "PATCH", []any{map[string]any{"id": ids["north"], "slug": "moved"}}, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := e.do(tc.method, pathSites, bob, tc.body); r.status != tc.status {
				t.Errorf("got %d %s, want %d", r.status, r.body, tc.status)
			}
			m := e.must(200, "GET", pathSites+"?ordering=slug", e.admin, nil)
			if got := field(m["results"].([]any), "slug"); !reflect.DeepEqual(got, []any{"hidden", "north", "south"}) {
				t.Errorf("sites after a refused bulk write: %v", got)
			}
		})
	}
	e.must(204, "DELETE", pathSites, bob, ref("north"))
}

// The cached commands list shows a bulk create at once: the batch bumps the generation.
func TestBulkCreateRefreshesListCache(t *testing.T) {
	e := newEnv(t)
	ios := []int64{tkPlatform(t, e.db, "IOS", "ios")}
	e.must(201, "POST", pathCommands, e.admin, map[string]any{"name": "a", "command": "show a", "platforms": ios})
	if m := e.must(200, "GET", pathCommands, e.admin, nil); m["count"].(float64) != 1 {
		t.Fatalf("first list: %v", m)
	}
	gen := e.db.Generation()
	e.doList(t, 201, "POST", pathCommands, e.admin, []any{
		map[string]any{"name": "b", "command": "show b", "platforms": ios},
		map[string]any{"name": "c", "command": "show c", "platforms": ios}})
	if d := e.db.Generation() - gen; d != 1 {
		t.Errorf("generation moved by %d, want 1 (one commit)", d)
	}
	if m := e.must(200, "GET", pathCommands, e.admin, nil); m["count"].(float64) != 3 {
		t.Fatalf("list after a bulk create is stale: %v", m)
	}
}

// Each token of a bulk create comes back with its key, which then authenticates.
func TestBulkCreateTokens(t *testing.T) {
	e := newEnv(t)
	got := e.doList(t, 201, "POST", "/api/users/tokens/", e.admin, []any{
		map[string]any{"description": "one"}, map[string]any{"description": "two", "write_enabled": false}})
	if !reflect.DeepEqual(field(got, "description"), []any{"one", "two"}) {
		t.Fatalf("tokens: %v", got)
	}
	for _, key := range field(got, "key") {
		k, _ := key.(string)
		e.must(200, "GET", "/api/users/tokens/", k, nil)
	}
}
