// Package platform is the one home of platform names: how a NetBox
// platform's slug or name is normalised, the aliases it is often given,
// and where FieldKit's driver names differ from the names netmiko and
// ntc-templates use. Package exec chooses a driver from it (DriverFor),
// package exec/textfsm the templates of a device (Platforms); it imports
// neither.
//
// A canonical name is the platform's name in ntc-templates' index, which
// is netmiko's device type for it unless ntc names the platform otherwise
// (netmiko's "cisco_xe" and "huawei_vrpv8" are ntc's cisco_ios and
// huawei_vrp). A FieldKit driver carries the canonical name of its
// platform, except where drivers says otherwise.
package platform

import (
	"maps"
	"strings"
	"unicode"
)

// names lists, for each canonical name, the other names a NetBox platform
// is often given, normalised; one name is an alias of one canonical name
// only. A canonical name is not listed as an alias of itself:
// "cisco_ios", "hp_procurve" and every driver name but cisco_iosxr
// resolve to themselves.
var names = []struct {
	canonical string
	aliases   []string
}{
	{"cisco_ios", []string{"ios", "iosxe", "ios_xe", "cisco_xe", "cisco_iosxe", "cisco_ios_xe"}},
	{"cisco_nxos", []string{"nxos", "nx_os", "cisco_nx_os", "nexus"}},
	{"cisco_xr", []string{"iosxr", "ios_xr", "cisco_iosxr", "cisco_ios_xr"}},
	{"arista_eos", []string{"eos", "arista"}},
	{"juniper_junos", []string{"junos", "juniper"}},
	{"cisco_asa", []string{"asa"}},
	{"hp_procurve", []string{"procurve", "aruba_procurve", "aruba_osswitch", "arubaos_switch", "aruba_os_switch", "aos_s"}},
	{"hp_comware", []string{"comware"}},
	{"aruba_aoscx", []string{"aoscx", "aos_cx", "arubaos_cx", "aruba_cx"}},
	{"dell_os10", []string{"os10", "dellos10", "dell_emc_os10"}},
	{"brocade_fastiron", []string{"fastiron", "icx", "brocade_icx"}},
	{"ruckus_fastiron", []string{"ruckus_icx"}},
	{"huawei_vrp", []string{"huawei", "vrp", "huawei_vrpv8", "vrpv8", "huawei_ce", "huawei_cloudengine"}},
	{"extreme_exos", []string{"exos", "extreme", "extremexos", "xos"}},
	{"fortinet", []string{"fortios", "fortigate", "fortinet_fortios"}},
	{"paloalto_panos", []string{"panos", "pan_os", "paloalto", "palo_alto", "paloalto_pan_os"}},
	{"mikrotik_routeros", []string{"routeros", "mikrotik", "mikrotik_ros"}},
}

// aliases is names read the other way: alias → canonical name.
var aliases = func() map[string]string {
	m := map[string]string{}
	for _, n := range names {
		for _, a := range n.aliases {
			m[a] = n.canonical
		}
	}
	return m
}()

// drivers maps a canonical name to the FieldKit driver that runs it,
// where the two differ: cisco_xr is the platform of the driver
// cisco_iosxr (aliases maps the driver's name back to it), and
// ruckus_fastiron, which has templates of its own in ntc, is driven as
// FastIron.
var drivers = map[string]string{
	"cisco_xr":        "cisco_iosxr",
	"ruckus_fastiron": "brocade_fastiron",
}

// parseOnly lists the canonical names an alias leads to that no FieldKit
// driver runs: such a platform is driven as generic, and its output is
// parsed with ntc's templates for the name.
var parseOnly = map[string]bool{
	"hp_comware": true,
}

// Normalize puts a slug or name in the form the tables use: lower case,
// each run of white space and hyphens one '_', none at either end
// ("Cisco IOS" and "cisco-ios" become "cisco_ios").
func Normalize(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == '-' || unicode.IsSpace(r) })
	return strings.Join(f, "_")
}

// Canonical returns the canonical name of a NetBox platform slug or
// name: its alias ("ios-xe" is cisco_ios), else itself normalised.
func Canonical(s string) string {
	n := Normalize(s)
	if a, ok := aliases[n]; ok {
		return a
	}
	return n
}

// Driver returns the name of the FieldKit driver for a slug or name: the
// driver of its canonical name, which exec checks against the drivers it
// has ("comware" gives hp_comware, which it has not).
func Driver(s string) string {
	c := Canonical(s)
	if d, ok := drivers[c]; ok {
		return d
	}
	return c
}

// NTC returns the canonical name of a FieldKit driver's platform, the
// name its output is parsed under; the generic driver has none.
func NTC(driver string) string {
	c := Canonical(driver)
	if c == "generic" {
		return ""
	}
	return c
}

// ParseOnly reports whether a canonical name is one an alias leads to but
// no FieldKit driver runs.
func ParseOnly(name string) bool { return parseOnly[name] }

// Aliases returns the alias table: normalised slug or name → canonical
// name. The map is a copy.
func Aliases() map[string]string { return maps.Clone(aliases) }
