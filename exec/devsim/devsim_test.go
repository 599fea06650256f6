package devsim

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func TestPromptsAndErrors(t *testing.T) {
	tests := []struct {
		vendor, prompt string
		line, want     string
	}{
		{"cisco_ios", `sw1#$`, "show foo", "\r\n         ^\r\n% Invalid input detected at '^' marker.\r\n\r\nsw1#"},
		{"cisco_ios", `sw1#$`, "show", "% Incomplete command.\r\n\r\nsw1#"},
		{"cisco_ios", `sw1#$`, "s", "% Ambiguous command:  \"s\"\r\nsw1#"},
		{"cisco_nxos", `n9k1# $`, "show foo", "\r\n           ^\r\n% Invalid command at '^' marker.\r\nn9k1# "},
		{"cisco_nxos", `n9k1# $`, "show", "% Incomplete command at '^' marker.\r\n"},
		{"arista_eos", `leaf1#$`, "show foo", "show foo\r\n% Invalid input\r\nleaf1#"},
		{"arista_eos", `leaf1#$`, "show", "% Incomplete command\r\n"},
		{"arista_eos", `leaf1#$`, "s", "% Ambiguous command\r\n"},
		{"cisco_iosxr", `RP/0/RSP0/CPU0:xr1#$`, "show foo", "                        ^\r\n% Invalid input detected at '^' marker.\r\nRP/0/RSP0/CPU0:xr1#"},
		{"juniper_junos", `admin@ex1> $`, "show foo", "                ^\r\nsyntax error, expecting <command>: foo\r\n"},
		{"juniper_junos", `admin@ex1> $`, "foo", "           ^\r\nunknown command.\r\n"},
		{"juniper_junos", `admin@ex1> $`, "s", "'s' is ambiguous.\r\nPossible completions:\r\n"},
		{"linux", `admin@srv1:~\$ $`, "foo", "bash: foo: command not found\r\n"},
		{"generic", `device1\$ $`, "foo", "% Unknown command: foo\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.vendor+"/"+tt.line, func(t *testing.T) {
			d := startDevice(t, Config{Vendor: tt.vendor})
			tm := shell(t, d)
			tm.expect(tt.prompt)
			if out := tm.cmd(tt.line, tt.prompt); !strings.Contains(out, tt.want) {
				t.Errorf("%q: got %q, want it to contain %q", tt.line, out, tt.want)
			}
		})
	}
}

func TestShowOutputsFollowConfig(t *testing.T) {
	ifs := []Interface{{Name: "GigabitEthernet0/1", Description: "to-fw", Enabled: true, IP: "10.1.2.3/24"}}
	tests := []struct {
		vendor, prompt, line, want string
	}{
		{"cisco_ios", `#$`, "sh ip int br", "GigabitEthernet0/1     10.1.2.3        YES NVRAM  up                    up"},
		{"cisco_ios", `#$`, "show interfaces status", "Gi0/1     to-fw              connected    routed"},
		{"cisco_ios", `#$`, "show vlan brief", "42   LAB                              active"},
		{"cisco_ios", `#$`, "show ip arp", "Internet  10.1.2.3                -   0050.56a1.0001  ARPA   GigabitEthernet0/1"},
		{"arista_eos", `#$`, "show vlan", "42    LAB                              active"},
		{"cisco_nxos", `# $`, "show vlan brief", "42   LAB"},
		{"cisco_ios", `#$`, "show clock", "*09:12:45.913 UTC Tue Mar 5 2024"},
		{"cisco_iosxr", `#$`, "show ipv4 interface brief", "Tue Mar  5 09:12:45.913 UTC\r\n"},
	}
	at := time.Date(2024, 3, 5, 9, 12, 45, 913e6, time.UTC)
	for _, tt := range tests {
		t.Run(tt.vendor+"/"+tt.line, func(t *testing.T) {
			d := startDevice(t, Config{Vendor: tt.vendor, Interfaces: ifs, VLANs: []VLAN{{1, "default"}, {42, "LAB"}},
				Clock: func() time.Time { return at }})
			tm := shell(t, d)
			tm.expect(tt.prompt)
			if out := tm.cmd(tt.line, tt.prompt); !strings.Contains(out, tt.want) {
				t.Errorf("got %q, want it to contain %q", out, tt.want)
			}
		})
	}
}

func TestEnable(t *testing.T) {
	tests := []struct {
		vendor, user, priv, denied string
		tries                      int
	}{
		{"cisco_ios", `sw1>$`, `sw1#$`, "% Bad secrets", 3},
		{"arista_eos", `leaf1>$`, `leaf1#$`, "% Access denied", 1},
		{"cisco_nxos", `n9k1> $`, `n9k1# $`, "% Access denied", 1},
	}
	for _, tt := range tests {
		t.Run(tt.vendor, func(t *testing.T) {
			d := startDevice(t, Config{Vendor: tt.vendor, EnableSecret: "en-s3cret"})
			tm := shell(t, d)
			tm.expect(tt.user)
			tm.cmd("enable", `Password: $`)
			for i := 1; i < tt.tries; i++ {
				tm.cmd("wrong", `Password: $`)
			}
			if out := tm.cmd("wrong", tt.user); !strings.Contains(out, tt.denied) {
				t.Errorf("wrong secret: got %q, want %q", out, tt.denied)
			}
			tm.cmd("enable", `Password: $`)
			out := tm.cmd("en-s3cret", tt.priv)
			if strings.Contains(out, "en-s3cret") {
				t.Errorf("secret echoed: %q", out)
			}
			for _, c := range d.Commands() {
				if strings.Contains(c, "s3cret") || c == "wrong" {
					t.Errorf("Commands() holds a secret: %q", d.Commands())
				}
			}
		})
	}
}

func TestUnprivilegedCommands(t *testing.T) {
	tests := []struct{ vendor, prompt, want string }{
		{"cisco_ios", `sw1>$`, "     ^\r\n% Invalid input detected at '^' marker."},
		{"arista_eos", `leaf1>$`, "% Invalid input (privileged mode required)"},
		{"cisco_nxos", `n9k1> $`, "% Permission denied for the role"},
	}
	for _, tt := range tests {
		t.Run(tt.vendor, func(t *testing.T) {
			d := startDevice(t, Config{Vendor: tt.vendor, EnableSecret: "x"})
			tm := shell(t, d)
			tm.expect(tt.prompt)
			if out := tm.cmd("show running-config", tt.prompt); !strings.Contains(out, tt.want) {
				t.Errorf("got %q, want %q", out, tt.want)
			}
		})
	}
}

func TestPaging(t *testing.T) {
	tests := []struct{ vendor, prompt, pager, off string }{
		{"cisco_ios", `sw1#$`, " --More-- ", "terminal length 0"},
		{"cisco_nxos", `n9k1# $`, " --More-- ", "terminal length 0"},
		{"cisco_iosxr", `xr1#$`, " --More-- ", "terminal length 0"},
		{"juniper_junos", `ex1> $`, "---(more)---", "set cli screen-length 0"},
	}
	for _, tt := range tests {
		t.Run(tt.vendor, func(t *testing.T) {
			d := startDevice(t, Config{Vendor: tt.vendor})
			tm := shell(t, d)
			tm.expect(tt.prompt)
			first := tm.cmd("show version", `(?:`+strings.ReplaceAll(regexpQuote(tt.pager), " ", " ")+`)$`)
			if n := strings.Count(first, "\r\n"); n != 24 { // the echo and 23 lines
				t.Errorf("first page has %d lines, want the echo and 23", n)
			}
			tm.send(" ")
			tm.expect(tt.prompt)
			tm.cmd(tt.off, tt.prompt)
			out := tm.cmd("show version", tt.prompt)
			if strings.Contains(out, strings.TrimSpace(tt.pager)) {
				t.Errorf("pager after %q: %q", tt.off, out)
			}
		})
	}
}

func TestPagerQuit(t *testing.T) {
	d := startDevice(t, Config{Vendor: "cisco_ios"})
	tm := shell(t, d)
	tm.expect(`#$`)
	tm.cmd("show version", ` --More-- $`)
	tm.send("q")
	if out := tm.expect(`sw1#$`); strings.Contains(out, "Configuration register") {
		t.Errorf("q did not stop the output: %q", out)
	}
}

func regexpQuote(s string) string {
	return strings.NewReplacer("(", `\(`, ")", `\)`).Replace(s)
}

func TestCiscoConfig(t *testing.T) {
	for _, vendor := range []string{"cisco_ios", "cisco_nxos", "arista_eos"} {
		t.Run(vendor, func(t *testing.T) {
			d := startDevice(t, Config{Vendor: vendor, Hostname: "edge"})
			tm := shell(t, d)
			p := `edge(\([^)]+\))?# ?$`
			tm.expect(p)
			tm.cmd("configure terminal", `edge\(config\)# ?$`)
			tm.cmd("interface "+d.st.ifaces[2].Name, `\(config-if[^)]*\)# ?$`)
			tm.cmd("description to printer", p)
			tm.cmd("no shutdown", p)
			if out := tm.cmd("bogus line here", p); !strings.Contains(out, "% Invalid") {
				t.Errorf("bogus config line accepted: %q", out)
			}
			tm.cmd("vlan 300", `\(config-vlan[^)]*\)# ?$`)
			tm.cmd("name CAMERAS", p)
			tm.cmd("hostname core", `core\(config\)# ?$`) // a global command leaves the sub-mode
			tm.send("\x1a")
			tm.expect(`core# ?$`)
			rc := d.RunningConfig()
			for _, want := range []string{"hostname core", "description to printer", "vlan 300", "name CAMERAS"} {
				if !strings.Contains(rc, want) {
					t.Errorf("running config lacks %q:\n%s", want, rc)
				}
			}
			if out := tm.cmd("show vlan brief", `core# ?$`); !strings.Contains(out, "CAMERAS") {
				t.Errorf("show vlan brief lacks the new VLAN: %q", out)
			}
			if got := d.Commands(); got[len(got)-1] != "show vlan brief" || got[0] != "configure terminal" {
				t.Errorf("Commands() = %q", got)
			}
		})
	}
}

func TestXRCommit(t *testing.T) {
	d := startDevice(t, Config{Vendor: "cisco_iosxr"})
	tm := shell(t, d)
	p := `RP/0/RSP0/CPU0:xr1(\([a-z-]+\))?#$`
	tm.expect(p)
	tm.cmd("configure", p)
	tm.cmd("interface GigabitEthernet0/0/0/2", p)
	tm.cmd("description staged", p)
	if strings.Contains(d.RunningConfig(), "staged") {
		t.Fatal("uncommitted change is running")
	}
	out := tm.cmd("end", `\[cancel\]:$`)
	if !strings.Contains(out, xrUncommitted) {
		t.Errorf("end asked %q", out)
	}
	tm.cmd("cancel", `\(config-if\)#$`)
	tm.cmd("end", `\[cancel\]:$`)
	tm.cmd("yes", `xr1#$`)
	if !strings.Contains(d.RunningConfig(), " description staged") {
		t.Errorf("yes did not commit:\n%s", d.RunningConfig())
	}
	tm.cmd("conf t", p)
	tm.cmd("hostname xr2", p)
	p = `xr2\(config\)#$`
	tm.cmd("commit", p)
	if out := tm.cmd("commit", p); !strings.Contains(out, "% No configuration changes to commit.") {
		t.Errorf("empty commit: %q", out)
	}
	tm.cmd("end", `xr2#$`)
}

func TestJunosCommit(t *testing.T) {
	d := startDevice(t, Config{Vendor: "juniper_junos", Username: "ops", Password: "pw"})
	tm := shell(t, d)
	tm.expect(`ops@ex1> $`)
	cfgPrompt := `\r\n\[edit\]\r\nops@ex1# $`
	if out := tm.cmd("configure", cfgPrompt); !strings.Contains(out, "Entering configuration mode") {
		t.Errorf("configure: %q", out)
	}
	tm.cmd(`set interfaces ge-0/0/2 description "lab printer"`, cfgPrompt)
	tm.cmd("set vlans CAMERAS vlan-id 300", cfgPrompt)
	if out := tm.cmd("set interfaces ge-0/0/2 mtu 9000", cfgPrompt); !strings.Contains(out, "syntax error.") {
		t.Errorf("unknown statement: %q", out)
	}
	if strings.Contains(d.RunningConfig(), "lab printer") {
		t.Fatal("uncommitted change is active")
	}
	out := tm.cmd("commit and-quit", `ops@ex1> $`)
	if !strings.Contains(out, "commit complete\r\nExiting configuration mode\r\n") {
		t.Errorf("commit and-quit: %q", out)
	}
	rc := d.RunningConfig()
	if !strings.Contains(rc, `description "lab printer";`) || !strings.Contains(rc, "vlan-id 300;") {
		t.Errorf("running config:\n%s", rc)
	}
	tm.cmd("configure", cfgPrompt)
	tm.cmd("set system host-name ex9", cfgPrompt)
	tm.cmd("exit", `\(yes\) $`)
	tm.cmd("yes", `ops@ex1> $`)
}

func TestLinuxExec(t *testing.T) {
	d := startDevice(t, Config{Vendor: "linux", Hostname: "web1"})
	c := dial(t, d)
	tests := []struct {
		cmd, stdout, stderr string
		status              int
	}{
		{"hostname", "web1\n", "", 0},
		{"echo hello world", "hello world\n", "", 0},
		{"uname -a", "Linux web1 5.15.0", "", 0},
		{"ip -br addr", "eth0             UP             192.0.2.20/24\n", "", 0},
		{"cat /etc/os-release", `PRETTY_NAME="Ubuntu 22.04.4 LTS"`, "", 0},
		{"frobnicate --now", "", "bash: frobnicate: command not found\n", 127},
		{"false", "", "", 1},
		{"exit 3", "", "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			s, err := c.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var out, errb bytes.Buffer
			s.Stdout, s.Stderr = &out, &errb
			err = s.Run(tt.cmd)
			status := 0
			if ee, ok := err.(*ssh.ExitError); ok {
				status = ee.ExitStatus()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || !strings.Contains(out.String(), tt.stdout) || errb.String() != tt.stderr {
				t.Errorf("got (%q, %q, %d), want (%q, %q, %d)", out.String(), errb.String(), status, tt.stdout, tt.stderr, tt.status)
			}
		})
	}
	if got := d.Commands(); len(got) != len(tests) || got[0] != "hostname" {
		t.Errorf("Commands() = %q", got)
	}
	if !bytes.Contains(d.Received(), []byte("exit 3\n")) {
		t.Errorf("Received() lacks the exec command: %q", d.Received())
	}
}

func TestLineEditing(t *testing.T) {
	d := startDevice(t, Config{Vendor: "cisco_ios"})
	tm := shell(t, d)
	tm.expect(`sw1#$`)
	tm.send("show clpck\x7f\x7f\x7fock\n")
	tm.expect(`sw1#$`)
	tm.send("terminal length 0\r\n")
	tm.expect(`sw1#$`)
	tm.send("show vlan brief\r")
	tm.expect(`(?s)VOICE.*\r\nsw1#$`)
	want := []string{"show clock", "terminal length 0", "show vlan brief"}
	if got := d.Commands(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Commands() = %q, want %q", got, want)
	}
	if !bytes.Contains(d.Received(), []byte("show clpck\x7f\x7f\x7fock\n")) {
		t.Errorf("Received() = %q", d.Received())
	}
}

func TestAuth(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(priv)
	d := startDevice(t, Config{Vendor: "cisco_ios", Username: "u", Password: "p",
		AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}, KeyboardInteractive: true})
	try := func(auth ssh.AuthMethod) error {
		cfg := clientConfig(d, "u", "")
		cfg.Auth = []ssh.AuthMethod{auth}
		c, err := ssh.Dial("tcp", d.Addr(), cfg)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := try(ssh.Password("wrong")); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("wrong password: %v", err)
	}
	if err := try(ssh.Password("p")); err != nil {
		t.Errorf("password: %v", err)
	}
	if err := try(ssh.PublicKeys(signer)); err != nil {
		t.Errorf("public key: %v", err)
	}
	ki := ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
		if len(qs) != 1 || qs[0] != "Password: " {
			t.Errorf("questions %q", qs)
		}
		return []string{"p"}, nil
	})
	if err := try(ki); err != nil {
		t.Errorf("keyboard-interactive: %v", err)
	}
	if d.Logins() != 3 {
		t.Errorf("Logins() = %d, want 3", d.Logins())
	}
	old := d.HostKey()
	if err := d.RotateHostKey(); err != nil {
		t.Fatal(err)
	}
	cfg := clientConfig(d, "u", "p")
	cfg.HostKeyCallback = ssh.FixedHostKey(old)
	if _, err := ssh.Dial("tcp", d.Addr(), cfg); err == nil {
		t.Error("old host key still accepted after RotateHostKey")
	}
}

func TestLatency(t *testing.T) {
	d := startDevice(t, Config{Vendor: "arista_eos"})
	tm := shell(t, d)
	tm.expect(`#$`)
	d.SetLatency(150 * time.Millisecond)
	start := time.Now()
	tm.cmd("show clock", `leaf1#$`)
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("answered after %v with 150ms latency", el)
	}
}
