package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldkit/exec"
	"fieldkit/exec/devsim"
	"fieldkit/exec/ratelimit"
	"fieldkit/exec/textfsm"
	"fieldkit/store"
)

const (
	simUser   = "netops"
	simPass   = "Dev1ce-Passw0rd-XYZ"
	simEnable = "En4ble-Secret-QRS"
)

// xenv is a server wired for execution, with simulated devices.
type xenv struct {
	*env
	kr      *store.Keyring
	limiter *ratelimit.Limiter
	ios     *devsim.Device
	iosID   int64
	iosPlat int64
	token   string // admin's credential token for the set
	setID   int64
}

var textfsmLib = func() *textfsm.Library { l, _ := textfsm.Load("", slog.Default()); return l }()

func newXEnv(t testing.TB, limit int, tune ...func(*ExecOptions)) *xenv {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	kr, _ := store.NewKeyring(bytes.Repeat([]byte{3}, 32))
	logs := &bytes.Buffer{}
	lim := ratelimit.New(limit, 5*time.Minute)
	lim.Configure(ratelimit.Policy{Enabled: true, Limit: limit, Window: 5 * time.Minute, BypassUsers: []string{"robot"}})
	xo := ExecOptions{Keyring: kr, Limiter: lim, TextFSM: textfsmLib, HostKeyPolicy: exec.HostKeyTOFU,
		MaxOutputBytes: 1 << 20, BulkMax: 20, BulkConcurrency: 4}
	for _, f := range tune {
		f(&xo)
	}
	api := New(Options{DB: db, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Version: "test", Exec: xo})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	e := &env{t: t, db: db, api: api, srv: srv, logs: logs}
	e.admin = e.user("admin", true)
	x := &xenv{env: e, kr: kr, limiter: lim}
	x.iosPlat = tkPlatform(t, db, "Cisco IOS", "cisco_ios")
	x.ios, x.iosID = x.device("sw1", "cisco_ios", x.iosPlat)
	x.token, x.setID = x.credSet("admin", "lab", nil)
	return x
}

// device starts a simulated device and registers it in the inventory.
func (x *xenv) device(name, vendor string, platformID int64) (*devsim.Device, int64) {
	return x.deviceWith(name, vendor, platformID, nil)
}

// deviceWith is device with the simulator's configuration adjusted by mod.
func (x *xenv) deviceWith(name, vendor string, platformID int64, mod func(*devsim.Config)) (*devsim.Device, int64) {
	x.t.Helper()
	cfg := devsim.Config{Vendor: vendor, Hostname: name, Username: simUser, Password: simPass, EnableSecret: simEnable,
		Interfaces: []devsim.Interface{{Name: "GigabitEthernet0/1", Enabled: true}, {Name: "GigabitEthernet0/2", Enabled: true}}}
	if mod != nil {
		mod(&cfg)
	}
	d, err := devsim.Start(cfg)
	if err != nil {
		x.t.Fatal(err)
	}
	x.t.Cleanup(func() { d.Close() })
	return d, x.register(name, platformID, d.Port())
}

// register adds a device listening on port of 127.0.0.1 to the inventory.
func (x *xenv) register(name string, platformID int64, port int) int64 {
	x.t.Helper()
	var site int64
	if x.db.Reader().QueryRow(`SELECT id FROM sites WHERE slug = 'lab'`).Scan(&site) != nil {
		site = tkSite(x.t, x.db, "Lab", "lab")
	}
	id := tkExec(x.t, x.db, `INSERT INTO devices (name, site_id, platform_id, custom_fields, created, last_updated) VALUES (?, ?, ?, ?, ?, ?)`,
		name, site, platformID, fmt.Sprintf(`{"ssh_port": %d}`, port), tkNow, tkNow)
	ifc := tkExec(x.t, x.db, `INSERT INTO interfaces (device_id, name, created, last_updated) VALUES (?, 'GigabitEthernet0/1', ?, ?)`, id, tkNow, tkNow)
	tkExec(x.t, x.db, `INSERT INTO interfaces (device_id, name, created, last_updated) VALUES (?, 'GigabitEthernet0/2', ?, ?)`, id, tkNow, tkNow)
	ip := tkExec(x.t, x.db, `INSERT INTO ip_addresses (address, assigned_object_type, assigned_object_id, created, last_updated)
		VALUES ('127.0.0.1/8', 'dcim.interface', ?, ?, ?)`, ifc, tkNow, tkNow)
	tkExec(x.t, x.db, `UPDATE devices SET primary_ip4_id = ? WHERE id = ?`, ip, id)
	return id
}

// credSet makes a credential set owned by username.
func (x *xenv) credSet(username, name string, platforms []int64) (string, int64) {
	x.t.Helper()
	uid, err := x.db.UserIDByName(context.Background(), username)
	if err != nil {
		x.t.Fatal(err)
	}
	in := store.CredentialInput{Name: &name, Username: ptrTo(simUser), Password: ptrTo(simPass), EnableSecret: ptrTo(simEnable)}
	if platforms != nil {
		in.PlatformIDs = &platforms
	}
	id, tok, err := x.db.CreateCredentialSet(context.Background(), x.kr, uid, in)
	if err != nil {
		x.t.Fatal(err)
	}
	return tok, id
}

func ptrTo[T any](v T) *T { return &v }

// command creates a command through the API and returns its id.
func (x *xenv) command(name, text, typ string, vars ...map[string]any) int64 {
	x.t.Helper()
	body := map[string]any{"name": name, "command": text, "command_type": typ, "platforms": []int64{x.iosPlat}}
	if len(vars) > 0 {
		body["variables"] = vars
	}
	m := x.must(201, "POST", pathCommands, x.admin, body)
	return int64(m["id"].(float64))
}

func execPath(id int64) string { return pathCommands + itoa(id) + "/execute/" }

func TestExecuteShowParsesAndLogs(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	m := x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token})
	if m["success"] != true || !strings.Contains(m["output"].(string), "Cisco IOS") || m["error_message"] != "" {
		t.Fatalf("execute: %v", m)
	}
	if strings.Contains(m["output"].(string), "show version") || strings.HasSuffix(strings.TrimSpace(m["output"].(string)), "#") {
		t.Fatalf("echo or prompt left in output: %q", m["output"])
	}
	parsed := m["parsed_output"].(map[string]any)
	if parsed["success"] != true || parsed["method"] != "textfsm" || len(parsed["data"].([]any)) != 1 {
		t.Fatalf("parsed_output: %v", parsed)
	}
	if m["syntax_error"].(map[string]any)["detected"] != false {
		t.Fatalf("syntax_error: %v", m["syntax_error"])
	}
	if cmds := x.ios.Commands(); !contains(cmds, "show version") {
		t.Fatalf("device did not receive the command: %v", cmds)
	}
	logID := int64(m["command_log_id"].(float64))
	l := x.must(200, "GET", pathCommandLogs+itoa(logID)+"/", x.admin, nil)
	if l["success"] != true || l["username"] != "admin" || l["device"].(map[string]any)["name"] != "sw1" {
		t.Fatalf("log: %v", l)
	}
	sets, _ := x.db.CredentialSets(context.Background(), 1)
	if sets[0].LastUsed.IsZero() {
		t.Fatal("credential set last_used not set")
	}
	// the secrets are nowhere: not in the DB file, the WAL, the server log, nor the output
	x.db.Backup(context.Background(), filepath.Join(t.TempDir(), "b.db"))
	for _, f := range []string{x.db.Path(), x.db.Path() + "-wal"} {
		raw, _ := os.ReadFile(f)
		for _, s := range []string{simPass, simEnable, x.token} {
			if bytes.Contains(raw, []byte(s)) {
				t.Fatalf("%s holds a secret", filepath.Base(f))
			}
		}
	}
	for _, s := range []string{simPass, simEnable, x.token} {
		if strings.Contains(x.logs.String(), s) || strings.Contains(m["output"].(string), s) {
			t.Fatal("a secret reached the log or the output")
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestExecuteOrderOfChecks(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Int", "show ip interface brief | include <iface>", "show", map[string]any{"name": "iface", "variable_type": "netbox_interface", "required": true})
	other := tkPlatform(t, x.db, "Junos", "junos")
	_, junosDev := x.device("ex1", "juniper_junos", other)
	noIP := tkDevice(t, x.db, "noip", 1, x.iosPlat)
	bob := x.user("bob", false)
	bobTok, _ := x.credSet("bob", "bob's", nil)
	x.grant("bob", store.TypeCommand, []string{"view"}, "")
	x.grant("bob", store.TypeDevice, []string{"view"}, "")
	inactive, inactiveID := x.credSet("admin", "off", nil)
	active := false
	x.db.UpdateCredentialSet(context.Background(), x.kr, 1, inactiveID, store.CredentialInput{IsActive: &active})
	junosOnly, _ := x.credSet("admin", "junos only", []int64{other})
	good := map[string]any{"device_id": x.iosID, "credential_token": x.token, "variables": map[string]any{"iface": "GigabitEthernet0/1"}}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range good {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name   string
		token  string
		cmd    int64
		body   any
		status int
		key    string
		msg    string
	}{
		{"no auth", "", cmd, good, 401, "detail", ""},
		{"unknown command", x.admin, 9999, good, 404, "detail", ""},
		{"missing device", x.admin, cmd, with("device_id", nil), 400, "device_id", "required"},
		{"timeout too small", x.admin, cmd, with("timeout", 3), 400, "timeout", "between 5 and 300"},
		{"timeout not a number", x.admin, cmd, with("timeout", "thirty"), 400, "timeout", ""},
		{"unknown field", x.admin, cmd, with("password", "x"), 400, "password", "Unknown"},
		{"unknown device", x.admin, cmd, with("device_id", 9999), 400, "device_id", "Device not found."},
		{"platform mismatch", x.admin, cmd, with("device_id", junosDev), 400, "device_id", "platform"},
		{"no primary ip", x.admin, cmd, with("device_id", noIP), 400, "device_id", "primary IP"},
		{"no execute permission", bob, cmd, map[string]any{"device_id": x.iosID, "credential_token": bobTok}, 403, "detail", "You do not have permission to execute show commands."},
		{"malformed token", x.admin, cmd, with("credential_token", "nope"), 400, "credential_token", "Invalid credential token."},
		{"unknown token", x.admin, cmd, with("credential_token", "fkc_"+strings.Repeat("A", 43)), 400, "credential_token", "Invalid credential token."},
		{"another user's token", x.admin, cmd, with("credential_token", bobTok), 400, "credential_token", "Invalid credential token."},
		{"inactive set", x.admin, cmd, with("credential_token", inactive), 400, "credential_token", "inactive"},
		{"platform-restricted set", x.admin, cmd, with("credential_token", junosOnly), 400, "credential_token", "not valid for the device's platform"},
		{"injected newline", x.admin, cmd, with("variables", map[string]any{"iface": "GigabitEthernet0/1\nreload"}), 400, "variables", "Control characters"},
		{"not a device interface", x.admin, cmd, with("variables", map[string]any{"iface": "Gi9/9"}), 400, "variables", "not one of"},
		{"missing required variable", x.admin, cmd, with("variables", nil), 400, "variables", "required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := x.do("POST", execPath(c.cmd), c.token, c.body)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			m := r.json(t)
			if _, ok := m[c.key]; !ok || !strings.Contains(string(r.body), c.msg) {
				t.Fatalf("body %s lacks %s %q", r.body, c.key, c.msg)
			}
		})
	}
	if n := x.logCount(); n != 0 {
		t.Fatalf("rejected executions wrote %d logs", n)
	}
	if len(x.ios.Commands()) != 0 {
		t.Fatalf("a rejected execution reached the device: %v", x.ios.Commands())
	}
	// with execute_show, bob's own token works
	x.grant("bob", store.TypeCommand, []string{"execute_show"}, "")
	m := x.must(200, "POST", execPath(cmd), bob, map[string]any{"device_id": x.iosID, "credential_token": bobTok,
		"variables": map[string]any{"iface": "GigabitEthernet0/1"}})
	if m["success"] != true || !contains(x.ios.Commands(), "show ip interface brief | include GigabitEthernet0/1") {
		t.Fatalf("bob's execution: %v %v", m, x.ios.Commands())
	}
}

func (x *xenv) logCount() int {
	var n int
	x.db.Reader().QueryRow(`SELECT count(*) FROM command_logs`).Scan(&n)
	return n
}

func TestExecuteSyntaxErrorAndConfig(t *testing.T) {
	x := newXEnv(t, 100)
	bad := x.command("Bad", "show bogus thing", "show")
	m := x.must(200, "POST", execPath(bad), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token})
	se := m["syntax_error"].(map[string]any)
	if m["success"] != false || se["detected"] != true || se["type"] != "invalid_input" || se["vendor"] != "cisco_ios" ||
		!strings.HasPrefix(m["error_message"].(string), "Syntax error detected: ") || se["guidance"] == "" {
		t.Fatalf("syntax error: %v", m)
	}
	if p := m["parsed_output"].(map[string]any); p["success"] != false || p["method"] != nil {
		t.Fatalf("a failed show must not be parsed: %v", p)
	}
	cfg := x.command("Describe", "interface GigabitEthernet0/1\n description <desc>", "config", map[string]any{"name": "desc", "variable_type": "text"})
	m = x.must(200, "POST", execPath(cfg), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token,
		"variables": map[string]any{"desc": "uplink to core"}})
	if m["success"] != true || !strings.Contains(x.ios.RunningConfig(), "description uplink to core") {
		t.Fatalf("config: %v\n%s", m, x.ios.RunningConfig())
	}
	// a user with only execute_show may not run it
	x.user("carol", false)
	carolTok, _ := x.credSet("carol", "c", nil)
	x.grant("carol", store.TypeCommand, []string{"view", "execute_show"}, "")
	x.grant("carol", store.TypeDevice, []string{"view"}, "")
	r := x.do("POST", execPath(cfg), x.keyOf("carol"), map[string]any{"device_id": x.iosID, "credential_token": carolTok,
		"variables": map[string]any{"desc": "x"}})
	if r.status != 403 || !strings.Contains(string(r.body), "execute config commands") {
		t.Fatalf("config without execute_config: %d %s", r.status, r.body)
	}
}

// keyOf makes a fresh token for an existing user.
func (x *xenv) keyOf(username string) string {
	uid, _ := x.db.UserIDByName(context.Background(), username)
	_, key, err := x.db.CreateToken(context.Background(), store.TokenInput{UserID: uid, WriteEnabled: true}, store.All)
	if err != nil {
		x.t.Fatal(err)
	}
	return key
}

func TestExecuteTimeoutIsHonoured(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	x.ios.SetFault(devsim.FaultSilence)
	start := time.Now()
	m := x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token, "timeout": 5})
	if took := time.Since(start); took > 6*time.Second {
		t.Fatalf("took %v with a 5 s timeout", took)
	}
	// The silent device never answers the driver's paging command: the login times out.
	f, _ := m["failure"].(map[string]any)
	if m["success"] != false || !strings.HasPrefix(m["error_message"].(string), "Timed out after 5 s logging in to 127.0.0.1 port ") ||
		f["phase"] != "login" || f["reason"] != "timeout" || f["timeout_seconds"] != 5.0 {
		t.Fatalf("timeout result: %v\nreceived %q", m, x.ios.Received())
	}
}

func TestRateLimit(t *testing.T) {
	x := newXEnv(t, 2)
	cmd := x.command("Version", "show version", "show")
	bad := x.command("Bad", "show bogus thing", "show")
	body := map[string]any{"device_id": x.iosID, "credential_token": x.token}
	x.must(200, "POST", execPath(bad), x.admin, body) // failures do not count
	x.must(200, "POST", execPath(cmd), x.admin, body)
	x.must(200, "POST", execPath(cmd), x.admin, body)
	r := x.do("POST", execPath(cmd), x.admin, body)
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("third success: %d %s", r.status, r.body)
	}
	m := r.json(t)
	d := m["details"].(map[string]any)
	if m["error"] != "Rate limit exceeded" || d["current_count"].(float64) != 2 || d["limit"].(float64) != 2 ||
		d["time_window_minutes"].(float64) != 5 || d["reason"] != "Device rate limit exceeded: 2/2 successful commands in the last 5 minutes" {
		t.Fatalf("429 body: %s", r.body)
	}
	// The body says when the next run is possible, as Retry-After does.
	if wait, _ := d["retry_after_seconds"].(float64); wait < 1 || wait > 300 || fmt.Sprint(wait) != r.header.Get("Retry-After") {
		t.Fatalf("retry_after_seconds %v, Retry-After %q", d["retry_after_seconds"], r.header.Get("Retry-After"))
	}
	// a bypass user is not limited
	x.user("robot", true)
	robotTok, _ := x.credSet("robot", "r", nil)
	x.must(200, "POST", execPath(cmd), x.keyOf("robot"), map[string]any{"device_id": x.iosID, "credential_token": robotTok})
}

func TestBulkExecute(t *testing.T) {
	x := newXEnv(t, 100)
	ver := x.command("Version", "show version", "show")
	clk := x.command("Clock", "show clock", "show")
	eos := tkPlatform(t, x.db, "Arista", "eos")
	tkExec(t, x.db, `INSERT INTO command_platforms (command_id, platform_id) VALUES (?, ?)`, ver, eos)
	leaf, leafID := x.device("leaf1", "arista_eos", eos)
	el := func(cmd, dev int64) map[string]any {
		return map[string]any{"command_id": cmd, "device_id": dev, "credential_token": x.token}
	}
	body := map[string]any{"executions": []any{
		el(ver, x.iosID), el(clk, x.iosID), el(ver, leafID),
		map[string]any{"command_id": ver, "device_id": x.iosID, "credential_token": "bogus"},
		map[string]any{"command_id": 999, "device_id": x.iosID, "credential_token": x.token},
		el(ver, x.iosID),
	}}
	m := x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, body)
	res := m["results"].([]any)
	if len(res) != 6 {
		t.Fatalf("results: %v", m)
	}
	for i, want := range []bool{true, true, true, false, false, true} {
		e := res[i].(map[string]any)
		if int(e["execution_id"].(float64)) != i+1 || e["success"] != want {
			t.Fatalf("element %d: %v", i+1, e)
		}
	}
	rej := res[3].(map[string]any)
	if rej["command_log_id"] != nil || rej["execution_time"] != nil || rej["error"] != "Invalid credential token." ||
		rej["details"].(map[string]any)["credential_token"] == nil {
		t.Fatalf("rejected element: %v", rej)
	}
	if res[4].(map[string]any)["error"] != "Command not found." {
		t.Fatalf("unknown command element: %v", res[4])
	}
	if s := m["summary"].(map[string]any); s["total"].(float64) != 6 || s["successful"].(float64) != 4 || s["failed"].(float64) != 2 {
		t.Fatalf("summary: %v", s)
	}
	// same device, same credentials: one session, in request order
	got := x.ios.Commands()
	want := []string{"show version", "show clock", "show version"}
	var seen []string
	for _, c := range got {
		if contains(want, c) {
			seen = append(seen, c)
		}
	}
	if strings.Join(seen, "|") != strings.Join(want, "|") || x.ios.Logins() != 1 {
		t.Fatalf("device saw %v over %d logins", got, x.ios.Logins())
	}
	if !contains(leaf.Commands(), "show version") || x.logCount() != 4 {
		t.Fatalf("leaf: %v, logs %d", leaf.Commands(), x.logCount())
	}
	for _, b := range []any{map[string]any{"executions": []any{}}, map[string]any{}, map[string]any{"executions": "x"},
		map[string]any{"executions": make([]any, 21)}} {
		if r := x.do("POST", pathCommands+"bulk-execute/", x.admin, b); r.status != 400 || !strings.Contains(string(r.body), "executions") {
			t.Fatalf("bad bulk body %v: %d %s", b, r.status, r.body)
		}
	}
}

// TestBulkExecuteInclude: on request each element carries its device, output, parsed
// output and error as execute answers them, so a script needs no call per device; a
// rejected element has them null (its device as far as it was found) and its reason as
// a sentence. Without "include" the elements are the seed's.
func TestBulkExecuteInclude(t *testing.T) {
	x := newXEnv(t, 100)
	ver := x.command("Version", "show version", "show")
	bad := x.command("Bad", "show bogus thing", "show")
	el := func(cmd, dev int64, token string) map[string]any {
		return map[string]any{"command_id": cmd, "device_id": dev, "credential_token": token}
	}
	execs := []any{el(ver, x.iosID, x.token), el(bad, x.iosID, x.token), el(ver, x.iosID, "bogus"), el(ver, 999999, x.token)}
	m := x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": execs,
		"include": []string{"device", "output", "parsed_output", "error"}})
	res := m["results"].([]any)
	ok, syntax, token, nodev := res[0].(map[string]any), res[1].(map[string]any), res[2].(map[string]any), res[3].(map[string]any)
	name := x.must(200, "GET", pathDevices+itoa(x.iosID)+"/", x.admin, nil)["name"]
	logged := x.must(200, "GET", logPath+fmt.Sprint(ok["command_log_id"])+"/", x.admin, nil)
	if ok["success"] != true || ok["output"] != logged["output"] || !strings.Contains(fmt.Sprint(ok["output"]), "Cisco IOS") ||
		ok["device"].(map[string]any)["name"] != name || ok["failure"] != nil || ok["error_message"] != "" {
		t.Errorf("a success: %v", ok)
	}
	if p, _ := ok["parsed_output"].(map[string]any); p["success"] != true || len(p["data"].([]any)) != 1 {
		t.Errorf("a success's parsed output: %v", ok["parsed_output"])
	}
	if se, _ := syntax["syntax_error"].(map[string]any); syntax["success"] != false || se["detected"] != true ||
		syntax["parsed_output"].(map[string]any)["success"] != false || syntax["output"] == nil {
		t.Errorf("a syntax error: %v", syntax)
	}
	if token["output"] != nil || token["parsed_output"] != nil || token["failure"] != nil || token["error"] != "Invalid credential token." ||
		token["device"].(map[string]any)["name"] != name || !strings.HasPrefix(fmt.Sprint(token["error_message"]), "Invalid credential token: credential_token: ") {
		t.Errorf("a rejected token: %v", token)
	}
	if d := nodev["device"].(map[string]any); d["id"] != 999999.0 || d["name"] != nil || nodev["error_message"] == "" {
		t.Errorf("an unknown device: %v", nodev)
	}
	plain := x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": execs[:1]})
	if e := plain["results"].([]any)[0].(map[string]any); len(e) != 5 {
		t.Errorf("without include, the seed's five fields: %v", e)
	}
	for _, inc := range []any{"output", []string{"output", "stdout"}} {
		r := x.do("POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": execs[:1], "include": inc})
		if r.status != 400 || !strings.Contains(string(r.body), `"include"`) || !strings.Contains(string(r.body), "device, output, parsed_output, error") {
			t.Errorf("include %v: %d %s", inc, r.status, r.body)
		}
	}
}

func TestVariableChoicesAndValidate(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Int", "show interfaces <iface> <note>", "show",
		map[string]any{"name": "iface", "variable_type": "inventory_interface", "help_text": "pick one"},
		map[string]any{"name": "note", "variable_type": "text", "required": false, "default_value": "brief"})
	m := x.must(200, "GET", pathCommands+itoa(cmd)+"/variable-choices/?device_id="+itoa(x.iosID), x.admin, nil)
	v := m["variables"].(map[string]any)
	iface := v["iface"].(map[string]any)
	ch := iface["choices"].([]any)
	if m["device_id"].(float64) != float64(x.iosID) || m["device_name"] != "sw1" || len(ch) != 2 ||
		ch[0].(map[string]any)["value"] != "GigabitEthernet0/1" || ch[0].(map[string]any)["enabled"] != true ||
		iface["help_text"] != "pick one" || len(v["note"].(map[string]any)["choices"].([]any)) != 0 {
		t.Fatalf("choices: %v", m)
	}
	x.must(400, "GET", pathCommands+itoa(cmd)+"/variable-choices/", x.admin, nil)
	x.must(400, "GET", pathCommands+itoa(cmd)+"/variable-choices/?device_id=x", x.admin, nil)
	x.must(404, "GET", pathCommands+itoa(cmd)+"/variable-choices/?device_id=999", x.admin, nil)
	ok := x.must(200, "POST", pathCommands+itoa(cmd)+"/validate-variables/", x.admin,
		map[string]any{"device_id": x.iosID, "variables": map[string]any{"iface": "GigabitEthernet0/2"}})
	if ok["valid"] != true || ok["command"] != "show interfaces GigabitEthernet0/2 brief" {
		t.Fatalf("validate: %v", ok)
	}
	bad := x.must(400, "POST", pathCommands+itoa(cmd)+"/validate-variables/", x.admin,
		map[string]any{"device_id": x.iosID, "variables": map[string]any{"iface": "Gi0/9"}})
	if bad["variables"].(map[string]any)["iface"] == nil {
		t.Fatalf("validate errors: %v", bad)
	}
	if len(x.ios.Commands()) != 0 || x.logCount() != 0 {
		t.Fatal("validate-variables must not contact the device or log")
	}
}

// TestExecuteParsesByPlatformName runs show version on devices whose
// platform is named as NetBox sites name them: a slug no driver knows,
// and a name ("Cisco IOS") that is an ntc platform. A slug such as
// "cisco-ios-xe-17" reaches the IOS templates by itself (index platforms
// match at the start, as clitable matches them); "catalyst-9300" does
// not, and the name alone selects the template.
func TestExecuteParsesByPlatformName(t *testing.T) {
	x := newXEnv(t, 100)
	tkExec(t, x.db, `UPDATE platforms SET name = 'Lab IOS' WHERE id = ?`, x.iosPlat)
	for i, p := range []struct{ slug, name string }{{"cisco-ios-xe-17", "Cisco IOS XE"}, {"catalyst-9300", "Cisco IOS"}} {
		slug := p.slug
		t.Run(slug, func(t *testing.T) {
			plat := tkPlatform(t, x.db, p.name, slug)
			_, dev := x.device("edge"+itoa(int64(i)), "cisco_ios", plat)
			m := x.must(201, "POST", pathCommands, x.admin, map[string]any{"name": "Version " + slug, "command": "show version",
				"command_type": "show", "platforms": []int64{plat}})
			res := x.must(200, "POST", execPath(int64(m["id"].(float64))), x.admin, map[string]any{"device_id": dev, "credential_token": x.token})
			parsed := res["parsed_output"].(map[string]any)
			if res["success"] != true || parsed["success"] != true || parsed["template"] != "builtin/cisco_ios_show_version.textfsm" {
				t.Fatalf("execute: success %v, parsed_output %v", res["success"], parsed)
			}
			if rec := parsed["data"].([]any)[0].(map[string]any); rec["hostname"] != "edge"+itoa(int64(i)) {
				t.Fatalf("record: %v", rec)
			}
		})
	}
}

// A failed execution answers, and logs, its failure in plain words (phase, address and
// port, login user, credential set, what to check), with the parts in failure, never a
// secret nor an internal prefix; the log keeps the same words and parts.
func TestExecuteFailureInPlainWords(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	uid, _ := x.db.UserIDByName(context.Background(), "admin")
	wrong := "Wrong-" + simPass
	_, tok, err := x.db.CreateCredentialSet(context.Background(), x.kr, uid, store.CredentialInput{Name: ptrTo("typo set"),
		Username: ptrTo(simUser), Password: &wrong})
	if err != nil {
		t.Fatal(err)
	}
	m := x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": tok})
	msg, _ := m["error_message"].(string)
	port := x.ios.Port()
	want := fmt.Sprintf("The device at 127.0.0.1 port %d refused the login as %s (credential set “typo set”). Check the username, password or key in the credential set.", port, simUser)
	if m["success"] != false || msg != want {
		t.Fatalf("error_message %q, want %q", msg, want)
	}
	f := m["failure"].(map[string]any)
	if f["phase"] != "login" || f["reason"] != "auth" || f["address"] != "127.0.0.1" || f["port"] != float64(port) ||
		f["username"] != simUser || f["credential_set"] != "typo set" {
		t.Errorf("failure %v", f)
	}
	if strings.Contains(string(must(json.Marshal(m))), wrong) || strings.Contains(x.logs.String(), wrong) {
		t.Error("the password is in the answer or the server log")
	}
	l := x.must(200, "GET", pathCommandLogs+itoa(int64(m["command_log_id"].(float64)))+"/", x.admin, nil)
	if l["error_message"] != want || fmt.Sprint(l["failure"]) != fmt.Sprint(f) {
		t.Errorf("log: %q %v", l["error_message"], l["failure"])
	}

	x.ios.Close()
	m = x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token})
	msg, _ = m["error_message"].(string)
	if !strings.HasPrefix(msg, fmt.Sprintf("Could not connect to 127.0.0.1 port %d: the connection was refused.", port)) ||
		strings.Contains(msg, "exec:") || strings.Contains(msg, "dial tcp") {
		t.Errorf("refused: %q", msg)
	}
	if f := m["failure"].(map[string]any); f["phase"] != "connect" || f["reason"] != "refused" || f["credential_set"] != "lab" {
		t.Errorf("refused failure %v", f)
	}
	ok := x.must(200, "GET", pathCommandLogs+"?success=false&limit=50", x.admin, nil)
	for _, r := range ok["results"].([]any) {
		if r.(map[string]any)["failure"] == nil {
			t.Errorf("a failed log without its failure: %v", r)
		}
	}
}
