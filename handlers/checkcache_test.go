package handlers

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// cacheUser is a non-superuser allowed to run a show command on sw1: device view
// (constrained to sw1) and command view granted to the user directly, execute_show
// through a group.
type cacheUser struct {
	id, tokenID, groupID, devPerm, viewPerm, execPerm, setID, cmd int64
	key, cred                                                     string
}

func newCacheUser(t *testing.T, x *xenv) cacheUser {
	t.Helper()
	ctx := context.Background()
	var u cacheUser
	x.user("ops", false)
	u.cmd = x.command("Version", "show version", "show")
	var err error
	if u.id, err = x.db.UserIDByName(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	u.tokenID, u.key, err = x.db.CreateToken(ctx, store.TokenInput{UserID: u.id, WriteEnabled: true}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	u.cred, u.setID = x.credSet("ops", "ops lab", nil)
	u.groupID = tkExec(t, x.db, `INSERT INTO groups (name, created, last_updated) VALUES ('operators', ?, ?)`, tkNow, tkNow)
	tkExec(t, x.db, `INSERT INTO user_groups (user_id, group_id) VALUES (?, ?)`, u.id, u.groupID)
	perm := func(name string, objectType, action, constraints string) int64 {
		in := store.PermissionInput{Name: &name, ObjectTypes: &[]string{objectType}, Actions: &[]string{action}}
		if constraints != "" {
			raw := json.RawMessage(constraints)
			in.Constraints = &raw
		}
		id, err := x.db.CreatePermission(ctx, in, store.All)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	u.devPerm = perm("ops devices", store.TypeDevice, "view", `{"name": "sw1"}`)
	u.viewPerm = perm("ops commands", store.TypeCommand, "view", "")
	u.execPerm = perm("operators run", store.TypeCommand, "execute_show", "")
	tkExec(t, x.db, `INSERT INTO permission_users (permission_id, user_id) VALUES (?, ?), (?, ?)`, u.devPerm, u.id, u.viewPerm, u.id)
	tkExec(t, x.db, `INSERT INTO permission_groups (permission_id, group_id) VALUES (?, ?)`, u.execPerm, u.groupID)
	return u
}

// run executes the user's command on sw1 with the user's token and credential set.
func (u cacheUser) run(x *xenv) resp {
	return x.do("POST", execPath(u.cmd), u.key, map[string]any{"device_id": x.iosID, "credential_token": u.cred})
}

// writeSQL commits statements through db, as any writer of the database file would.
func writeSQL(t *testing.T, db *store.DB, query string, args ...any) {
	t.Helper()
	err := db.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(context.Background(), query, args...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChecksFollowTheDatabase: whatever the server has cached of a request's checks, a
// change to a token, a user, a group membership, a permission, the inventory or a
// credential set takes effect on the very next request, whether this server made it or
// another process writing the same file (the CLI against the live data directory).
func TestChecksFollowTheDatabase(t *testing.T) {
	past := store.Stamp(time.Now().Add(-time.Hour))
	cases := []struct {
		name   string
		change func(t *testing.T, db *store.DB, x *xenv, u cacheUser)
		status int
		msg    string
	}{
		{"token revoked", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `DELETE FROM tokens WHERE id = ?`, u.tokenID)
		}, 401, "Invalid token"},
		{"token expired", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `UPDATE tokens SET expires = ? WHERE id = ?`, past, u.tokenID)
		}, 401, "Token expired"},
		{"token made read-only", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `UPDATE tokens SET write_enabled = 0 WHERE id = ?`, u.tokenID)
		}, 403, "does not have write permission"},
		{"user deactivated", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `UPDATE users SET is_active = 0 WHERE id = ?`, u.id)
		}, 401, "User inactive"},
		{"execute permission deleted", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `DELETE FROM object_permissions WHERE id = ?`, u.execPerm)
		}, 403, "permission to execute show commands"},
		{"execute permission disabled", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `UPDATE object_permissions SET enabled = 0 WHERE id = ?`, u.execPerm)
		}, 403, "permission to execute show commands"},
		{"group membership removed", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `DELETE FROM user_groups WHERE user_id = ? AND group_id = ?`, u.id, u.groupID)
		}, 403, "permission to execute show commands"},
		{"group's permission unlinked", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `DELETE FROM permission_groups WHERE permission_id = ?`, u.execPerm)
		}, 403, "permission to execute show commands"},
		{"command view removed", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `DELETE FROM permission_users WHERE permission_id = ?`, u.viewPerm)
		}, 404, "detail"},
		{"device constraint narrowed", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `UPDATE object_permissions SET constraints = '{"name": "sw2"}' WHERE id = ?`, u.devPerm)
		}, 400, "Device not found."},
		{"device renamed out of the constraint", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `UPDATE devices SET name = 'sw9' WHERE id = ?`, x.iosID)
		}, 400, "Device not found."},
		{"device's address removed", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `UPDATE devices SET primary_ip4_id = NULL WHERE id = ?`, x.iosID)
		}, 400, "no primary IP"},
		{"credential set deactivated", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `UPDATE credential_sets SET is_active = 0 WHERE id = ?`, u.setID)
		}, 400, "inactive"},
		{"credential token regenerated", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			writeSQL(t, db, `UPDATE credential_sets SET token_hash = ? WHERE id = ?`, store.HashKey("fkc_"+strings.Repeat("B", 43)), u.setID)
		}, 400, "Invalid credential token."},
		{"credential set restricted to another platform", func(t *testing.T, db *store.DB, x *xenv, u cacheUser) {
			junos := tkPlatform(t, db, "Junos", "junos")
			writeSQL(t, db, `INSERT INTO credential_set_platforms (credential_set_id, platform_id) VALUES (?, ?)`, u.setID, junos)
		}, 400, "not valid for the device's platform"},
	}
	for _, via := range []string{"this server", "another process"} {
		for _, c := range cases {
			t.Run(via+"/"+c.name, func(t *testing.T) {
				x := newXEnv(t, 1000)
				u := newCacheUser(t, x)
				for range 2 { // the second one is answered from the cache
					if r := u.run(x); r.status != 200 {
						t.Fatalf("before the change: %d %s", r.status, r.body)
					}
				}
				db := x.db
				if via == "another process" {
					db = openAgain(t, x.db)
				}
				c.change(t, db, x, u)
				r := u.run(x)
				if r.status != c.status || !strings.Contains(string(r.body), c.msg) {
					t.Fatalf("after the change: %d %s, want %d with %q", r.status, r.body, c.status, c.msg)
				}
			})
		}
	}
}

// openAgain opens the database file of db a second time: another process's view, with
// its own connections and nothing of this one's memory.
func openAgain(t *testing.T, db *store.DB) *store.DB {
	t.Helper()
	other, err := store.Open(context.Background(), db.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

// TestGrantsTakeEffectAtOnce: the other way round, a permission granted (or a user
// reactivated) by another process is honoured by the very next request, though the
// refusal before it came from the cache.
func TestGrantsTakeEffectAtOnce(t *testing.T) {
	x := newXEnv(t, 1000)
	u := newCacheUser(t, x)
	other := openAgain(t, x.db)
	writeSQL(t, x.db, `DELETE FROM permission_groups WHERE permission_id = ?`, u.execPerm)
	for range 2 {
		if r := u.run(x); r.status != 403 {
			t.Fatalf("without execute_show: %d %s", r.status, r.body)
		}
	}
	writeSQL(t, other, `INSERT INTO permission_users (permission_id, user_id) VALUES (?, ?)`, u.execPerm, u.id)
	if r := u.run(x); r.status != 200 {
		t.Fatalf("after the grant: %d %s", r.status, r.body)
	}
	writeSQL(t, other, `UPDATE users SET is_active = 0 WHERE id = ?`, u.id)
	if r := u.run(x); r.status != 401 {
		t.Fatalf("deactivated: %d %s", r.status, r.body)
	}
	writeSQL(t, other, `UPDATE users SET is_active = 1 WHERE id = ?`, u.id)
	if r := u.run(x); r.status != 200 {
		t.Fatalf("reactivated: %d %s", r.status, r.body)
	}
}

// TestCachedTokenExpiresByTheClock: a token cached while valid is refused once the
// clock passes its expiry, with nothing written to the database in between.
func TestCachedTokenExpiresByTheClock(t *testing.T) {
	x := newXEnv(t, 1000)
	u := newCacheUser(t, x)
	expires := time.Now().Add(time.Hour)
	writeSQL(t, x.db, `UPDATE tokens SET expires = ? WHERE id = ?`, store.Stamp(expires), u.tokenID)
	for range 2 {
		if r := u.run(x); r.status != 200 {
			t.Fatalf("before expiry: %d %s", r.status, r.body)
		}
	}
	x.db.SetClock(func() time.Time { return expires.Add(time.Second).UTC() })
	if r := u.run(x); r.status != 401 || !strings.Contains(string(r.body), "Token expired") {
		t.Fatalf("after expiry: %d %s", r.status, r.body)
	}
}

// TestVariableChoicesFollowTheDatabase: an inventory variable's allowed values (the
// device's interfaces) are cached with the checks, and a renamed interface is refused
// on the very next request, renamed here or by another process.
func TestVariableChoicesFollowTheDatabase(t *testing.T) {
	for _, via := range []string{"this server", "another process"} {
		t.Run(via, func(t *testing.T) {
			x := newXEnv(t, 1000)
			cmd := x.command("Interface", "show interfaces <iface>", "show",
				map[string]any{"name": "iface", "variable_type": "netbox_interface", "required": true})
			run := func() resp {
				return x.do("POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token,
					"variables": map[string]any{"iface": "GigabitEthernet0/2"}})
			}
			for range 2 {
				if r := run(); r.status != 200 {
					t.Fatalf("before the rename: %d %s", r.status, r.body)
				}
			}
			db := x.db
			if via == "another process" {
				db = openAgain(t, x.db)
			}
			writeSQL(t, db, `UPDATE interfaces SET name = 'GigabitEthernet0/9' WHERE device_id = ? AND name = 'GigabitEthernet0/2'`, x.iosID)
			if r := run(); r.status != 400 || !strings.Contains(string(r.body), "not one of") {
				t.Fatalf("after the rename: %d %s", r.status, r.body)
			}
		})
	}
}
