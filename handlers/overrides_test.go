package handlers

import (
	"strings"
	"testing"

	"fieldkit/exec/devsim"
)

// A platform and a device take connect and command timeouts and a prompt pattern,
// validated and read back, and null clears a timeout.
func TestTargetOverrideFields(t *testing.T) {
	x := newXEnv(t, 100)
	for _, path := range []string{pathPlatforms + itoa(x.iosPlat) + "/", pathDevices + itoa(x.iosID) + "/"} {
		t.Run(path, func(t *testing.T) {
			m := x.must(200, "PATCH", path, x.admin, map[string]any{
				"connect_timeout": 12, "command_timeout": 240, "prompt_pattern": `^sw1(\(\S+\))?[>#]\s?$`})
			if m["connect_timeout"] != 12.0 || m["command_timeout"] != 240.0 || m["prompt_pattern"] != `^sw1(\(\S+\))?[>#]\s?$` {
				t.Fatalf("read back: %v", m)
			}
			for _, bad := range []struct {
				field string
				value any
				msg   string
			}{
				{"connect_timeout", 0, "between 1 and 300"},
				{"command_timeout", 301, "between 1 and 300"},
				{"connect_timeout", "ten", ""},
				{"prompt_pattern", "^sw1(", "Enter a valid regular expression: error parsing regexp"},
				{"prompt_pattern", strings.Repeat("x", 201), "no more than 200"},
			} {
				r := x.do("PATCH", path, x.admin, map[string]any{bad.field: bad.value})
				if r.status != 400 || !strings.Contains(string(r.body), bad.field) || !strings.Contains(string(r.body), bad.msg) {
					t.Errorf("%s = %v: %d %s", bad.field, bad.value, r.status, r.body)
				}
			}
			m = x.must(200, "PATCH", path, x.admin, map[string]any{"connect_timeout": nil, "prompt_pattern": ""})
			if m["connect_timeout"] != nil || m["command_timeout"] != 240.0 || m["prompt_pattern"] != "" {
				t.Fatalf("cleared: %v", m)
			}
		})
	}
}

// The device's settings, else its platform's, reach the driver: the connect timeout
// bounds opening, the prompt pattern lets a host name the driver does not expect work,
// the device's pattern wins over the platform's, and the command timeout applies unless
// the request gives its own.
func TestExecuteUsesTargetOverrides(t *testing.T) {
	x := newXEnv(t, 100)
	_, odd := x.deviceWith("core+sw1", "cisco_ios", x.iosPlat, nil)
	cmd := x.command("Version", "show version", "show")
	run := func(dev int64, extra map[string]any) map[string]any {
		body := map[string]any{"device_id": dev, "credential_token": x.token}
		for k, v := range extra {
			body[k] = v
		}
		return x.must(200, "POST", execPath(cmd), x.admin, body)
	}
	devPath, platPath := pathDevices+itoa(odd)+"/", pathPlatforms+itoa(x.iosPlat)+"/"
	x.must(200, "PATCH", devPath, x.admin, map[string]any{"connect_timeout": 2})
	if m := run(odd, nil); m["success"] != false || !strings.HasPrefix(m["error_message"].(string), "Timed out after 2 s logging in to ") {
		t.Fatalf("unexpected host name without a pattern: %v", m)
	}
	x.must(200, "PATCH", platPath, x.admin, map[string]any{"prompt_pattern": `^[\w+]+(\(\S+\))?[>#]\s?$`})
	if m := run(odd, nil); m["success"] != true || !strings.Contains(m["output"].(string), "Cisco IOS Software") {
		t.Fatalf("with the platform's pattern: %v", m)
	}
	x.must(200, "PATCH", devPath, x.admin, map[string]any{"prompt_pattern": `^nothing-like-it#$`})
	if m := run(odd, nil); m["success"] != false || !strings.HasPrefix(m["error_message"].(string), "Timed out after 2 s logging in to ") {
		t.Fatalf("the device's pattern should win: %v", m)
	}

	_, slow := x.deviceWith("slow1", "cisco_ios", x.iosPlat, func(c *devsim.Config) { c.Fault = devsim.FaultSlowOutput })
	x.must(200, "PATCH", pathDevices+itoa(slow)+"/", x.admin, map[string]any{"command_timeout": 1})
	if m := run(slow, nil); m["success"] != false || !strings.HasPrefix(m["error_message"].(string), "Timed out after 1 s running the command on ") {
		t.Fatalf("device command timeout: %v", m)
	}
	if m := run(slow, map[string]any{"timeout": 5}); !strings.HasPrefix(m["error_message"].(string), "Timed out after 5 s running the command on ") {
		t.Fatalf("the request's timeout should win: %v", m)
	}
	b := x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": []any{
		map[string]any{"command_id": cmd, "device_id": slow, "credential_token": x.token}}})
	if e := b["results"].([]any)[0].(map[string]any); !strings.HasPrefix(e["error_message"].(string), "Timed out after 1 s running the command on ") {
		t.Fatalf("bulk step: %v", e)
	}
}
