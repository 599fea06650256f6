package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"fieldkit/store"
)

const servicePath = "/ui/api/service-credential-sets/"

// A service credential set is made in the web interface by a user holding the service
// action, shown to every such user (not to its maker alone), never with a token or a
// secret; nobody can execute with it, not even its maker.
func TestServiceCredentialSets(t *testing.T) {
	x := newXEnv(t)
	aliceID, _ := x.user("alice", "pw", false)
	x.user("bob", "pw", false)
	carolID, _ := x.user("carol", "pw", false)
	name, types, actions := "service sets", []string{store.TypeCredentialSet}, []string{store.ActionService}
	if _, err := x.db.CreatePermission(context.Background(), store.PermissionInput{Name: &name, ObjectTypes: &types,
		Actions: &actions, Users: &[]int64{aliceID, carolID}}, store.All); err != nil {
		t.Fatal(err)
	}
	x.grant(aliceID, store.TypeCommand, "view", "execute_show")
	x.grant(aliceID, store.TypeDevice, "view")
	alice, bob, carol := x.browser(), x.browser(), x.browser()
	alice.login("alice", "pw")
	bob.login("bob", "pw")
	carol.login("carol", "pw")

	// Without the service action: refused, both ways in.
	const refused = "Service credential sets are managed by users holding the service action on netbox_toolkit_plugin.devicecredentialset."
	wantDetail(t, bob.do("GET", servicePath, nil), 403, refused)
	wantDetail(t, bob.do("POST", servicePath, map[string]any{"name": "x", "username": "u", "password": "p"}), 403, refused)

	created := alice.must(201, "POST", servicePath, map[string]any{"name": "nightly", "username": simUser, "password": simPass,
		"enable_secret": simEnable})
	id := num(created["id"])
	if created["service"] != true || created["created_by"] != "alice" || created["token"] != nil || created["token_prefix"] != nil {
		t.Fatalf("created: %v", created)
	}
	// Another holder of the action sees and manages it; bob does not.
	list := carol.must(200, "GET", servicePath, nil)
	if list["count"] != float64(1) || strings.Contains(fmt.Sprint(list), simPass) {
		t.Fatalf("carol's list: %v", list)
	}
	carol.must(200, "PATCH", fmt.Sprintf("%s%d/", servicePath, id), map[string]any{"description": "by carol"})
	wantDetail(t, bob.do("GET", fmt.Sprintf("%s%d/", servicePath, id), nil), 403, refused)
	// It is nobody's own set: not in alice's list, not usable by id from the runner.
	if own := alice.must(200, "GET", setsPath, nil); own["count"] != float64(0) {
		t.Fatalf("alice's own sets: %v", own)
	}
	r := alice.do("POST", fmt.Sprintf("/api/plugins/toolkit/commands/%d/execute/", x.command),
		map[string]any{"device_id": x.device, "credential_set_id": id})
	if r.status != 400 || !strings.Contains(string(r.body), "credential_set_id") {
		t.Fatalf("executing with a service set: %d %s, want 400", r.status, r.body)
	}
	if x.dev.Logins() != 0 {
		t.Fatal("the device was logged in to with a service set")
	}
	// The name is unique among service sets.
	r = carol.do("POST", servicePath, map[string]any{"name": "nightly", "username": "u", "password": "p"})
	if r.status != 400 || !strings.Contains(string(r.body), "already exists") {
		t.Fatalf("a second service set named nightly: %d %s", r.status, r.body)
	}
	carol.must(204, "DELETE", fmt.Sprintf("%s%d/", servicePath, id), nil)
	if list := alice.must(200, "GET", servicePath, nil); list["count"] != float64(0) {
		t.Fatalf("after delete: %v", list)
	}
}
