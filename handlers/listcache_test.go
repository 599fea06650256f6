package handlers

import "testing"

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
