package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// permFixture is a database with users, groups and a small inventory inserted with
// plain SQL, so the constraint language is tested on tables the API may not expose yet.
type permFixture struct {
	t   *testing.T
	db  *DB
	ctx context.Context
}

func newPermFixture(t *testing.T) *permFixture {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &permFixture{t: t, db: db, ctx: ctx}
	const now = "2026-01-01T00:00:00.000000Z"
	f.exec(`INSERT INTO groups (id, name, created, last_updated) VALUES (1, 'noc', ?, ?), (2, 'ops', ?, ?)`, now, now, now, now)
	f.exec(`INSERT INTO users (id, username, is_superuser, date_joined, created, last_updated) VALUES
		(1, 'root', 1, ?, ?, ?), (2, 'alice', 0, ?, ?, ?), (3, 'bob', 0, ?, ?, ?), (4, 'carol', 0, ?, ?, ?)`,
		now, now, now, now, now, now, now, now, now, now, now, now)
	f.exec(`INSERT INTO user_groups (user_id, group_id) VALUES (2, 1), (3, 2)`)
	f.exec(`INSERT INTO tokens (id, user_id, key_hash, key_prefix, created, last_updated) VALUES
		(1, 2, 'h1', 'p1', ?, ?), (2, 3, 'h2', 'p2', ?, ?), (3, 3, 'h3', 'p3', ?, ?)`, now, now, now, now, now, now)
	f.exec(`INSERT INTO sites (id, name, slug, description, created, last_updated) VALUES
		(1, 'North Hub', 'north', 'Main', ?, ?), (2, 'south-1', 'south', '', ?, ?), (3, 'East_Edge', 'east', '100%', ?, ?)`,
		now, now, now, now, now, now)
	f.exec(`INSERT INTO platforms (id, name, slug, created, last_updated) VALUES (1, 'IOS', 'ios', ?, ?), (2, 'EOS', 'eos', ?, ?)`,
		now, now, now, now)
	f.exec(`INSERT INTO tags (id, name, slug, created, last_updated) VALUES (1, 'Core', 'core', ?, ?), (2, 'Edge', 'edge', ?, ?)`,
		now, now, now, now)
	f.exec(`INSERT INTO devices (id, name, site_id, platform_id, created, last_updated) VALUES
		(1, 'r1', 1, 1, ?, ?), (2, 'r2', 2, 2, ?, ?), (3, 'r3', 1, NULL, ?, ?)`, now, now, now, now, now, now)
	f.exec(`INSERT INTO device_tags (device_id, tag_id) VALUES (1, 1), (1, 2), (2, 2)`)
	f.exec(`INSERT INTO interfaces (id, device_id, name, created, last_updated) VALUES
		(1, 1, 'Gi1', ?, ?), (2, 2, 'Et1', ?, ?), (3, 3, 'Gi9', ?, ?)`, now, now, now, now, now, now)
	f.exec(`INSERT INTO vlans (id, vid, name, site_id, created, last_updated) VALUES
		(1, 10, 'users', 1, ?, ?), (2, 20, 'voice', 2, ?, ?), (3, 30, 'mgmt', NULL, ?, ?)`, now, now, now, now, now, now)
	f.exec(`INSERT INTO commands (id, name, command, command_type, created, last_updated) VALUES
		(1, 'show ver', 'show version', 'show', ?, ?), (2, 'set desc', 'description x', 'config', ?, ?)`, now, now, now, now)
	// logs 1 and 2, with their counters
	if err := f.db.InsertLogs(ctx, []Values{
		{"command": int64(1), "command_name": "show ver", "device": int64(1), "device_name": "r1", "user": int64(2),
			"username": "alice", "success": true},
		{"command": int64(2), "command_name": "set desc", "device": int64(2), "device_name": "r2", "user": int64(3),
			"username": "bob", "success": false}}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *permFixture) exec(q string, args ...any) {
	f.t.Helper()
	if _, err := f.db.w.ExecContext(f.ctx, q, args...); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

// match lists the ids of objectType rows that meet e.
func (f *permFixture) match(t *testing.T, objectType string, e Expr) []int64 {
	t.Helper()
	ids, _, err := f.db.ListIDs(f.ctx, Query{Model: objectType, Where: []Expr{e}, Limit: 100})
	if err != nil {
		t.Fatalf("list %s where %s: %v", objectType, e.SQL, err)
	}
	if ids == nil {
		ids = []int64{}
	}
	return ids
}

func TestConstraintLookups(t *testing.T) {
	f := newPermFixture(t)
	cases := []struct {
		objectType, constraints string
		want                    []int64
	}{
		// sites 1 North Hub/north/Main, 2 south-1/south/"", 3 East_Edge/east/100%
		{TypeSite, `{"slug": "north"}`, []int64{1}},
		{TypeSite, `{"slug__exact": "north"}`, []int64{1}},
		{TypeSite, `{"slug": ["north", "east"]}`, []int64{1, 3}},
		{TypeSite, `{"slug__in": ["north", "east"]}`, []int64{1, 3}},
		{TypeSite, `{"slug__in": []}`, []int64{}},
		{TypeSite, `{"slug__n": ["north", "south"]}`, []int64{3}},
		{TypeSite, `{"slug__n": "north"}`, []int64{2, 3}},
		{TypeSite, `{"slug__n": []}`, []int64{1, 2, 3}},
		{TypeSite, `{"name__ic": "HUB"}`, []int64{1}},
		{TypeSite, `{"name__icontains": "hub"}`, []int64{1}},
		{TypeSite, `{"name__nic": "hub"}`, []int64{2, 3}},
		{TypeSite, `{"name__isw": "SOUTH"}`, []int64{2}},
		{TypeSite, `{"name__istartswith": "south"}`, []int64{2}},
		{TypeSite, `{"name__nisw": "south"}`, []int64{1, 3}},
		{TypeSite, `{"name__iew": "EDGE"}`, []int64{3}},
		{TypeSite, `{"name__iendswith": "edge"}`, []int64{3}},
		{TypeSite, `{"name__niew": "edge"}`, []int64{1, 2}},
		{TypeSite, `{"name__ie": "NORTH HUB"}`, []int64{1}},
		{TypeSite, `{"name__iexact": "north hub"}`, []int64{1}},
		{TypeSite, `{"name__nie": "north hub"}`, []int64{2, 3}},
		{TypeSite, `{"name__contains": "Hub"}`, []int64{1}},
		{TypeSite, `{"name__contains": "hub"}`, []int64{}},
		{TypeSite, `{"name__startswith": "North"}`, []int64{1}},
		{TypeSite, `{"name__startswith": "north"}`, []int64{}},
		{TypeSite, `{"name__endswith": "Edge"}`, []int64{3}},
		{TypeSite, `{"name__endswith": "edge"}`, []int64{}},
		{TypeSite, `{"name__endswith": ""}`, []int64{1, 2, 3}},
		{TypeSite, `{"description__ic": "%"}`, []int64{3}},
		{TypeSite, `{"name__ic": "_"}`, []int64{3}},
		{TypeSite, `{"description": ""}`, []int64{2}},
		{TypeSite, `{"pk": 2}`, []int64{2}},
		{TypeSite, `{"id__in": [1, "3"]}`, []int64{1, 3}},
		// vlans 10 (site 1), 20 (site 2), 30 (no site)
		{TypeVLAN, `{"vid__lt": 20}`, []int64{1}},
		{TypeVLAN, `{"vid__lte": 20}`, []int64{1, 2}},
		{TypeVLAN, `{"vid__gt": 20}`, []int64{3}},
		{TypeVLAN, `{"vid__gte": "20"}`, []int64{2, 3}},
		{TypeVLAN, `{"vid__gte": 15, "vid__lt": 30}`, []int64{2}},
		{TypeVLAN, `{"site__isnull": true}`, []int64{3}},
		{TypeVLAN, `{"site__isnull": false}`, []int64{1, 2}},
		{TypeVLAN, `{"site": null}`, []int64{3}},
		{TypeVLAN, `{"site__n": [1]}`, []int64{2, 3}},
		{TypeVLAN, `{"site__slug": "north"}`, []int64{1}},
		{TypeVLAN, `{"site__slug__n": ["north"]}`, []int64{2, 3}},
		{TypeVLAN, `{"site__slug__isnull": true}`, []int64{3}},
		{TypeVLAN, `{"name__lt": "u"}`, []int64{3}},
		// devices r1 (north, ios, core+edge), r2 (south, eos, edge), r3 (north, no platform, no tags)
		{TypeDevice, `{"site__slug": "north"}`, []int64{1, 3}},
		{TypeDevice, `{"site__name__ic": "hub"}`, []int64{1, 3}},
		{TypeDevice, `{"platform__slug": "ios"}`, []int64{1}},
		{TypeDevice, `{"platform__slug__in": ["ios", "eos"]}`, []int64{1, 2}},
		{TypeDevice, `{"platform__slug__n": ["ios"]}`, []int64{2, 3}},
		{TypeDevice, `{"platform__isnull": true}`, []int64{3}},
		{TypeDevice, `{"tags__slug": "core"}`, []int64{1}},
		{TypeDevice, `{"tags__slug": "edge"}`, []int64{1, 2}},
		{TypeDevice, `{"tags__slug__n": ["core"]}`, []int64{2, 3}},
		{TypeDevice, `{"tags__slug__nic": "CO"}`, []int64{2, 3}},
		{TypeDevice, `{"tags": 2}`, []int64{1, 2}},
		{TypeDevice, `{"tags__n": [1]}`, []int64{2, 3}},
		{TypeDevice, `{"tags__isnull": true}`, []int64{3}},
		{TypeDevice, `{"tags__isnull": false}`, []int64{1, 2}},
		{TypeDevice, `{"tags__nic": "1"}`, []int64{2, 3}},
		{TypeDevice, `{"tags__nic": "x"}`, []int64{1, 2, 3}},
		{TypeDevice, `{"site__slug": "north", "platform__isnull": false}`, []int64{1}},
		{TypeDevice, `[{"site__slug": "south"}, {"platform__slug": "ios"}]`, []int64{1, 2}},
		{TypeDevice, `[{"site__slug": "south"}, {"site__slug": "north", "tags__slug": "core"}]`, []int64{1, 2}},
		{TypeDevice, `{}`, []int64{1, 2, 3}},
		{TypeDevice, `[]`, []int64{1, 2, 3}},
		{TypeDevice, `null`, []int64{1, 2, 3}},
		{TypeInterface, `{"device__site__slug": "north"}`, []int64{1, 3}},
		{TypeInterface, `{"device__tags__slug": "edge", "name__isw": "et"}`, []int64{2}},
		// users root, alice (noc), bob (ops), carol; tokens 1 alice, 2-3 bob
		{TypeUser, `{"groups__name": "noc"}`, []int64{2}},
		{TypeUser, `{"groups__name__in": ["noc", "ops"]}`, []int64{2, 3}},
		{TypeUser, `{"groups__isnull": true}`, []int64{1, 4}},
		{TypeUser, `{"is_superuser": false, "groups__name__n": ["noc"]}`, []int64{3, 4}},
		{TypeUser, `{"is_superuser": "true"}`, []int64{1}},
		{TypeGroup, `{"users__username": "bob"}`, []int64{2}},
		{TypeToken, `{"user__username": "bob"}`, []int64{2, 3}},
		{TypeToken, `{"user__groups__name": "noc"}`, []int64{1}},
		{TypeCommandLog, `{"command__command_type": "config"}`, []int64{2}},
		{TypeCommandLog, `{"device__site__slug": "north", "success": true}`, []int64{1}},
	}
	for _, c := range cases {
		t.Run(c.objectType+" "+c.constraints, func(t *testing.T) {
			e, err := CompileConstraints(ModelFor(c.objectType), c.constraints, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.match(t, c.objectType, e); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v (SQL %s %v)", got, c.want, e.SQL, e.Args)
			}
		})
	}
}

func TestConstraintUser(t *testing.T) {
	f := newPermFixture(t)
	for _, c := range []struct {
		objectType, constraints string
		user                    int64
		want                    []int64
	}{
		{TypeToken, `{"user": "$user"}`, 3, []int64{2, 3}},
		{TypeToken, `{"user__in": ["$user", 2]}`, 3, []int64{1, 2, 3}},
		{TypeUser, `{"id": "$user"}`, 2, []int64{2}},
		{TypeCommandLog, `{"user": "$user"}`, 2, []int64{1}},
	} {
		e, err := CompileConstraints(ModelFor(c.objectType), c.constraints, c.user)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.match(t, c.objectType, e); !slices.Equal(got, c.want) {
			t.Errorf("%s as %d: got %v, want %v", c.constraints, c.user, got, c.want)
		}
	}
}

func TestConstraintErrors(t *testing.T) {
	for _, c := range []struct{ objectType, constraints, want string }{
		{TypeSite, `{"colour": "red"}`, "unknown field"},
		{TypeDevice, `{"site__colour": "red"}`, "unknown field"},
		{TypeDevice, `{"name__slug": "x"}`, "not a relation"},
		{TypeSite, `{"id": "abc"}`, "whole number"},
		{TypeSite, `{"slug__ic": ["a", "b"]}`, "only allowed"},
		{TypeSite, `{"slug": {"a": 1}}`, "not text"},
		{TypeSite, `{"created__gt": "yesterday"}`, "date"},
		{TypeSite, `{"slug__isnull": "maybe"}`, "boolean"},
		{TypeSite, `"slug"`, "object or a list"},
		{TypeSite, `[{"slug": "x"}, 5]`, "list must hold objects"},
		{TypeSite, `{"slug": `, "not valid JSON"},
	} {
		_, err := CompileConstraints(ModelFor(c.objectType), c.constraints, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.constraints, err, c.want)
		}
	}
	if err := ValidateConstraints([]string{TypeSite, TypeDevice}, `{"slug": "x"}`); err == nil || !strings.Contains(err.Error(), TypeDevice) {
		t.Errorf("validate across types: %v", err)
	}
	if err := ValidateConstraints([]string{TypeSite, TypePlatform}, `{"slug": "x"}`); err != nil {
		t.Errorf("validate across types: %v", err)
	}
}

// grant inserts a permission with plain SQL (constraints as given, even malformed).
func (f *permFixture) grant(name string, types, actions []string, constraints *string, enabled bool, users, groups []int64) {
	f.t.Helper()
	tj, _ := json.Marshal(types)
	aj, _ := json.Marshal(actions)
	const now = "2026-01-01T00:00:00.000000Z"
	res, err := f.db.w.ExecContext(f.ctx, `INSERT INTO object_permissions (name, enabled, object_types, actions, constraints,
		created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?)`, name, enabled, string(tj), string(aj), constraints, now, now)
	if err != nil {
		f.t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	for _, u := range users {
		f.exec(`INSERT INTO permission_users (permission_id, user_id) VALUES (?, ?)`, id, u)
	}
	for _, g := range groups {
		f.exec(`INSERT INTO permission_groups (permission_id, group_id) VALUES (?, ?)`, id, g)
	}
}

func TestScope(t *testing.T) {
	f := newPermFixture(t)
	view := []string{"view"}
	devices := []string{TypeDevice}
	f.grant("alice north", devices, view, ptr(`{"site__slug": "north"}`), true, []int64{2}, nil)
	f.grant("noc ios", devices, []string{"view", "change"}, ptr(`{"platform__slug": "ios"}`), true, nil, []int64{1})
	f.grant("bob disabled", devices, view, nil, false, []int64{3}, nil)
	f.grant("bob bad field", devices, view, ptr(`{"colour": "red"}`), true, []int64{3}, nil)
	f.grant("bob bad json", devices, view, ptr(`{"site__slug": `), true, []int64{3}, nil)
	f.grant("bob sites", []string{TypeSite, TypeVLAN}, view, ptr(`[{"slug": "east"}, {"slug": "south"}]`), true, []int64{3}, nil)
	f.grant("carol own tokens", []string{TypeToken}, []string{"delete"}, ptr(`{"user": "$user"}`), true, []int64{4}, nil)
	f.grant("carol bad and good", devices, view, ptr(`{"nope": 1}`), true, []int64{4}, nil)
	f.grant("carol good", devices, view, ptr(`{"name": "r2"}`), true, []int64{4}, nil)
	f.grant("ops everything", []string{TypeCommand}, []string{"view", "execute_show"}, ptr(`null`), true, nil, []int64{2})

	root := Principal{ID: 1, IsSuperuser: true}
	alice := Principal{ID: 2, GroupIDs: []int64{1}}
	bob := Principal{ID: 3, GroupIDs: []int64{2}}
	carol := Principal{ID: 4}
	cases := []struct {
		name       string
		p          Principal
		objectType string
		action     string
		granted    bool
		want       []int64
		problems   int
	}{
		{"superuser passes", root, TypeDevice, "delete", true, []int64{1, 2, 3}, 0},
		{"own and group permissions OR", alice, TypeDevice, "view", true, []int64{1, 3}, 0},
		{"group permission alone", alice, TypeDevice, "change", true, []int64{1}, 0},
		{"no permission for the action", alice, TypeDevice, "delete", false, nil, 0},
		{"no permission for the type", alice, TypeSite, "view", false, nil, 0},
		{"disabled and broken grant nothing", bob, TypeDevice, "view", true, []int64{}, 2},
		{"list of objects ORs", bob, TypeSite, "view", true, []int64{2, 3}, 0},
		{"constraint fitting neither type", bob, TypeVLAN, "view", true, []int64{}, 1},
		{"$user", carol, TypeToken, "delete", true, []int64{}, 0},
		{"a broken permission leaves the others", carol, TypeDevice, "view", true, []int64{2}, 1},
		{"null constraints grant all", bob, TypeCommand, "execute_show", true, []int64{1, 2}, 0},
		{"execute not granted", bob, TypeCommand, "execute_config", false, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := f.db.Scope(f.ctx, c.p, c.objectType, c.action)
			if err != nil {
				t.Fatal(err)
			}
			if s.Granted != c.granted || len(s.Problems) != c.problems {
				t.Fatalf("granted %v problems %v, want %v and %d", s.Granted, s.Problems, c.granted, c.problems)
			}
			if !c.granted {
				return
			}
			if got := f.match(t, c.objectType, s.Expr); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	// carol's own tokens: she has none until one is made for her
	f.exec(`INSERT INTO tokens (id, user_id, key_hash, key_prefix, created, last_updated) VALUES (9, 4, 'h9', 'p9', '', '')`)
	s, _ := f.db.Scope(f.ctx, carol, TypeToken, "delete")
	if got := f.match(t, TypeToken, s.Expr); !slices.Equal(got, []int64{9}) {
		t.Fatalf("$user tokens: %v", got)
	}
}

func TestCheckScope(t *testing.T) {
	f := newPermFixture(t)
	north, _ := CompileConstraints(ModelFor(TypeSite), `{"slug": "north"}`, 0)
	for _, c := range []struct {
		name string
		id   int64
		s    Scope
		ok   bool
	}{
		{"all", 2, All, true},
		{"not granted", 1, Scope{}, false},
		{"inside", 1, Scope{Granted: true, Expr: north}, true},
		{"outside", 2, Scope{Granted: true, Expr: north}, false},
	} {
		err := CheckScope(f.ctx, f.db.r, TypeSite, c.id, c.s)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
