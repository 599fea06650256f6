package handlers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The cached commands list must never show a stale page or another user's page.
func TestCommandListCacheStaysCorrect(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "IOS", "ios")
	eos := tkPlatform(t, e.db, "EOS", "eos")
	mk := func(name string, p int64) {
		e.must(201, "POST", pathCommands, e.admin, map[string]any{"name": name, "command": "show " + name, "platforms": []int64{p}})
	}
	mk("a", ios)
	if m := e.must(200, "GET", pathCommands, e.admin, nil); m["count"].(float64) != 1 {
		t.Fatalf("first list: %v", m)
	}
	mk("b", eos) // a write between two identical requests
	if m := e.must(200, "GET", pathCommands, e.admin, nil); m["count"].(float64) != 2 {
		t.Fatalf("list after a write is stale: %v", m)
	}
	e.must(200, "PATCH", "/api/dcim/platforms/"+itoa(eos)+"/", e.admin, map[string]any{"name": "Arista"})
	m := e.must(200, "GET", pathCommands+"?name=b", e.admin, nil)
	if p := m["results"].([]any)[0].(map[string]any)["platforms"].([]any)[0].(map[string]any); p["name"] != "Arista" {
		t.Fatalf("renamed platform not shown: %v", p)
	}
	bob := e.user("bob", false)
	e.grant("bob", "netbox_toolkit_plugin.command", []string{"view"}, `{"platforms__slug": "ios"}`)
	if m := e.must(200, "GET", pathCommands, bob, nil); m["count"].(float64) != 1 {
		t.Fatalf("constrained user got the admin's cached page: %v", m)
	}
	if m := e.must(200, "GET", pathCommands, e.admin, nil); m["count"].(float64) != 2 {
		t.Fatalf("admin got bob's page: %v", m)
	}
}

// A page cached for a request a proxy marked https must not be served to a plain one:
// the cache key and the page's links read the scheme the same way, in any case.
func TestCommandListCacheKeepsSchemesApart(t *testing.T) {
	e := newEnv(t)
	ios := tkPlatform(t, e.db, "IOS", "ios")
	e.must(201, "POST", pathCommands, e.admin, map[string]any{"name": "a", "command": "show a", "platforms": []int64{ios}})
	get := func(proto string) string {
		req, _ := http.NewRequest("GET", e.srv.URL+pathCommands, nil)
		req.Header.Set("Authorization", "Token "+e.admin)
		if proto != "" {
			req.Header.Set("X-Forwarded-Proto", proto)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m["results"].([]any)[0].(map[string]any)["url"].(string)
	}
	if u := get("HTTPS"); !strings.HasPrefix(u, "https://") {
		t.Fatalf("behind an https proxy: %s", u)
	}
	if u := get(""); !strings.HasPrefix(u, "http://") {
		t.Fatalf("a plain request got the https page: %s", u)
	}
}
