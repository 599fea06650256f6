package platform

import "testing"

func TestNames(t *testing.T) {
	tests := []struct{ in, canonical, driver string }{
		{"cisco-ios", "cisco_ios", "cisco_ios"},
		{"Cisco IOS", "cisco_ios", "cisco_ios"},
		{"  Cisco -- IOS XE\n", "cisco_ios", "cisco_ios"},
		{"IOS-XR", "cisco_xr", "cisco_iosxr"},
		{"cisco_iosxr", "cisco_xr", "cisco_iosxr"},
		{"cisco_xr", "cisco_xr", "cisco_iosxr"},
		{"ruckus-fastiron", "ruckus_fastiron", "brocade_fastiron"},
		{"ruckus-icx", "ruckus_fastiron", "brocade_fastiron"},
		{"icx", "brocade_fastiron", "brocade_fastiron"},
		{"comware", "hp_comware", "hp_comware"},
		{"huawei-vrpv8", "huawei_vrp", "huawei_vrp"},
		{"aruba-os-switch", "hp_procurve", "hp_procurve"},
		{"vyos", "vyos", "vyos"},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := Canonical(tt.in); got != tt.canonical {
			t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.canonical)
		}
		if got := Driver(tt.in); got != tt.driver {
			t.Errorf("Driver(%q) = %q, want %q", tt.in, got, tt.driver)
		}
	}
	for driver, want := range map[string]string{"cisco_iosxr": "cisco_xr", "cisco_ios": "cisco_ios", "linux": "linux", "generic": ""} {
		if got := NTC(driver); got != want {
			t.Errorf("NTC(%q) = %q, want %q", driver, got, want)
		}
	}
}

// The table is read one way only if each alias is written normalised,
// once, and is not itself a canonical name.
func TestNamesTable(t *testing.T) {
	seen := map[string]string{}
	canonical := map[string]bool{}
	for _, n := range names {
		canonical[n.canonical] = true
	}
	for _, n := range names {
		if Normalize(n.canonical) != n.canonical {
			t.Errorf("canonical name %q is not normalised", n.canonical)
		}
		for _, a := range n.aliases {
			if Normalize(a) != a {
				t.Errorf("alias %q of %s is not normalised", a, n.canonical)
			}
			if prev, ok := seen[a]; ok {
				t.Errorf("alias %q of both %s and %s", a, prev, n.canonical)
			}
			if canonical[a] {
				t.Errorf("alias %q of %s is a canonical name", a, n.canonical)
			}
			seen[a] = n.canonical
		}
	}
	for c := range drivers {
		if !canonical[c] {
			t.Errorf("drivers maps %q, which is no canonical name of the table", c)
		}
	}
	for c := range parseOnly {
		if !canonical[c] {
			t.Errorf("parse-only %q is no canonical name of the table", c)
		}
	}
}
