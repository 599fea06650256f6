package exec

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"fieldkit/exec/platform"
)

func TestDriverFor(t *testing.T) {
	tests := []struct{ driver, slug, want string }{
		{"arista_eos", "ios", "arista_eos"},
		{"", "ios", "cisco_ios"},
		{"", "iosxe", "cisco_ios"},
		{"", "cisco_xe", "cisco_ios"},
		{"", "cisco-xe", "cisco_ios"},
		{"", "nxos", "cisco_nxos"},
		{"", "iosxr", "cisco_iosxr"},
		{"", "cisco_xr", "cisco_iosxr"},
		{"", "eos", "arista_eos"},
		{"", "junos", "juniper_junos"},
		{"", "cisco_ios", "cisco_ios"},
		{"", "linux", "linux"},
		{"", "Junos", "juniper_junos"},
		{"", "", "generic"},
		{"", "cisco-ios", "cisco_ios"},
		{"", "arista_eos", "arista_eos"},
		{"", "Cisco_IOS", "cisco_ios"},
		{"", "vyos", "generic"},
		{"linux", "ios", "linux"},
		{"generic", "eos", "generic"},
		{"", "asa", "cisco_asa"},
		{"", "cisco-asa", "cisco_asa"},
		{"", "procurve", "hp_procurve"},
		{"", "aruba-osswitch", "hp_procurve"},
		{"", "arubaos-switch", "hp_procurve"},
		{"", "aos-cx", "aruba_aoscx"},
		{"", "aruba-aoscx", "aruba_aoscx"},
		{"", "os10", "dell_os10"},
		{"", "dell-os10", "dell_os10"},
		{"", "fastiron", "brocade_fastiron"},
		{"", "ruckus-fastiron", "brocade_fastiron"},
		{"", "icx", "brocade_fastiron"},
		{"", "huawei", "huawei_vrp"},
		{"", "huawei-vrpv8", "huawei_vrp"},
		{"", "exos", "extreme_exos"},
		{"", "extreme", "extreme_exos"},
		{"", "fortios", "fortinet"},
		{"", "fortigate", "fortinet"},
		{"", "pan-os", "paloalto_panos"},
		{"", "panos", "paloalto_panos"},
		{"", "routeros", "mikrotik_routeros"},
		{"", "mikrotik", "mikrotik_routeros"},
		{"", "nexus", "cisco_nxos"},
		{"", "arista", "arista_eos"},
		{"", "cisco-iosxr", "cisco_iosxr"},
		{"", "ruckus-icx", "brocade_fastiron"},
		{"", "Cisco IOS", "cisco_ios"},
		{"", "comware", "generic"},
	}
	for _, tt := range tests {
		if got := DriverFor(tt.driver, tt.slug); got != tt.want {
			t.Errorf("DriverFor(%q, %q) = %q, want %q", tt.driver, tt.slug, got, tt.want)
		}
	}
}

// Every alias of package platform leads to a driver here, unless its
// platform is marked parse-only there, which then leads to none; every
// driver but generic has its platform, which leads back to the driver.
func TestPlatformNamesReachDrivers(t *testing.T) {
	for alias, name := range platform.Aliases() {
		d := DriverFor("", alias)
		if platform.ParseOnly(name) {
			if d != "generic" {
				t.Errorf("alias %q: %s is marked parse-only but has the driver %s", alias, name, d)
			}
			continue
		}
		if d == "generic" {
			t.Errorf("alias %q: %s names no driver and is not marked parse-only", alias, name)
		}
	}
	for _, d := range Drivers() {
		p := platform.NTC(d)
		if d == "generic" {
			if p != "" {
				t.Errorf("generic has the platform %q", p)
			}
			continue
		}
		if p == "" {
			t.Errorf("driver %s has no platform", d)
		}
		if back := DriverFor("", p); back != d {
			t.Errorf("driver %s: its platform %s infers %s", d, p, back)
		}
	}
}

// TestReadmeListsEveryPlatformAlias holds the README's slug table to
// package platform: every alias has a row, and each slug of a row gives
// the row's driver and ntc platform.
func TestReadmeListsEveryPlatformAlias(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "| slug | driver | ntc platform |\n|---|---|---|\n")
	if !ok {
		t.Fatal("README has no slug table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	row := regexp.MustCompile("^\\| (.+?) \\| `(\\w+)` \\| `(\\w+)`[^|]* \\|$")
	quoted := regexp.MustCompile("`([^`]+)`")
	listed := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("README slug table: cannot read %q", line)
			continue
		}
		for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
			slug := q[1]
			listed[platform.Normalize(slug)] = true
			if d := DriverFor("", slug); d != m[2] {
				t.Errorf("README: slug %s drives %s, not %s", slug, d, m[2])
			}
			if p := platform.Canonical(slug); p != m[3] {
				t.Errorf("README: slug %s is parsed as %s, not %s", slug, p, m[3])
			}
		}
	}
	for alias := range platform.Aliases() {
		if !listed[alias] {
			t.Errorf("README's slug table lacks the alias %s", alias)
		}
	}
}

func TestDrivers(t *testing.T) {
	want := []string{"arista_eos", "aruba_aoscx", "brocade_fastiron", "cisco_asa", "cisco_ios", "cisco_iosxr", "cisco_nxos",
		"dell_os10", "extreme_exos", "fortinet", "generic", "hp_procurve", "huawei_vrp", "juniper_junos", "linux",
		"mikrotik_routeros", "paloalto_panos"}
	if got := Drivers(); !slices.Equal(got, want) {
		t.Errorf("Drivers() = %v", got)
	}
	for _, name := range want {
		d := drivers[name]
		if d.name != name {
			t.Errorf("%s: row named %q", name, d.name)
		}
		for _, p := range d.errors {
			if guidance[p.typ] == "" {
				t.Errorf("%s: no guidance for %s", name, p.typ)
			}
		}
		if !d.exec && (d.prompt == nil || len(d.errors) == 0 || (d.configEnter != "" && d.configMark == nil)) {
			t.Errorf("%s: incomplete shell driver", name)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\x1b[1;32mb\x1b[0m\r\n", "ab\n"},
		{"\x1b]0;title\x07lab-r1#", "lab-r1#"},
		{"abc\b\bX\r\n", "aX\n"},
		{"x\n\b\by", "x\ny"},
		{"\x1b7\x1b[?25lok\x1b8", "ok"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCredentialsNeverPrinted(t *testing.T) {
	c := Credentials{Username: "ops", Password: "pw-Alpha-9", EnableSecret: "en-Bravo-7", PrivateKey: []byte("KEYDATA")}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("login", "creds", c)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("login", "creds", c)
	fmt.Fprintf(&buf, "%v %+v %#v %s", c, c, c, c)
	for _, secret := range []string{"pw-Alpha-9", "en-Bravo-7", "KEYDATA"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("secret %q printed: %s", secret, buf.String())
		}
	}
}

func TestHostKeyErrorMessage(t *testing.T) {
	changed := &HostKeyError{Name: "lab-r1", Host: "192.0.2.1", Expected: "SHA256:aaa", Got: "SHA256:bbb"}
	want := "host key for lab-r1 (192.0.2.1) changed: expected SHA256:aaa, got SHA256:bbb; an administrator must clear the stored key"
	if changed.Error() != want || !errors.Is(changed, ErrHostKeyChanged) || errors.Is(changed, ErrHostKeyUnknown) {
		t.Errorf("changed: %v", changed)
	}
	unknown := &HostKeyError{Name: "lab-r1", Host: "192.0.2.1", Got: "SHA256:bbb"}
	if !errors.Is(unknown, ErrHostKeyUnknown) {
		t.Errorf("unknown: %v", unknown)
	}
}

// Each driver recognises its platform's prompts and tells their modes and
// host name apart.
func TestPromptModes(t *testing.T) {
	tests := []struct {
		driver, prompt string
		priv, config   bool
		base           string // "" where the prompt is not a first prompt
	}{
		{"cisco_ios", "sw1>", false, false, "sw1"},
		{"cisco_ios", "sw1(config-if)#", true, true, ""},
		{"cisco_asa", "fw1/admin> ", false, false, "fw1"},
		{"cisco_asa", "fw1(config)# ", true, true, ""},
		{"hp_procurve", "sw1> ", false, false, "sw1"},
		{"hp_procurve", "sw1(eth-1)# ", true, true, ""},
		{"hp_procurve", "sw1(vlan-10)# ", true, true, ""},
		{"aruba_aoscx", "cx1(config-vlan-10)# ", true, true, ""},
		{"dell_os10", "os10(conf-if-eth1/1/1)# ", true, true, ""},
		{"brocade_fastiron", "SSH@icx1>", false, false, "SSH@icx1"},
		{"brocade_fastiron", "SSH@icx1(config-if-e1000-1/1/1)#", true, true, ""},
		{"huawei_vrp", "<sw-core1>", true, false, "sw-core1"},
		{"huawei_vrp", "[sw-core1-GigabitEthernet0/0/1]", true, true, ""},
		{"huawei_vrp", "[~sw-core1]", true, true, ""},
		{"huawei_vrp", "HRP_M<fw1>", true, false, "HRP_M"},
		{"extreme_exos", "sw1.1 # ", true, false, "sw1"},
		{"extreme_exos", "* Slot-1 stack.15 > ", true, false, "stack"},
	}
	for _, tt := range tests {
		d := drivers[tt.driver]
		p := normalize(tt.prompt)
		if !d.prompt.MatchString(p) || d.isPriv(p) != tt.priv || d.isConfig(p) != tt.config {
			t.Errorf("%s %q: prompt %v, priv %v, config %v", tt.driver, p, d.prompt.MatchString(p), d.isPriv(p), d.isConfig(p))
		}
		if tt.base != "" && d.baseOf(p) != tt.base {
			t.Errorf("%s %q: base %q, want %q", tt.driver, p, d.baseOf(p), tt.base)
		}
	}
	vrp := drivers["huawei_vrp"].commitWhen
	if !vrp.MatchString("[*sw1-Vlanif10]") || vrp.MatchString("[~sw1]") || vrp.MatchString("[sw1]") {
		t.Error("VRP commits only with changes pending")
	}
}

// TestCaptureLastLineAgrees holds the prompt check's last line, taken from the tail's
// last raw line, to the last line of the whole tail normalized, on random terminal
// output: backspaces, lone and paired CRs, NUL, BEL, escapes and pager prompts.
func TestCaptureLastLineAgrees(t *testing.T) {
	pieces := []string{"a", "b", "r1#", " ", "\n", "\r\n", "\r", "\b", "\b\b\b", "\x00", "\a", "--More--",
		"\x1b[7D", "\x1b[K", "\x1b]0;t\nx\x07", "\x1b[1;32m", "line\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		c := &capture{limit: 1 << 20}
		for range rng.IntN(12) {
			c.add([]byte(pieces[rng.IntN(len(pieces))]))
			if got, want := c.lastLine(), lastLine(normalize(string(c.tail))); got != want {
				t.Fatalf("tail %q: last line %q, want %q", c.tail, got, want)
			}
		}
	}
}
