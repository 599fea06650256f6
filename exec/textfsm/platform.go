package textfsm

import (
	"slices"
	"strings"
)

// platformAliases maps the short and vendor names a NetBox platform is
// often given, once normalised, to the ntc-templates platform name. ntc
// calls IOS-XR "cisco_xr" (netmiko's name), which the FieldKit driver
// cisco_iosxr maps to as well.
var platformAliases = map[string]string{
	"ios": "cisco_ios", "iosxe": "cisco_ios", "ios_xe": "cisco_ios", "cisco_xe": "cisco_ios",
	"cisco_iosxe": "cisco_ios", "cisco_ios_xe": "cisco_ios",
	"nxos": "cisco_nxos", "nx_os": "cisco_nxos", "nexus": "cisco_nxos", "cisco_nx_os": "cisco_nxos",
	"iosxr": "cisco_xr", "ios_xr": "cisco_xr", "cisco_iosxr": "cisco_xr", "cisco_ios_xr": "cisco_xr",
	"asa": "cisco_asa",
	"eos": "arista_eos", "arista": "arista_eos",
	"junos": "juniper_junos", "juniper": "juniper_junos",
	"procurve": "hp_procurve", "comware": "hp_comware", "aoscx": "aruba_aoscx", "aruba_cx": "aruba_aoscx",
	"huawei": "huawei_vrp", "vrp": "huawei_vrp",
	"fortios": "fortinet", "panos": "paloalto_panos", "routeros": "mikrotik_routeros", "mikrotik": "mikrotik_routeros",
}

// NormalizePlatform turns a NetBox platform slug or name into an ntc
// platform name: lower case, runs of spaces and hyphens made one '_'
// ("Cisco IOS" and "cisco-ios" become "cisco_ios"), then the aliases
// above ("ios-xe" becomes "cisco_ios").
func NormalizePlatform(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == '-' || r == '\t' })
	n := strings.Join(f, "_")
	if a, ok := platformAliases[n]; ok {
		return a
	}
	return n
}

// DriverPlatform is the ntc platform name of a FieldKit driver; the
// generic driver has none.
func DriverPlatform(driver string) string {
	n := NormalizePlatform(driver)
	if n == "generic" {
		return ""
	}
	return n
}

// Platforms lists the ntc platform names a lookup tries for a device, in
// order: its platform's slug, then its name, each normalised, then the
// ntc platform of its driver. Empty and repeated names are left out.
func Platforms(slug, name, driver string) []string {
	var out []string
	for _, p := range []string{NormalizePlatform(slug), NormalizePlatform(name), DriverPlatform(driver)} {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
