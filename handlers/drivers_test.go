package handlers

import (
	"testing"

	"fieldkit/exec"
	"fieldkit/store"
)

// The platform API shows store.EffectiveDriver; exec connects with exec.DriverFor. A
// platform must never show one driver and run with another.
func TestEffectiveDriverMatchesExec(t *testing.T) {
	slugs := []string{"ios", "iosxe", "ios-xe", "cisco_xe", "cisco_iosxe", "nxos", "nx-os", "iosxr", "ios_xr", "cisco_xr",
		"eos", "junos", "juniper", "linux", "generic", "cisco_ios", "cisco_nxos", "cisco_iosxr", "arista_eos",
		"juniper_junos", "Cisco-IOS", "vyos", "", "mikrotik"}
	for _, s := range slugs {
		for _, d := range append([]string{""}, store.Drivers...) {
			if got, want := store.EffectiveDriver(d, s), exec.DriverFor(d, s); got != want {
				t.Errorf("driver %q slug %q: store says %q, exec runs %q", d, s, got, want)
			}
		}
	}
}
