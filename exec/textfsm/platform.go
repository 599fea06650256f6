package textfsm

import (
	"slices"

	"fieldkit/exec/platform"
)

// Platforms lists the ntc platform names a lookup tries for a device, in
// order: its platform's slug, then its name, each made canonical by
// package platform ("Cisco IOS" and "ios-xe" are cisco_ios), then the
// platform of its driver (cisco_iosxr's is cisco_xr; generic has none).
// Empty and repeated names are left out.
func Platforms(slug, name, driver string) []string {
	var out []string
	for _, p := range []string{platform.Canonical(slug), platform.Canonical(name), platform.NTC(driver)} {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
