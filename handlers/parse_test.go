package handlers

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// newParseEnv is a server with the built-in templates and an inventory platform named
// as NetBox sites name them.
func newParseEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.api.Exec.TextFSM = textfsmLib
	tkPlatform(t, e.db, "Cisco IOS", "catalyst-9300")
	return e
}

// sample reads one of the built-in templates' samples and the parsed_output it gives.
func sample(t *testing.T, name string) (string, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile("../testdata/textfsm/" + name + ".raw")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("../testdata/textfsm/" + name + ".golden")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(golden, &want); err != nil {
		t.Fatal(err)
	}
	return string(raw), want
}

func TestParseEndpoint(t *testing.T) {
	e := newParseEnv(t)
	out, want := sample(t, "cisco_ios/show_ip_interface_brief")
	noIOS := map[string]any{"success": false, "method": nil, "template": nil, "data": []any{},
		"error": "no template for platform catalyst_9300 and command sh ip int br"}
	for _, tc := range []struct {
		name, platform, command string
		want                    map[string]any
	}{
		{"an ntc platform name", "cisco_ios", "show ip interface brief", want},
		{"an inventory platform's slug, through its name", "catalyst-9300", "sh ip int br", want},
		{"an inventory platform's name, case ignored", "cisco ios", "show ip int brief", want},
		{"no template", "cisco_ios", "show running-config", map[string]any{"success": false, "method": nil, "template": nil,
			"data": []any{}, "error": "no template for platform cisco_ios and command show running-config"}},
		{"a platform nobody has", "catalyst_9300", "sh ip int br", noIOS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := e.must(200, "POST", pathParse, e.admin, map[string]any{"platform": tc.platform, "command": tc.command, "output": out})
			if got := m["parsed_output"]; !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("parsed_output:\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

// TestParseTemplate tries a template sent with the request: its records in its column
// order, a runtime failure reported like a library template's, and a template that does
// not compile refused by name.
func TestParseTemplate(t *testing.T) {
	e := newParseEnv(t)
	tmpl := "Value PORT (\\S+)\nValue VLAN (\\d+)\n\nStart\n  ^${PORT}\\s+${VLAN}\\s*$$ -> Record\n  ^ERR -> Error\n"
	m := e.must(200, "POST", pathParse, e.admin, map[string]any{"template": tmpl, "output": "Gi1 10\nGi2 20\n"})
	want := map[string]any{"success": true, "method": "textfsm", "template": "request", "columns": []any{"port", "vlan"},
		"data": []any{map[string]any{"port": "Gi1", "vlan": "10"}, map[string]any{"port": "Gi2", "vlan": "20"}}}
	if !reflect.DeepEqual(m["parsed_output"], want) {
		t.Fatalf("parsed_output %v", m["parsed_output"])
	}
	m = e.must(200, "POST", pathParse, e.admin, map[string]any{"template": tmpl, "output": "Gi1 10\nERR\n", "platform": "cisco_ios"})
	if p := m["parsed_output"].(map[string]any); p["success"] != false || !strings.HasPrefix(p["error"].(string), "template error: ") {
		t.Fatalf("a template's Error: %v", p)
	}
	m = e.must(400, "POST", pathParse, e.admin, map[string]any{"template": "Value X (\\S+\n\nStart\n  ^${X}\n", "output": ""})
	if msgs, _ := m["template"].([]any); len(msgs) != 1 || !strings.Contains(msgs[0].(string), "request") || len(m) != 1 {
		t.Fatalf("a broken template: %v", m)
	}
}

func TestParseBadInput(t *testing.T) {
	e := newParseEnv(t)
	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"no output", map[string]any{"platform": "cisco_ios", "command": "show version"}, "output"},
		{"no platform", map[string]any{"command": "show version", "output": ""}, "platform"},
		{"a blank command", map[string]any{"platform": "cisco_ios", "command": " ", "output": ""}, "command"},
		{"a platform that is not a string", map[string]any{"platform": 7, "command": "show version", "output": ""}, "platform"},
		{"output null", map[string]any{"platform": "cisco_ios", "command": "show version", "output": nil}, "output"},
		{"an unknown field", map[string]any{"platform": "cisco_ios", "command": "show version", "output": "", "device_id": 1}, "device_id"},
		{"a template too long", map[string]any{"template": strings.Repeat("#", MaxTemplateChars+1), "output": ""}, "template"},
		{"a platform too long", map[string]any{"platform": strings.Repeat("x", maxParsePlatform+1), "command": "show version", "output": ""}, "platform"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := e.must(400, "POST", pathParse, e.admin, tc.body)
			if _, ok := m[tc.field]; !ok || len(m) != 1 {
				t.Fatalf("400 body %v, want an error on %s only", m, tc.field)
			}
		})
	}
	if m := e.must(400, "POST", pathParse, e.admin, "[1]"); m["non_field_errors"] == nil {
		t.Fatalf("a list body: %v", m)
	}
}

// TestParsePermissions: view on commands lets a user parse; no permission is a 403, no
// credentials a 401. Platforms the user may not view are not looked up: their slug is
// read as an ntc platform name, so the answer says nothing of them.
func TestParsePermissions(t *testing.T) {
	e := newParseEnv(t)
	out, want := sample(t, "cisco_ios/show_ip_interface_brief")
	body := map[string]any{"platform": "catalyst-9300", "command": "show ip interface brief", "output": out}
	viewer := e.user("viewer", false)
	nobody := e.user("nobody", false)
	e.grant("viewer", "netbox_toolkit_plugin.command", []string{"view"}, "")
	e.must(401, "POST", pathParse, "", body)
	e.must(403, "POST", pathParse, nobody, body)
	m := e.must(200, "POST", pathParse, viewer, body)
	if p := m["parsed_output"].(map[string]any); p["success"] != false || !strings.Contains(p["error"].(string), "catalyst_9300") {
		t.Fatalf("a platform the viewer may not see was looked up: %v", p)
	}
	e.grant("viewer", "dcim.platform", []string{"view"}, `{"slug": "catalyst-9300"}`)
	if m := e.must(200, "POST", pathParse, viewer, body); !reflect.DeepEqual(m["parsed_output"], want) {
		t.Fatalf("with view on the platform: %v", m["parsed_output"])
	}
}

// TestParseMatchesExecution parses an execution's output through the endpoint, naming
// the device's platform: the parsed_output is the execution's, exactly.
func TestParseMatchesExecution(t *testing.T) {
	x := newXEnv(t, 100)
	tkExec(t, x.db, `UPDATE platforms SET name = 'Lab IOS' WHERE id = ?`, x.iosPlat)
	plat := tkPlatform(t, x.db, "Cisco IOS", "catalyst-9300")
	_, dev := x.device("edge1", "cisco_ios", plat)
	for _, text := range []string{"show version", "show interfaces status", "show vlan brief"} {
		m := x.must(201, "POST", pathCommands, x.admin, map[string]any{"name": text, "command": text,
			"command_type": "show", "platforms": []int64{plat}})
		res := x.must(200, "POST", execPath(int64(m["id"].(float64))), x.admin, map[string]any{"device_id": dev, "credential_token": x.token})
		if res["parsed_output"].(map[string]any)["success"] != true {
			t.Fatalf("%s: the execution did not parse: %v", text, res["parsed_output"])
		}
		p := x.must(200, "POST", pathParse, x.admin, map[string]any{"platform": "Cisco IOS", "command": text, "output": res["output"]})
		if !reflect.DeepEqual(p["parsed_output"], res["parsed_output"]) {
			t.Fatalf("%s: parse gives\n%v\nthe execution gave\n%v", text, p["parsed_output"], res["parsed_output"])
		}
	}
}
