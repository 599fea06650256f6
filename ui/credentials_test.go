package ui

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"fieldkit/exec"
	"fieldkit/exec/devsim"
	"fieldkit/handlers"
	"fieldkit/store"
)

const (
	simUser   = "netops"
	simPass   = "Dev1ce-Passw0rd-XYZ"
	simEnable = "En4ble-Secret-QRS"
	setsPath  = "/ui/api/credential-sets/"
)

func setPath(id any) string { return fmt.Sprintf("%s%v/", setsPath, id) }

func num(v any) int64 { return int64(v.(float64)) }

// xenv is an env with a simulated IOS device in the inventory, for executions.
type xenv struct {
	*env
	dev                   *devsim.Device
	plat, device, command int64
}

func newXEnv(t *testing.T) *xenv { return newXEnvWith(t, nil) }

// newXEnvWith is newXEnv with the simulated device's configuration adjusted by mod.
func newXEnvWith(t *testing.T, mod func(*devsim.Config)) *xenv {
	t.Helper()
	return newXEnvPool(t, mod, nil)
}

// newXEnvPool is newXEnvWith with executions going through pool (nil: none).
func newXEnvPool(t *testing.T, mod func(*devsim.Config), pool *exec.Pool) *xenv {
	t.Helper()
	e := newEnv(t, envOptions{exec: handlers.ExecOptions{HostKeyPolicy: exec.HostKeyTOFU, MaxOutputBytes: 1 << 20, Pool: pool}})
	cfg := devsim.Config{Vendor: "cisco_ios", Hostname: "sw1", Username: simUser, Password: simPass, EnableSecret: simEnable}
	if mod != nil {
		mod(&cfg)
	}
	d, err := devsim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	const now = "2026-01-01T00:00:00.000000Z"
	x := &xenv{env: e, dev: d}
	x.plat = e.exec(`INSERT INTO platforms (name, slug, created, last_updated) VALUES ('Cisco IOS', 'cisco_ios', ?, ?)`, now, now)
	site := e.exec(`INSERT INTO sites (name, slug, created, last_updated) VALUES ('Lab', 'lab', ?, ?)`, now, now)
	x.device = e.exec(`INSERT INTO devices (name, site_id, platform_id, custom_fields, created, last_updated) VALUES ('sw1', ?, ?, ?, ?, ?)`,
		site, x.plat, fmt.Sprintf(`{"ssh_port": %d}`, d.Port()), now, now)
	ifc := e.exec(`INSERT INTO interfaces (device_id, name, created, last_updated) VALUES (?, 'Gi0/1', ?, ?)`, x.device, now, now)
	ip := e.exec(`INSERT INTO ip_addresses (address, assigned_object_type, assigned_object_id, created, last_updated)
		VALUES ('127.0.0.1/8', 'dcim.interface', ?, ?, ?)`, ifc, now, now)
	e.exec(`UPDATE devices SET primary_ip4_id = ? WHERE id = ?`, ip, x.device)
	x.command = e.exec(`INSERT INTO commands (name, command, command_type, created, last_updated) VALUES ('Version', 'show version', 'show', ?, ?)`, now, now)
	e.exec(`INSERT INTO command_platforms (command_id, platform_id) VALUES (?, ?)`, x.command, x.plat)
	return x
}

func (x *xenv) execute(b *browser, token string) resp {
	return b.do("POST", fmt.Sprintf("/api/plugins/toolkit/commands/%d/execute/", x.command),
		map[string]any{"device_id": x.device, "credential_token": token})
}

func TestCredentialSetsLifecycle(t *testing.T) {
	x := newXEnv(t)
	x.user("alice", "pw", true)
	b := x.browser()
	b.login("alice", "pw")

	created := b.must(201, "POST", setsPath, map[string]any{"name": "lab", "description": "lab switches",
		"username": simUser, "password": simPass, "enable_secret": simEnable, "platforms": []any{x.plat}})
	token, _ := created["token"].(string)
	if !strings.HasPrefix(token, "fkc_") || created["token_prefix"] != token[:12] {
		t.Fatalf("token %q, prefix %v", token, created["token_prefix"])
	}
	id := num(created["id"])
	want := map[string]any{"id": float64(id), "name": "lab", "description": "lab switches", "username": simUser,
		"is_active": true, "has_password": true, "has_enable_secret": true, "has_private_key": false}
	for k, v := range want {
		if created[k] != v {
			t.Errorf("create %s = %v, want %v", k, created[k], v)
		}
	}
	plats := created["platforms"].([]any)
	if len(plats) != 1 || plats[0].(map[string]any)["slug"] != "cisco_ios" || created["last_used"] != nil {
		t.Errorf("platforms %v, last_used %v", plats, created["last_used"])
	}

	// The token is shown once: no later answer carries it, nor any secret.
	list := b.must(200, "GET", setsPath, nil)
	detail := b.must(200, "GET", setPath(id), nil)
	for _, body := range []map[string]any{list, detail} {
		raw := fmt.Sprint(body)
		for _, secret := range []string{token, simPass, simEnable} {
			if strings.Contains(raw, secret) {
				t.Errorf("a read shows a secret or the token: %s", raw)
			}
		}
	}
	if list["count"] != float64(1) || num(list["results"].([]any)[0].(map[string]any)["id"]) != id {
		t.Errorf("list: %v", list)
	}
	if _, ok := detail["token"]; ok {
		t.Errorf("detail has a token: %v", detail)
	}

	// The set works for an execution from the browser session, and records its use.
	if r := x.execute(b, token); r.status != 200 || !strings.Contains(string(r.body), `"success":true`) {
		t.Fatalf("execute with the new set: %d %s", r.status, r.body)
	}
	if b.must(200, "GET", setPath(id), nil)["last_used"] == nil {
		t.Errorf("last_used not set after use")
	}

	// Regenerate: the old token is dead at once, the new one works.
	regen := b.must(200, "POST", setPath(id)+"regenerate/", nil)
	newToken := regen["token"].(string)
	if newToken == token || len(regen) != 1 {
		t.Fatalf("regenerate: %v", regen)
	}
	r := x.execute(b, token)
	if r.status != 400 || !strings.Contains(string(r.body), `"credential_token":["Invalid credential token."]`) {
		t.Errorf("execute with the old token: %d %s", r.status, r.body)
	}
	if r := x.execute(b, newToken); r.status != 200 {
		t.Errorf("execute with the regenerated token: %d %s", r.status, r.body)
	}

	// PATCH: an omitted secret is kept, "" clears one; deactivating stops the token.
	p := b.must(200, "PATCH", setPath(id), map[string]any{"enable_secret": "", "is_active": false, "description": "old"})
	if p["has_password"] != true || p["has_enable_secret"] != false || p["is_active"] != false || p["description"] != "old" {
		t.Errorf("patch: %v", p)
	}
	if r := x.execute(b, newToken); r.status != 400 || !strings.Contains(string(r.body), "inactive") {
		t.Errorf("execute with an inactive set: %d %s", r.status, r.body)
	}

	// The database file holds no secret in clear.
	x.db.Close()
	raw, err := os.ReadFile(x.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(x.db.Path() + "-wal")
	for _, secret := range []string{simPass, simEnable, token, newToken} {
		if bytes.Contains(raw, []byte(secret)) || bytes.Contains(wal, []byte(secret)) {
			t.Errorf("%s found in clear in %s", secret, filepath.Base(x.db.Path()))
		}
	}
}

func TestCredentialSetDelete(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("alice", "pw", false)
	b := e.browser()
	b.login("alice", "pw")
	id := num(b.must(201, "POST", setsPath, map[string]any{"name": "a", "username": "u", "password": "p"})["id"])
	b.must(204, "DELETE", setPath(id), nil)
	b.must(404, "GET", setPath(id), nil)
	b.must(404, "DELETE", setPath(id), nil)
	if b.must(200, "GET", setsPath, nil)["count"] != float64(0) {
		t.Errorf("set still listed")
	}
}

func TestCredentialSetValidation(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("alice", "pw", false)
	plat := e.exec(`INSERT INTO platforms (name, slug, created, last_updated) VALUES ('IOS', 'ios', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')`)
	b := e.browser()
	b.login("alice", "pw")
	b.must(201, "POST", setsPath, map[string]any{"name": "taken", "username": "u", "password": "p"})

	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	key := string(pem.EncodeToMemory(block))
	block, _ = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
	lockedKey := string(pem.EncodeToMemory(block))

	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
		msg   string
	}{
		{"name missing", map[string]any{"username": "u", "password": "p"}, "name", "This field is required."},
		{"name blank", map[string]any{"name": "  ", "username": "u", "password": "p"}, "name", "This field may not be blank."},
		{"name too long", map[string]any{"name": strings.Repeat("n", 101), "username": "u", "password": "p"}, "name", "Ensure this field has no more than 100 characters."},
		{"name taken", map[string]any{"name": "taken", "username": "u", "password": "p"}, "name", "A credential set with this name already exists."},
		{"username missing", map[string]any{"name": "x", "password": "p"}, "username", "This field is required."},
		{"no password or key", map[string]any{"name": "x", "username": "u"}, "password", "A password is required unless a private key is given."},
		{"bad key", map[string]any{"name": "x", "username": "u", "private_key": "not a key"}, "private_key", "Not a valid SSH private key (PEM or OpenSSH format)."},
		{"key with passphrase", map[string]any{"name": "x", "username": "u", "private_key": lockedKey}, "private_key", "Keys protected by a passphrase are not supported; remove the passphrase first."},
		{"unknown platform", map[string]any{"name": "x", "username": "u", "password": "p", "platforms": []any{999}}, "platforms", "Related object not found using the provided numeric ID: 999"},
		{"platforms not a list", map[string]any{"name": "x", "username": "u", "password": "p", "platforms": "ios"}, "platforms", "Expected a list of platform ids."},
		{"unknown field", map[string]any{"name": "x", "username": "u", "password": "p", "owner": 2}, "owner", "Unknown field."},
		{"secret null", map[string]any{"name": "x", "username": "u", "password": nil, "private_key": key}, "password", "This field may not be null."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do("POST", setsPath, tc.body)
			if r.status != 400 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			msgs, _ := r.json(t)[tc.field].([]any)
			if len(msgs) == 0 || msgs[0] != tc.msg {
				t.Errorf("body %s, want %s: %q", r.body, tc.field, tc.msg)
			}
		})
	}

	// A key alone will do; platforms may be given as the set's JSON shows them.
	m := b.must(201, "POST", setsPath, map[string]any{"name": "keyed", "username": "u", "private_key": key,
		"platforms": []any{map[string]any{"id": plat}, plat}})
	if m["has_private_key"] != true || m["has_password"] != false || len(m["platforms"].([]any)) != 1 {
		t.Errorf("key-only set: %v", m)
	}
	// Clearing the key of a set without a password would leave it unable to log in.
	r := b.do("PATCH", setPath(num(m["id"])), map[string]any{"private_key": ""})
	if r.status != 400 || !strings.Contains(string(r.body), "A password is required unless a private key is given.") {
		t.Errorf("clearing the only secret: %d %s", r.status, r.body)
	}
	// Renaming onto a taken name is the same 400.
	r = b.do("PATCH", setPath(num(m["id"])), map[string]any{"name": "taken"})
	if r.status != 400 || !strings.Contains(string(r.body), "A credential set with this name already exists.") {
		t.Errorf("rename onto a taken name: %d %s", r.status, r.body)
	}
}

func TestCredentialSetsAreTheOwnersOnly(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("alice", "pw", false)
	e.user("root", "pw", true)
	alice, root := e.browser(), e.browser()
	alice.login("alice", "pw")
	root.login("root", "pw")
	id := num(alice.must(201, "POST", setsPath, map[string]any{"name": "mine", "username": "u", "password": "p"})["id"])
	// Same name for another owner is fine: names are unique per owner.
	root.must(201, "POST", setsPath, map[string]any{"name": "mine", "username": "u", "password": "p"})

	// Not even a superuser sees, changes, regenerates or deletes another user's set.
	if got := root.must(200, "GET", setsPath, nil); got["count"] != float64(1) || num(got["results"].([]any)[0].(map[string]any)["id"]) == id {
		t.Errorf("root's list: %v", got)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", setPath(id)}, {"PATCH", setPath(id)}, {"DELETE", setPath(id)}, {"POST", setPath(id) + "regenerate/"},
	} {
		var body any
		if c.method == "PATCH" {
			body = map[string]any{"name": "stolen"}
		}
		wantDetail(t, root.do(c.method, c.path, body), 404, "Not found.")
	}
	if got := alice.must(200, "GET", setPath(id), nil); got["name"] != "mine" {
		t.Errorf("alice's set changed: %v", got)
	}
	for _, path := range []string{setPath("x"), setPath(0), setPath(id) + "nope/"} {
		if r := alice.do("GET", path, nil); r.status != 404 {
			t.Errorf("GET %s: %d", path, r.status)
		}
	}
}

func TestCredentialSetsRefuseAPITokensAndNeedCSRF(t *testing.T) {
	e := newEnv(t, envOptions{})
	_, token := e.user("alice", "pw", true)
	b := e.browser()
	b.login("alice", "pw")
	id := num(b.must(201, "POST", setsPath, map[string]any{"name": "mine", "username": "u", "password": "p"})["id"])
	routes := []struct{ method, path string }{
		{"GET", setsPath}, {"POST", setsPath}, {"GET", setPath(id)}, {"PATCH", setPath(id)},
		{"DELETE", setPath(id)}, {"POST", setPath(id) + "regenerate/"},
	}
	body := map[string]any{"name": "other", "username": "u", "password": "p"}
	for _, c := range routes {
		// A valid API token, with or without the session beside it, is refused.
		for _, auth := range []string{"Token " + token, "Bearer " + token, "Token nonsense"} {
			wantDetail(t, b.do(c.method, c.path, body, "Authorization", auth), 403, "Credential sets are managed in the web interface only.")
			wantDetail(t, e.browser().do(c.method, c.path, body, "Authorization", auth), 403, "Credential sets are managed in the web interface only.")
		}
		// No session: 401.
		wantDetail(t, e.browser().do(c.method, c.path, body), 401, "Authentication credentials were not provided.")
		if c.method != "GET" {
			wantDetail(t, b.do(c.method, c.path, body, "X-CSRFToken", ""), 403, "CSRF Failed: CSRF token missing or incorrect.")
		}
	}
	if got := b.must(200, "GET", setPath(id), nil); got["name"] != "mine" {
		t.Errorf("a refused request changed the set: %v", got)
	}
	// Nothing about credential sets in the API or its schema.
	r := e.browser().do("GET", "/api/schema/?format=json", nil)
	if r.status != 200 || strings.Contains(strings.ToLower(string(r.body)), "credential-set") || strings.Contains(string(r.body), "/ui/") {
		t.Errorf("schema mentions credential sets or /ui/: %d", r.status)
	}
	for _, path := range []string{"/api/plugins/toolkit/credential-sets/", "/api/plugins/toolkit/device-credential-sets/"} {
		if r := e.browser().do("GET", path, nil, "Authorization", "Token "+token); r.status != 404 {
			t.Errorf("%s: %d", path, r.status)
		}
	}
}

func TestRateLimitStatus(t *testing.T) {
	e := newEnv(t, envOptions{})
	aliceID, token := e.user("alice", "pw", false)
	e.user("bob", "pw", false)
	const now = "2026-01-01T00:00:00.000000Z"
	site := e.exec(`INSERT INTO sites (name, slug, created, last_updated) VALUES ('Lab', 'lab', ?, ?)`, now, now)
	dev := e.exec(`INSERT INTO devices (name, site_id, created, last_updated) VALUES ('sw1', ?, ?, ?)`, site, now, now)
	e.grant(aliceID, store.TypeDevice, "view")
	e.limiter.Seed(dev, e.clock.now(), e.clock.now(), e.clock.now())
	path := fmt.Sprintf("/ui/api/devices/%d/rate-limit/", dev)

	alice := e.browser()
	alice.login("alice", "pw")
	got := alice.must(200, "GET", path, nil)
	want := map[string]any{"device_id": float64(dev), "current_count": float64(3), "limit": float64(3),
		"time_window_minutes": float64(5), "enabled": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if ra := got["retry_after_seconds"].(float64); ra < 1 || ra > 300 {
		t.Errorf("retry_after_seconds %v", ra)
	}

	// Without view on the device it does not exist, nor does an unknown device.
	bob := e.browser()
	bob.login("bob", "pw")
	wantDetail(t, bob.do("GET", path, nil), 404, "Not found.")
	wantDetail(t, alice.do("GET", "/ui/api/devices/999/rate-limit/", nil), 404, "Not found.")
	wantDetail(t, e.browser().do("GET", path, nil), 401, "Authentication credentials were not provided.")
	if r := e.browser().do("GET", path, nil, "Authorization", "Token "+token); r.status != 403 {
		t.Errorf("API token on the rate-limit endpoint: %d %s", r.status, r.body)
	}
}

// The web runner names one of the user's own sets; an API token may not.
func TestSessionExecutesWithCredentialSetID(t *testing.T) {
	x := newXEnv(t)
	_, aliceKey := x.user("alice", "pw", true)
	x.user("bob", "pw2", true)
	alice, bob := x.browser(), x.browser()
	alice.login("alice", "pw")
	bob.login("bob", "pw2")
	set := alice.must(201, "POST", setsPath, map[string]any{"name": "lab", "username": simUser, "password": simPass,
		"enable_secret": simEnable})
	id := num(set["id"])
	path := fmt.Sprintf("/api/plugins/toolkit/commands/%d/execute/", x.command)
	body := map[string]any{"device_id": x.device, "credential_set_id": id}
	if r := alice.do("POST", path, body); r.status != 200 || !strings.Contains(string(r.body), `"success":true`) {
		t.Fatalf("own set by id: %d %s", r.status, r.body)
	}
	if r := bob.do("POST", path, body); r.status != 400 || !strings.Contains(string(r.body), "credential_set_id") {
		t.Fatalf("another user's set by id: %d %s", r.status, r.body)
	}
	api := x.browser()
	r := api.do("POST", path, body, "Authorization", "Token "+aliceKey)
	if r.status != 400 || !strings.Contains(string(r.body), `"credential_set_id":["Unknown field."]`) {
		t.Fatalf("an API token may not name a set: %d %s", r.status, r.body)
	}
	alice.must(200, "PATCH", setPath(id), map[string]any{"is_active": false})
	if r := alice.do("POST", path, body); r.status != 400 || !strings.Contains(string(r.body), "inactive") {
		t.Fatalf("inactive set by id: %d %s", r.status, r.body)
	}
}

// A set's enable mode decides what enable is answered with: a device that asks but has
// no enable password refuses the set's secret and takes an empty line.
func TestCredentialSetEnableMode(t *testing.T) {
	x := newXEnvWith(t, func(c *devsim.Config) { c.EnableSecret, c.EnableEmpty = "", true })
	x.user("alice", "pw", true)
	b := x.browser()
	b.login("alice", "pw")
	created := b.must(201, "POST", setsPath, map[string]any{"name": "lab", "username": simUser, "password": simPass,
		"enable_secret": simEnable})
	id, token := num(created["id"]), created["token"].(string)
	if created["enable_mode"] != "" {
		t.Errorf("default enable_mode %v", created["enable_mode"])
	}
	if r := x.execute(b, token); r.status != 200 || !strings.Contains(string(r.body), "enable refused by the device") {
		t.Fatalf("the secret where none is set: %d %s", r.status, r.body)
	}
	if p := b.must(200, "PATCH", setPath(id), map[string]any{"enable_mode": "none"}); p["enable_mode"] != "none" {
		t.Fatalf("patch: %v", p)
	}
	if r := x.execute(b, token); r.status != 200 || !strings.Contains(string(r.body), `"success":true`) {
		t.Fatalf("enable mode none: %d %s", r.status, r.body)
	}
	r := b.do("PATCH", setPath(id), map[string]any{"enable_mode": "sometimes"})
	if r.status != 400 || !strings.Contains(string(r.body), `"enable_mode":["\"sometimes\" is not a valid choice."]`) {
		t.Errorf("invalid mode: %d %s", r.status, r.body)
	}
	if got := b.must(200, "GET", setPath(id), nil)["enable_mode"]; got != "none" {
		t.Errorf("read back %v", got)
	}
}
