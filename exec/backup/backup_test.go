package backup

import (
	"slices"
	"strings"
	"testing"

	"fieldkit/exec"
)

// Every driver has a row, and every row is a driver's.
func TestEveryDriverHasAProfile(t *testing.T) {
	drivers, rows := exec.Drivers(), Drivers()
	slices.Sort(rows)
	if !slices.Equal(drivers, rows) {
		t.Errorf("drivers %v, profiles %v", drivers, rows)
	}
}

func TestNormalizeIgnoresWhatChangesOnEveryRead(t *testing.T) {
	p := For("cisco_ios", "", nil)
	read := func(clock, drift string) string {
		return "Building configuration...\r\n\r\nCurrent configuration : 1234 bytes\r\n!\r\n! Last configuration change at " + clock +
			" by admin\r\n!\r\nhostname r1   \r\nntp clock-period " + drift + "\r\n!\r\nend\r\n"
	}
	a, b := p.Normalize(read("10:00:00 UTC Mon Mar 4 2024", "17179869")), p.Normalize(read("10:05:00 UTC Mon Mar 4 2024", "17180012"))
	if a != b || a != "!\n!\nhostname r1\n!\nend\n" {
		t.Errorf("normalized reads differ or keep noise:\n%q\n%q", a, b)
	}
	if Lines(a) != 5 {
		t.Errorf("lines: %d", Lines(a))
	}
	// A platform's own rule joins the driver's.
	own, err := ParseIgnore("\n^hostname \n")
	if err != nil {
		t.Fatal(err)
	}
	if got := For("cisco_ios", "", own).Normalize(read("x", "1")); strings.Contains(got, "hostname") {
		t.Errorf("a platform's rule not applied: %q", got)
	}
	if _, err := ParseIgnore("ok\n(unclosed"); err == nil || !strings.HasPrefix(err.Error(), "line 2:") {
		t.Errorf("a bad rule: %v", err)
	}
}

func TestCheckEndMarker(t *testing.T) {
	for _, tt := range []struct {
		driver, text string
		whole        bool
	}{
		{"cisco_ios", "hostname r1\n!\nend\n", true},
		{"cisco_ios", "hostname r1\n!\ninterface Gi1\n", false},
		{"huawei_vrp", "sysname r1\n#\nreturn\n", true},
		{"huawei_vrp", "sysname r1\n#\n", false},
		{"juniper_junos", "system {\n    host-name r1;\n}\n", true},
		{"cisco_asa", "hostname fw1\n: end\n", true},
		{"cisco_nxos", "hostname n1\ninterface Ethernet1/1\n", true}, // NX-OS prints no end marker
	} {
		if err := For(tt.driver, "", nil).Check(tt.text); (err == nil) != tt.whole {
			t.Errorf("%s %q: %v", tt.driver, tt.text, err)
		}
	}
}

func TestMaskSecrets(t *testing.T) {
	p := For("cisco_ios", "", nil)
	for _, tt := range []struct{ line, want string }{
		{"enable secret 9 $9$abcdef", "enable secret 9 " + Mask},
		{"username admin privilege 15 secret 5 $1$xyz", "username admin privilege 15 secret 5 " + Mask},
		{"username admin privilege 15 role network-admin secret sha512 $6$Lx2b", "username admin privilege 15 role network-admin secret sha512 " + Mask},
		{"enable secret sha512 $6$abc", "enable secret sha512 " + Mask},
		{"snmp-server community public RO", "snmp-server community " + Mask + " RO"},
		{" password 7 0822455D0A16", " password 7 " + Mask},
		{"tacacs-server host 10.0.0.1 key 7 1234", "tacacs-server host 10.0.0.1 key 7 " + Mask},
		{" neighbor 10.0.0.2 password s3cret", " neighbor 10.0.0.2 password " + Mask},
		{" key-string 7 ABCD", " key-string 7 " + Mask},
		{`            encrypted-password "$6$abc"; ## SECRET-DATA`, `            encrypted-password ` + Mask + `; ## SECRET-DATA`},
		{" local-user admin password irreversible-cipher $1c$xyz$", " local-user admin password irreversible-cipher " + Mask},
		{"    set password ENC SH2xyz", "    set password " + Mask},
		{"add name=wifi wpa2-pre-shared-key=hunter2 mode=dynamic-keys", "add name=wifi wpa2-pre-shared-key=" + Mask + " mode=dynamic-keys"},
		{"hostname r1", "hostname r1"},
		{"service password-encryption", "service password-encryption"},
	} {
		got, n := p.MaskSecrets(tt.line)
		if got != tt.want || (n > 0) != (got != tt.line) {
			t.Errorf("%q: got %q (%d), want %q", tt.line, got, n, tt.want)
		}
	}
}

func TestForOverridesTheCommand(t *testing.T) {
	if c := For("cisco_ios", "", nil).Command; c != "show running-config" {
		t.Errorf("seeded: %q", c)
	}
	if c := For("cisco_ios", " show running-config all ", nil).Command; c != "show running-config all" {
		t.Errorf("platform's own: %q", c)
	}
	if c := For("no_such_driver", "", nil).Command; c != "show running-config" {
		t.Errorf("unknown driver: %q", c)
	}
	if c := For("linux", "", nil).Command; c != "" {
		t.Errorf("linux has no running configuration: %q", c)
	}
}
