package handlers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"fieldkit/store"
	"fieldkit/web"
)

// everyPermission gives username every action on every object type, unconstrained:
// all a non-superuser can hold.
func (e *env) everyPermission(username string) {
	e.t.Helper()
	for _, typ := range store.ObjectTypes() {
		actions := []string{"view", "add", "change", "delete"}
		if typ == store.TypeCommand {
			actions = append(actions, "execute_show", "execute_config")
		}
		e.grant(username, typ, actions, "")
	}
}

// userID is a user's id by name.
func (e *env) userID(name string) int64 {
	e.t.Helper()
	id, err := e.db.UserIDByName(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// The finding: a non-superuser holding users.token add made a token for the superuser
// and used it to promote itself.
func TestTokenForSuperuserIsRefused(t *testing.T) {
	e := newEnv(t)
	mallory := e.user("mallory", false)
	e.grant("mallory", store.TypeToken, []string{"view", "add"}, "")
	r := e.do("POST", "/api/users/tokens/", mallory, map[string]any{"user": 1})
	if r.status != 403 {
		t.Fatalf("token for the superuser: %d %s", r.status, r.body)
	}
	// Had it been made, this is what it would have been used for.
	if r.status == 201 {
		key := r.json(t)["key"].(string)
		e.do("PATCH", fmt.Sprintf("/api/users/users/%d/", e.userID("mallory")), key, map[string]any{"is_superuser": true})
	}
	if p, _ := e.db.PrincipalByID(context.Background(), e.userID("mallory")); p.IsSuperuser {
		t.Fatal("mallory became a superuser")
	}
}

// escalation is one write a non-superuser might try to gain a superuser's power with.
type escalation struct {
	method, path string
	body         any
	want         int // the status it must get; 0: any non-5xx (a legitimate write)
}

// TestNoWriteYieldsSuperuser walks every write route of users, groups, tokens and
// permissions (read from the router, so a new route without a case fails here) as a
// non-superuser holding every permission a non-superuser can hold, and checks after
// each that nobody gained a superuser's power: no new superuser, no credential of the
// superuser (token, password), the caller still a plain user.
func TestNoWriteYieldsSuperuser(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mallory := e.user("mallory", false)
	e.everyPermission("mallory")
	e.user("bob", false)
	admin, mal, bob := e.userID("admin"), e.userID("mallory"), e.userID("bob")
	group := int64(num(e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "ops"})["id"]))
	tokens := e.must(200, "GET", "/api/users/tokens/?ordering=id", e.admin, nil)["results"].([]any)
	tokenOf := map[int64]int64{}
	for _, tk := range tokens {
		m := tk.(map[string]any)
		tokenOf[int64(num(m["user"].(map[string]any)["id"]))] = int64(num(m["id"]))
	}
	perm := int64(num(e.must(201, "POST", "/api/users/permissions/", e.admin, map[string]any{
		"name": "admin's", "object_types": []string{store.TypeSite}, "actions": []string{"view"}, "users": []int64{admin}})["id"]))
	hash := func() string {
		var h string
		if err := e.db.Reader().QueryRow(`SELECT password_hash FROM users WHERE id = ?`, admin).Scan(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	adminHash := hash()
	key := strings.Repeat("ab", 20)
	u := func(id int64) string { return fmt.Sprintf("/api/users/users/%d/", id) }
	tk := func(id int64) string { return fmt.Sprintf("/api/users/tokens/%d/", id) }
	all := store.ObjectTypes()
	cases := []escalation{
		// users
		{"POST", "/api/users/users/", map[string]any{"username": "evil", "password": "pw123456", "is_superuser": true}, 403},
		{"POST", "/api/users/users/", []any{map[string]any{"username": "evil", "password": "pw123456", "is_superuser": true}}, 403},
		{"PATCH", u(mal), map[string]any{"is_superuser": true}, 403},
		{"PUT", u(mal), map[string]any{"username": "mallory", "password": "pw123456", "is_superuser": true}, 403},
		{"PATCH", "/api/users/users/", []any{map[string]any{"id": mal, "is_superuser": true}}, 403},
		{"PUT", "/api/users/users/", []any{map[string]any{"id": mal, "username": "mallory", "password": "pw123456", "is_superuser": true}}, 403},
		{"PATCH", u(admin), map[string]any{"password": "owned-now"}, 403},
		{"PUT", u(admin), map[string]any{"username": "admin", "password": "owned-now"}, 403},
		{"PATCH", "/api/users/users/", []any{map[string]any{"id": admin, "password": "owned-now"}}, 403},
		{"PUT", "/api/users/users/", []any{map[string]any{"id": admin, "username": "admin", "password": "owned-now"}}, 403},
		{"PATCH", u(admin), map[string]any{"is_active": false}, 403},
		{"DELETE", u(admin), nil, 403},
		{"DELETE", "/api/users/users/", []any{map[string]any{"id": admin}}, 403},
		{"PATCH", u(mal), map[string]any{"groups": []int64{group}}, 200},
		{"PATCH", u(bob), map[string]any{"password": "bobs-new-pw"}, 200},
		// groups
		{"POST", "/api/users/groups/", map[string]any{"name": "superusers"}, 201},
		{"POST", "/api/users/groups/", []any{map[string]any{"name": "admins"}}, 201},
		{"PATCH", fmt.Sprintf("/api/users/groups/%d/", group), map[string]any{"name": "root"}, 200},
		{"PUT", fmt.Sprintf("/api/users/groups/%d/", group), map[string]any{"name": "wheel"}, 200},
		{"PATCH", "/api/users/groups/", []any{map[string]any{"id": group, "name": "sudo"}}, 200},
		{"PUT", "/api/users/groups/", []any{map[string]any{"id": group, "name": "ops"}}, 200},
		// tokens
		{"POST", "/api/users/tokens/", map[string]any{"user": admin}, 403},
		{"POST", "/api/users/tokens/", map[string]any{"user": map[string]any{"username": "admin"}}, 403},
		{"POST", "/api/users/tokens/", map[string]any{"user": admin, "key": key}, 403},
		{"POST", "/api/users/tokens/", []any{map[string]any{"user": admin}}, 403},
		{"POST", "/api/users/tokens/", map[string]any{"user": bob}, 403},
		{"PATCH", tk(tokenOf[mal]), map[string]any{"user": admin}, 403},
		{"PUT", tk(tokenOf[mal]), map[string]any{"user": admin}, 403},
		{"PATCH", "/api/users/tokens/", []any{map[string]any{"id": tokenOf[mal], "user": admin}}, 403},
		{"PUT", "/api/users/tokens/", []any{map[string]any{"id": tokenOf[mal], "user": admin}}, 403},
		{"PATCH", tk(tokenOf[admin]), map[string]any{"user": mal}, 0},
		{"POST", "/api/users/tokens/", map[string]any{"description": "mine"}, 201},
		// provisioning trades a user's own password for their own token, nothing else
		{"POST", "/api/users/tokens/provision/", map[string]any{"username": "admin", "password": "guess"}, 401},
		{"POST", "/api/users/tokens/provision/", map[string]any{"username": "admin", "password": "", "user": admin}, 400},
		{"POST", "/api/users/tokens/provision/", map[string]any{"username": "mallory", "password": "x", "user": admin}, 400},
		// permissions: whatever mallory holds, she may pass on; none makes a superuser
		{"POST", "/api/users/permissions/", map[string]any{"name": "all", "object_types": all,
			"actions": []string{"view", "add", "change", "delete"}, "users": []int64{mal, bob}, "groups": []int64{group}}, 201},
		{"POST", "/api/users/permissions/", []any{map[string]any{"name": "all2", "object_types": all, "actions": []string{"view"}}}, 201},
		{"PATCH", fmt.Sprintf("/api/users/permissions/%d/", perm), map[string]any{"users": []int64{admin, mal}}, 200},
		{"PUT", fmt.Sprintf("/api/users/permissions/%d/", perm), map[string]any{"name": "x", "object_types": all, "actions": []string{"view"}}, 200},
		{"PATCH", "/api/users/permissions/", []any{map[string]any{"id": perm, "enabled": false}}, 200},
		{"PUT", "/api/users/permissions/", []any{map[string]any{"id": perm, "name": "y", "object_types": all, "actions": []string{"view"}}}, 200},
		// deletes last: a group, a permission, bob's token, bob
		{"DELETE", fmt.Sprintf("/api/users/groups/%d/", group), nil, 204},
		{"DELETE", "/api/users/groups/", []any{map[string]any{"id": group + 1}}, 204},
		{"DELETE", fmt.Sprintf("/api/users/permissions/%d/", perm), nil, 204},
		{"DELETE", "/api/users/permissions/", []any{map[string]any{"id": perm + 1}}, 204},
		{"DELETE", tk(tokenOf[bob]), nil, 204},
		{"DELETE", "/api/users/tokens/", []any{map[string]any{"id": tokenOf[admin]}}, 0},
		{"DELETE", u(bob), nil, 204},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.method+" "+routeOf(c.path)] = true
	}
	for _, rt := range e.api.router.Routes() {
		if strings.HasPrefix(rt.Path, "/api/users/") && !web.SafeMethod(rt.Method) && !covered[rt.Method+" "+rt.Path] {
			t.Errorf("write route %s %s has no escalation case", rt.Method, rt.Path)
		}
	}
	for _, c := range cases {
		r := e.do(c.method, c.path, mallory, c.body)
		if r.status >= 500 || (c.want != 0 && r.status != c.want) {
			t.Errorf("%s %s %v: status %d, want %d: %s", c.method, c.path, c.body, r.status, c.want, r.body)
		}
		var supers []int64
		rows, err := e.db.Reader().Query(`SELECT id FROM users WHERE is_superuser = 1 AND is_active = 1`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			supers = append(supers, id)
		}
		rows.Close()
		var adminTokens int
		e.db.Reader().QueryRow(`SELECT count(*) FROM tokens WHERE user_id = ? AND id <> ?`, admin, tokenOf[admin]).Scan(&adminTokens)
		p, err := e.db.PrincipalByID(ctx, mal)
		if err != nil || p.IsSuperuser || !slices.Equal(supers, []int64{admin}) || adminTokens != 0 || hash() != adminHash {
			t.Fatalf("after %s %s %v (%d): superusers %v, new tokens of the superuser %d, password changed %v, mallory %+v %v",
				c.method, c.path, c.body, r.status, supers, adminTokens, hash() != adminHash, p, err)
		}
	}
}

// routeOf turns a request path into its route pattern: numeric segments become :id.
func routeOf(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if s != "" && strings.Trim(s, "0123456789") == "" {
			segs[i] = ":id"
		}
	}
	return strings.Join(segs, "/")
}

// TestGrantsNeverExceedTheCaller: a user who may manage users and permissions can pass on
// only what they hold themselves. The grant after any write stays within the caller's:
// permissions (object types × actions × constraints), group membership that carries
// permissions, the password of a more privileged user, a token for another user.
func TestGrantsNeverExceedTheCaller(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice", false)
	for typ, acts := range map[string][]string{
		store.TypeUser: {"view", "add", "change"}, store.TypeGroup: {"view"},
		store.TypePermission: {"view", "add", "change"}, store.TypeToken: {"view", "add", "change"},
	} {
		e.grant("alice", typ, acts, "")
	}
	e.grant("alice", store.TypeSite, []string{"view"}, `{"slug": "north"}`)
	e.user("bob", false)
	e.grant("bob", store.TypeDevice, []string{"view", "add", "change", "delete"}, "")
	e.user("carol", false)
	e.user("svc", false)
	e.grant("carol", store.TypeToken, []string{"view", "add"}, `{"user__username__in": ["svc", "admin"]}`)
	aliceID, bobID, svcID := e.userID("alice"), e.userID("bob"), e.userID("svc")
	bobPerm := int64(num(e.must(200, "GET", "/api/users/permissions/?user=bob", e.admin, nil)["results"].([]any)[0].(map[string]any)["id"]))
	ops := int64(num(e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "ops"})["id"]))
	e.must(201, "POST", "/api/users/permissions/", e.admin, map[string]any{"name": "ops devices",
		"object_types": []string{store.TypeDevice}, "actions": []string{"view"}, "groups": []int64{ops}})
	readers := int64(num(e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "readers"})["id"]))
	e.must(201, "POST", "/api/users/permissions/", e.admin, map[string]any{"name": "readers users",
		"object_types": []string{store.TypeUser}, "actions": []string{"view"}, "groups": []int64{readers}})
	carol := e.token("carol")

	perm := func(types, actions []string, constraints any, users ...int64) map[string]any {
		return map[string]any{"name": fmt.Sprintf("p%v%v%v%v", types, actions, constraints, users), "object_types": types,
			"actions": actions, "constraints": constraints, "users": users}
	}
	site, device := []string{store.TypeSite}, []string{store.TypeDevice}
	for _, c := range []struct {
		name, token, method, path string
		body                      any
		want                      int
	}{
		{"a permission she lacks", alice, "POST", "/api/users/permissions/", perm(device, []string{"view"}, nil, aliceID), 403},
		{"an action she lacks", alice, "POST", "/api/users/permissions/", perm(site, []string{"delete"}, map[string]any{"slug": "north"}), 403},
		{"wider constraints", alice, "POST", "/api/users/permissions/", perm(site, []string{"view"}, nil), 403},
		{"other constraints", alice, "POST", "/api/users/permissions/", perm(site, []string{"view"}, map[string]any{"slug": "south"}), 403},
		{"a list with one wider alternative", alice, "POST", "/api/users/permissions/",
			perm(site, []string{"view"}, []any{map[string]any{"slug": "north"}, map[string]any{"slug": "south"}}), 403},
		{"the same constraints", alice, "POST", "/api/users/permissions/", perm(site, []string{"view"}, map[string]any{"slug": "north"}, bobID), 201},
		{"narrower constraints", alice, "POST", "/api/users/permissions/",
			perm(site, []string{"view"}, []any{map[string]any{"slug": "north", "name__ic": "n"}}), 201},
		{"joining a permission she lacks", alice, "PATCH", fmt.Sprintf("/api/users/permissions/%d/", bobPerm),
			map[string]any{"users": []int64{bobID, aliceID}}, 403},
		{"a group with more", alice, "PATCH", fmt.Sprintf("/api/users/users/%d/", aliceID), map[string]any{"groups": []int64{ops}}, 403},
		{"a new user in a group with more", alice, "POST", "/api/users/users/",
			map[string]any{"username": "eve", "password": "pw123456", "groups": []int64{ops}}, 403},
		{"a group with less", alice, "PATCH", fmt.Sprintf("/api/users/users/%d/", aliceID), map[string]any{"groups": []int64{readers}}, 200},
		{"the password of a user with more", alice, "PATCH", fmt.Sprintf("/api/users/users/%d/", bobID), map[string]any{"password": "x1234567"}, 403},
		{"the name of a user with more", alice, "PATCH", fmt.Sprintf("/api/users/users/%d/", bobID), map[string]any{"first_name": "Bob"}, 200},
		{"a token for another user", alice, "POST", "/api/users/tokens/", map[string]any{"user": bobID}, 403},
		{"a token for the user a constraint names", carol, "POST", "/api/users/tokens/", map[string]any{"user": svcID}, 201},
		{"a token for a superuser a constraint names", carol, "POST", "/api/users/tokens/", map[string]any{"user": 1}, 403},
		{"a token for a user no constraint names", carol, "POST", "/api/users/tokens/", map[string]any{"user": bobID}, 403},
	} {
		r := e.do(c.method, c.path, c.token, c.body)
		if r.status != c.want {
			t.Errorf("%s: %s %s: %d, want %d: %s", c.name, c.method, c.path, r.status, c.want, r.body)
		}
	}
}

// token makes a new write-enabled token for an existing user.
func (e *env) token(username string) string {
	e.t.Helper()
	_, key, err := e.db.CreateToken(context.Background(), store.TokenInput{UserID: e.userID(username), WriteEnabled: true}, store.All)
	if err != nil {
		e.t.Fatal(err)
	}
	return key
}
