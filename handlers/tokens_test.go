package handlers

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// rawAuth sends a GET with exactly the Authorization header given.
func (e *env) rawAuth(method, path, header string) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(`{"name":"x","slug":"x"}`))
	if err != nil {
		e.t.Fatal(err)
	}
	if header != "" {
		req.Header.Set("Authorization", header)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: raw}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	uid, _ := e.db.UserIDByName(ctx, "admin")
	_, expired, err := e.db.CreateToken(ctx, store.TokenInput{UserID: uid, WriteEnabled: true, Expires: time.Now().Add(-time.Minute)}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	_, readOnly, err := e.db.CreateToken(ctx, store.TokenInput{UserID: uid}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, header string
		status               int
		detail               string
	}{
		{"missing", "GET", "", 401, "Authentication credentials were not provided."},
		{"unknown", "GET", "Token 0123456789abcdef0123456789abcdef01234567", 401, "Invalid token"},
		{"expired", "GET", "Token " + expired, 401, "Token expired"},
		{"token", "GET", "Token " + e.admin, 200, ""},
		{"bearer", "GET", "Bearer " + e.admin, 200, ""},
		{"lower-case scheme", "GET", "token " + e.admin, 200, ""},
		{"read-only GET", "GET", "Token " + readOnly, 200, ""},
		{"read-only POST", "POST", "Token " + readOnly, 403, "This token does not have write permission."},
		{"read-only PATCH", "PATCH", "Token " + readOnly, 403, ""},
		{"read-only DELETE", "DELETE", "Token " + readOnly, 403, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := "/api/users/users/"
			if c.method == "PATCH" || c.method == "DELETE" {
				path += "1/"
			}
			r := e.rawAuth(c.method, path, c.header)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.status == 401 && r.header.Get("WWW-Authenticate") != "Token" {
				t.Fatalf("WWW-Authenticate: %q", r.header.Get("WWW-Authenticate"))
			}
			if c.detail != "" && r.json(t)["detail"] != c.detail {
				t.Fatalf("detail: %s", r.body)
			}
		})
	}
	if m := e.must(200, "GET", "/api/users/users/1/", e.admin, nil); m["is_superuser"] != true {
		t.Fatalf("read-only PATCH/DELETE changed something: %v", m)
	}
}

func TestInactiveUserRefused(t *testing.T) {
	e := newEnv(t)
	bob := e.user("bob", false)
	e.must(403, "GET", "/api/users/users/", bob, nil) // authenticated, no permission
	e.must(200, "PATCH", "/api/users/users/2/", e.admin, map[string]any{"is_active": false})
	r := e.do("GET", "/api/users/tokens/", bob, nil)
	if r.status != 401 || r.header.Get("WWW-Authenticate") != "Token" {
		t.Fatalf("inactive user's token: %d %s", r.status, r.body)
	}
	e.must(200, "PATCH", "/api/users/users/2/", e.admin, map[string]any{"is_active": true})
	e.must(200, "GET", "/api/users/tokens/", bob, nil)
}

var hex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)

func TestTokensCRUD(t *testing.T) {
	e := newEnv(t)
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	m := e.must(201, "POST", "/api/users/tokens/", e.admin, map[string]any{"description": "ci", "expires": future, "write_enabled": false})
	key, _ := m["key"].(string)
	if !hex40.MatchString(key) {
		t.Fatalf("key: %v", m)
	}
	if m["user"].(map[string]any)["username"] != "admin" || m["write_enabled"] != false || m["expires"] == nil {
		t.Fatalf("created token: %v", m)
	}
	if d := m["display"].(string); strings.Contains(d, key) || !strings.HasPrefix(d, key[:8]) || strings.Contains(d, key[8:16]) {
		t.Fatalf("display reveals the key: %q", d)
	}
	var hash string
	if err := e.db.Reader().QueryRow(`SELECT key_hash FROM tokens WHERE id = ?`, int64(m["id"].(float64))).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if hash != store.HashKey(key) {
		t.Fatal("key not stored as its SHA-256")
	}
	// the new token works at once, and is read-only
	e.must(200, "GET", "/api/users/tokens/", key, nil)
	e.must(403, "POST", "/api/users/groups/", key, map[string]any{"name": "x"})
	id := itoa(int64(m["id"].(float64)))
	for _, path := range []string{"/api/users/tokens/", "/api/users/tokens/" + id + "/"} {
		r := e.do("GET", path, e.admin, nil)
		if r.status != 200 || strings.Contains(string(r.body), key) || strings.Contains(string(r.body), `"key"`) {
			t.Fatalf("GET %s shows the key: %s", path, r.body)
		}
	}
	p := e.must(200, "PATCH", "/api/users/tokens/"+id+"/", e.admin, map[string]any{"write_enabled": true, "expires": nil})
	if p["write_enabled"] != true || p["expires"] != nil {
		t.Fatalf("patch: %v", p)
	}
	e.must(201, "POST", "/api/users/groups/", key, map[string]any{"name": "x"})
	// a chosen key is accepted once
	chosen := strings.Repeat("ab", 20)
	if m := e.must(201, "POST", "/api/users/tokens/", e.admin, map[string]any{"key": chosen}); m["key"] != chosen {
		t.Fatalf("chosen key: %v", m)
	}
	e.must(200, "GET", "/api/users/tokens/", chosen, nil)
	if m := e.must(400, "POST", "/api/users/tokens/", e.admin, map[string]any{"key": chosen}); m["key"] == nil {
		t.Fatalf("duplicate key: %v", m)
	}
	e.must(204, "DELETE", "/api/users/tokens/"+id+"/", e.admin, nil)
	if r := e.do("GET", "/api/users/tokens/", key, nil); r.status != 401 {
		t.Fatalf("deleted token still works: %d", r.status)
	}
}

func TestTokensValidation(t *testing.T) {
	e := newEnv(t)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"expires in the past", map[string]any{"expires": past}, "expires"},
		{"expires not a date", map[string]any{"expires": "tomorrow"}, "expires"},
		{"expires wrong type", map[string]any{"expires": 5}, "expires"},
		{"unknown user", map[string]any{"user": 99}, "user"},
		{"user by bad attrs", map[string]any{"user": map[string]any{"username": "nobody"}}, "user"},
		{"short key", map[string]any{"key": "abc"}, "key"},
		{"non-hex key", map[string]any{"key": strings.Repeat("z", 40)}, "key"},
		{"write_enabled not bool", map[string]any{"write_enabled": "no"}, "write_enabled"},
		{"long description", map[string]any{"description": strings.Repeat("d", 201)}, "description"},
		{"read-only field", map[string]any{"last_used": past}, "last_used"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := e.must(400, "POST", "/api/users/tokens/", e.admin, c.body)
			if _, ok := m[c.field]; !ok {
				t.Fatalf("400 body does not name %q: %v", c.field, m)
			}
		})
	}
	e.must(201, "POST", "/api/users/tokens/", e.admin, map[string]any{})
	if m := e.must(400, "PATCH", "/api/users/tokens/2/", e.admin, map[string]any{"expires": past}); m["expires"] == nil {
		t.Fatalf("patch past expiry: %v", m)
	}
	if m := e.must(400, "PATCH", "/api/users/tokens/2/", e.admin, map[string]any{"key": strings.Repeat("a", 40)}); m["key"] == nil {
		t.Fatalf("patch key: %v", m)
	}
}

func TestOwnTokens(t *testing.T) {
	e := newEnv(t)
	bob := e.user("bob", false)
	e.user("carol", false)
	// bob has no permission at all and still manages his own tokens
	m := e.must(200, "GET", "/api/users/tokens/", bob, nil)
	if m["count"].(float64) != 1 || m["results"].([]any)[0].(map[string]any)["user"].(map[string]any)["username"] != "bob" {
		t.Fatalf("own list: %v", m)
	}
	c := e.must(201, "POST", "/api/users/tokens/", bob, map[string]any{"description": "laptop"})
	if c["user"].(map[string]any)["username"] != "bob" {
		t.Fatalf("own create: %v", c)
	}
	e.must(201, "POST", "/api/users/tokens/", bob, map[string]any{"user": map[string]any{"username": "bob"}})
	own := itoa(int64(c["id"].(float64)))
	e.must(200, "GET", "/api/users/tokens/"+own+"/", bob, nil)
	e.must(200, "PATCH", "/api/users/tokens/"+own+"/", bob, map[string]any{"description": "desk"})
	// others' tokens are hidden, and creating one for carol needs add on users.token
	e.must(404, "GET", "/api/users/tokens/1/", bob, nil) // admin's
	e.must(404, "DELETE", "/api/users/tokens/3/", bob, nil)
	e.must(403, "POST", "/api/users/tokens/", bob, map[string]any{"user": 3})
	// moving his token to carol is a change outside his scope
	e.must(403, "PATCH", "/api/users/tokens/"+own+"/", bob, map[string]any{"user": 3})
	if n := countRows(t, e, `SELECT count(*) FROM tokens WHERE user_id = 3`); n != 1 {
		t.Fatalf("carol has %d tokens", n)
	}
	e.must(204, "DELETE", "/api/users/tokens/"+own+"/", bob, nil)

	e.grant("bob", "users.token", []string{"add"}, `{"user__username": "carol"}`)
	e.must(201, "POST", "/api/users/tokens/", bob, map[string]any{"user": 3})
	e.must(403, "POST", "/api/users/tokens/", bob, map[string]any{"user": 1}) // not admin
	e.grant("bob", "users.token", []string{"view", "delete"}, `{"user__username": "carol"}`)
	if m := e.must(200, "GET", "/api/users/tokens/?user=carol", bob, nil); m["count"].(float64) != 2 {
		t.Fatalf("carol's tokens through a permission: %v", m)
	}
	if m := e.must(200, "GET", "/api/users/tokens/", bob, nil); m["count"].(float64) != 4 {
		t.Fatalf("own plus permitted: %v", m)
	}
	e.must(404, "GET", "/api/users/tokens/1/", bob, nil)
	e.must(204, "DELETE", "/api/users/tokens/3/", bob, nil)
}

func countRows(t *testing.T, e *env, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.db.Reader().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
