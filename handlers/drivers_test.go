package handlers

import (
	"testing"

	"fieldkit/exec"
)

// A platform must never show one driver and run with another: the API's
// effective_driver is what exec.DriverFor connects with, for aliases, canonical names,
// odd case and hyphens, unknown slugs and explicit drivers alike.
func TestEffectiveDriverMatchesExec(t *testing.T) {
	e := newEnv(t)
	slugs := []string{"ios", "iosxe", "ios-xe", "cisco_xe", "cisco_iosxe", "nxos", "nx-os", "iosxr", "ios_xr", "cisco_xr",
		"eos", "junos", "juniper", "linux", "generic", "cisco_ios", "cisco_nxos", "cisco_iosxr", "arista_eos",
		"juniper_junos", "Cisco-IOS", "vyos", "mikrotik"}
	for i, s := range slugs {
		for j, d := range append([]string{""}, exec.Drivers()...) {
			name := itoa(int64(i)) + "-" + itoa(int64(j))
			m := e.must(201, "POST", pathPlatforms, e.admin, map[string]any{"name": name, "slug": s, "driver": d})
			if got, want := m["effective_driver"], exec.DriverFor(d, s); got != want {
				t.Errorf("driver %q slug %q: API shows %q, exec runs %q", d, s, got, want)
			}
			e.must(204, "DELETE", pathPlatforms+itoa(int64(m["id"].(float64)))+"/", e.admin, nil)
		}
	}
}
