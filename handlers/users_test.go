package handlers

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestUsersCRUD(t *testing.T) {
	e := newEnv(t)
	g := e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "noc"})
	u := e.must(201, "POST", "/api/users/users/", e.admin, map[string]any{
		"username": "alice", "password": "s3cret-pass", "email": "alice@example.net",
		"first_name": "Alice", "groups": []any{g["id"], map[string]any{"name": "noc"}},
	})
	if _, ok := u["password"]; ok {
		t.Fatalf("password returned: %v", u)
	}
	if u["display"] != "alice" || u["is_active"] != true || u["is_superuser"] != false || u["last_login"] != nil {
		t.Fatalf("created user: %v", u)
	}
	groups := u["groups"].([]any)
	if len(groups) != 1 || groups[0].(map[string]any)["name"] != "noc" || groups[0].(map[string]any)["url"] == nil {
		t.Fatalf("groups: %v", u["groups"])
	}
	var hash string
	if err := e.db.Reader().QueryRow(`SELECT password_hash FROM users WHERE username = 'alice'`).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte("s3cret-pass")) != nil {
		t.Fatalf("stored hash does not verify: %q", hash)
	}
	id := itoa(int64(u["id"].(float64)))
	p := e.must(200, "PATCH", "/api/users/users/"+id+"/", e.admin, map[string]any{"last_name": "Smith", "groups": []any{}})
	if p["last_name"] != "Smith" || p["first_name"] != "Alice" || len(p["groups"].([]any)) != 0 {
		t.Fatalf("patch: %v", p)
	}
	e.must(200, "PATCH", "/api/users/users/"+id+"/", e.admin, map[string]any{"password": "another-one"})
	_ = e.db.Reader().QueryRow(`SELECT password_hash FROM users WHERE username = 'alice'`).Scan(&hash)
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte("another-one")) != nil {
		t.Fatal("password change not stored")
	}
	// PUT needs every required field
	e.must(400, "PUT", "/api/users/users/"+id+"/", e.admin, map[string]any{"email": "a@b.c"})
	e.must(204, "DELETE", "/api/users/users/"+id+"/", e.admin, nil)
	e.must(404, "GET", "/api/users/users/"+id+"/", e.admin, nil)
}

func TestUsersFilters(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "noc"})
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "ops"})
	for _, u := range []map[string]any{
		{"username": "bob", "password": "x", "first_name": "Bob", "groups": []any{1}},
		{"username": "carol", "password": "x", "last_name": "Jones", "email": "carol@corp.example", "groups": []any{2}},
		{"username": "dave", "password": "x", "is_active": false},
	} {
		e.must(201, "POST", "/api/users/users/", e.admin, u)
	}
	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{"admin", "bob", "carol", "dave"}},
		{"username=bob&username=dave", []string{"bob", "dave"}},
		{"username__isw=CA", []string{"carol"}},
		{"first_name=Bob", []string{"bob"}},
		{"last_name__ic=jon", []string{"carol"}},
		{"email__iew=corp.example", []string{"carol"}},
		{"is_active=False", []string{"dave"}},
		{"is_superuser=1", []string{"admin"}},
		{"group_id=1", []string{"bob"}},
		{"group=ops&group=noc", []string{"bob", "carol"}},
		{"q=JONES", []string{"carol"}},
		{"ordering=-username&limit=2", []string{"dave", "carol"}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			m := e.must(200, "GET", "/api/users/users/?"+c.query, e.admin, nil)
			var got []string
			for _, r := range m["results"].([]any) {
				got = append(got, r.(map[string]any)["username"].(string))
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	for _, bad := range []struct{ q, field string }{
		{"is_active=maybe", "is_active"}, {"group_id=x", "group_id"}, {"ordering=password", "ordering"},
		{"password=x", "password"},
	} {
		m := e.must(400, "GET", "/api/users/users/?"+bad.q, e.admin, nil)
		if _, ok := m[bad.field]; !ok {
			t.Errorf("%s: 400 does not name %s: %v", bad.q, bad.field, m)
		}
	}
}

func TestUsersValidation(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing username", map[string]any{"password": "x"}, "username"},
		{"missing password", map[string]any{"username": "x"}, "password"},
		{"blank password", map[string]any{"username": "x", "password": "  "}, "password"},
		{"password over bcrypt's 72 bytes", map[string]any{"username": "x", "password": strings.Repeat("p", 73)}, "password"},
		{"bad username", map[string]any{"username": "a b", "password": "x"}, "username"},
		{"long username", map[string]any{"username": strings.Repeat("u", 151), "password": "x"}, "username"},
		{"duplicate username", map[string]any{"username": "admin", "password": "x"}, "username"},
		{"bad email", map[string]any{"username": "x", "password": "x", "email": "nope"}, "email"},
		{"bool as string", map[string]any{"username": "x", "password": "x", "is_active": "yes"}, "is_active"},
		{"unknown group", map[string]any{"username": "x", "password": "x", "groups": []any{99}}, "groups"},
		{"groups not a list", map[string]any{"username": "x", "password": "x", "groups": 1}, "groups"},
		{"read-only field", map[string]any{"username": "x", "password": "x", "date_joined": "2020-01-01"}, "date_joined"},
		{"password hash is not a field", map[string]any{"username": "x", "password": "x", "password_hash": "x"}, "password_hash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := e.must(400, "POST", "/api/users/users/", e.admin, c.body)
			if _, ok := m[c.field]; !ok {
				t.Fatalf("400 body does not name %q: %v", c.field, m)
			}
		})
	}
}

func TestUsersLockout(t *testing.T) {
	e := newEnv(t)
	// the only superuser may not delete, deactivate or demote itself
	e.must(400, "DELETE", "/api/users/users/1/", e.admin, nil)
	for _, body := range []map[string]any{{"is_active": false}, {"is_superuser": false}} {
		m := e.must(400, "PATCH", "/api/users/users/1/", e.admin, body)
		if _, ok := m["non_field_errors"]; !ok {
			t.Fatalf("lockout refusal: %v", m)
		}
	}
	if m := e.must(200, "GET", "/api/users/users/1/", e.admin, nil); m["is_superuser"] != true || m["is_active"] != true {
		t.Fatalf("refused change was written: %v", m)
	}
	// with a second superuser, the first may be demoted by it, but not delete itself
	root := e.user("root", true)
	e.must(400, "DELETE", "/api/users/users/2/", root, nil)
	e.must(200, "PATCH", "/api/users/users/1/", root, map[string]any{"is_superuser": false})
	e.must(404, "DELETE", "/api/users/users/2/", e.admin, nil) // no longer a superuser: root is hidden
	e.must(204, "DELETE", "/api/users/users/1/", root, nil)
	if m := e.must(400, "DELETE", "/api/users/users/2/", root, nil); m["non_field_errors"] == nil {
		t.Fatalf("self delete: %v", m)
	}
}
