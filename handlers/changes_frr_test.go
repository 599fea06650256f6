package handlers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldkit/exec/textfsm"
	"fieldkit/store"
)

// frrEnv is an execution environment whose device "frr1" is the real FRR peer (vtysh
// as an IOS-style CLI), with admin's credential set for it and templates that parse
// FRR's static routes by network (a Key value).
type frrEnv struct {
	*xenv
	dev   int64
	token string
}

func newFRREnv(t *testing.T) *frrEnv {
	host, port, user, password := frrPeer(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index"), []byte("Template, Hostname, Platform, Command\n\n"+
		"frr_show_ip_route_static.textfsm, .*, cisco_ios, sh[[ow]] ip ro[[ute]] static\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "frr_show_ip_route_static.textfsm"), []byte(
		"Value PROTOCOL (\\S+)\nValue Key NETWORK (\\d+\\.\\d+\\.\\d+\\.\\d+/\\d+)\nValue NEXTHOP (.+?)\n\n"+
			"Start\n  ^${PROTOCOL}\\s+${NETWORK}\\s+\\[\\d+/\\d+\\]\\s+${NEXTHOP},\\s+weight -> Record\n"), 0o600)
	lib, errs := textfsm.Load(dir, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	x := newXEnv(t, 100, func(o *ExecOptions) { o.TextFSM = lib })
	f := &frrEnv{xenv: x, dev: x.peerDevice("frr1", "cisco_ios", host, port)}
	uid, err := x.db.UserIDByName(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	name := "frr"
	if _, f.token, err = x.db.CreateCredentialSet(context.Background(), x.kr, uid,
		store.CredentialInput{Name: &name, Username: &user, Password: &password}); err != nil {
		t.Fatal(err)
	}
	return f
}

// run executes a command on the FRR peer and fails the test unless it succeeded.
func (f *frrEnv) run(cmd int64) map[string]any {
	f.t.Helper()
	m := f.must(200, "POST", execPath(cmd), f.admin, map[string]any{"device_id": f.dev, "credential_token": f.token})
	if m["success"] != true {
		f.t.Fatalf("execute %d on FRR: %v", cmd, m)
	}
	return m
}

// change runs a config change on FRR and puts it back when the test ends, so that
// the peer is left as it was found.
func (f *frrEnv) change(name, lines, undo string) int64 {
	f.t.Helper()
	cmd := f.command(name, lines, "config")
	back := f.command(name+" (undo)", undo, "config")
	f.t.Cleanup(func() {
		m := f.must(200, "POST", execPath(back), f.admin, map[string]any{"device_id": f.dev, "credential_token": f.token})
		if m["success"] != true {
			f.t.Errorf("putting FRR back (%s): %v", undo, m)
		}
	})
	f.run(cmd)
	return cmd
}

// TestLogDiffOnRealFRR compares FRR's static routes before and after a config command
// adds one: the unified diff shows the route and records.added holds it by network.
func TestLogDiffOnRealFRR(t *testing.T) {
	f := newFRREnv(t)
	routes := f.command("Static routes", "show ip route static", "show")
	before := f.run(routes)
	if p := before["parsed_output"].(map[string]any); p["success"] != true || len(p["data"].([]any)) == 0 {
		t.Fatalf("FRR's static routes did not parse: %v\n%s", p, before["output"])
	}
	f.change("Blackhole", "ip route 198.18.5.0/24 blackhole", "no ip route 198.18.5.0/24 blackhole")
	after := logID(f.run(routes))

	d := f.must(200, "GET", pathCommandLogs+itoa(after)+"/diff/?against=previous", f.admin, nil)
	if int64(d["from"].(map[string]any)["id"].(float64)) != logID(before) {
		t.Errorf("previous: %v", d["from"])
	}
	if !strings.Contains(d["unified"].(string), "\n+S>* 198.18.5.0/24") {
		t.Errorf("unified diff lacks the route:\n%s", d["unified"])
	}
	added := d["records"].(map[string]any)["added"].([]any)
	if len(added) != 1 || added[0].(map[string]any)["network"] != "198.18.5.0/24" {
		t.Errorf("records: %v", d["records"])
	}
}

// TestConfigVersionsOnRealFRR backs up a real vtysh: two reads with nothing changed
// but an ignored line keep one version; a config command between two reads makes a
// version attributed to it; descriptions flipping back are marked oscillating; a read
// without its end marker is quarantined; the raw text is refused without its
// permission. Every change is put back.
func TestConfigVersionsOnRealFRR(t *testing.T) {
	f := newFRREnv(t)
	first := f.collect(f.admin, f.token, f.dev)[0]
	if first["status"] != "stored" {
		t.Fatalf("first backup of FRR: %v", first)
	}
	v1 := f.must(200, "GET", pathConfigVers+itoa(n64(first["version_id"]))+"/", f.admin, nil)
	if text := v1["text"].(string); !strings.Contains(text, "hostname ") || strings.Contains(text, "Building configuration") ||
		!strings.HasSuffix(text, "\nend\n") {
		t.Errorf("FRR's configuration as kept:\n%s", text)
	}

	// Nothing changed: the same version, confirmed.
	if r := f.collect(f.admin, f.token, f.dev)[0]; r["status"] != "unchanged" || n64(r["version_id"]) != n64(first["version_id"]) {
		t.Errorf("a second read of an unchanged FRR: %v", r)
	}
	// Only a line the platform ignores changes: still one version (the rule itself
	// changes what is kept, once).
	f.must(200, "PATCH", pathPlatforms+itoa(f.iosPlat)+"/", f.admin, map[string]any{"config_ignore": "^ description "})
	base := f.collect(f.admin, f.token, f.dev)[0]
	f.change("Noise on lo", "interface lo\n description fk-noise-1", "interface lo\n description loopback")
	if r := f.collect(f.admin, f.token, f.dev)[0]; r["status"] != "unchanged" || n64(r["version_id"]) != n64(base["version_id"]) {
		t.Errorf("only an ignored line changed: %v (baseline %v)", r, base)
	}
	f.must(200, "PATCH", pathPlatforms+itoa(f.iosPlat)+"/", f.admin, map[string]any{"config_ignore": ""})

	// A config command between two reads, then two more flipping the description back.
	describe := func(desc string) map[string]any {
		f.change("lo "+desc, "interface lo\n description "+desc, "interface lo\n description loopback")
		r := f.collect(f.admin, f.token, f.dev)[0]
		if r["status"] != "stored" {
			t.Fatalf("after describing lo as %s: %v", desc, r)
		}
		return f.must(200, "GET", pathConfigVers+itoa(n64(r["version_id"]))+"/", f.admin, nil)
	}
	a := describe("fk41-a")
	changes := a["changes"].([]any)
	last := changes[len(changes)-1].(map[string]any)
	if a["changed_outside"] != false || last["sent_command"] != "interface lo\n description fk41-a" || last["username"] != "admin" {
		t.Errorf("a version after a config command: changes %v", a["changes"])
	}
	b := describe("fk41-b")
	back := describe("fk41-a")
	if b["oscillating"] != false || back["oscillating"] != true || back["hash"] != a["hash"] {
		t.Errorf("a flip back on FRR: b %v, back %v", b["oscillating"], back["oscillating"])
	}

	// A read without its end marker: every line but "end".
	f.must(200, "PATCH", pathPlatforms+itoa(f.iosPlat)+"/", f.admin, map[string]any{"config_command": "show running-config | include ^[^e]|^ex"})
	cut := f.collect(f.admin, f.token, f.dev)[0]
	f.must(200, "PATCH", pathPlatforms+itoa(f.iosPlat)+"/", f.admin, map[string]any{"config_command": ""})
	if cut["status"] != "quarantined" || !strings.Contains(cut["reason"].(string), "end marker") {
		t.Errorf("a read without its end marker: %v", cut)
	}

	viewer := f.user("viewer", false)
	f.grant("viewer", "netbox_toolkit_plugin.configversion", []string{"view"}, "")
	if r := f.do("GET", pathConfigVers+itoa(n64(first["version_id"]))+"/raw/", viewer, nil); r.status != 403 {
		t.Errorf("FRR's raw configuration without view_raw_config: %d", r.status)
	}
}
