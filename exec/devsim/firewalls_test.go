package devsim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// thirty interfaces make "/interface print" longer than a screen.
func thirtyPorts(c *Config) {
	for i := 1; i <= 30; i++ {
		c.Interfaces = append(c.Interfaces, Interface{Name: fmt.Sprintf("ether%d", i), Enabled: true})
	}
}

func TestFirewallAndRouterOSFlavours(t *testing.T) {
	for _, f := range []flavour{
		{vendor: "fortinet", prompt: `FGT1 # $`, pager: "--More-- ", show: "get system status",
			showWant: "Version: FortiGate-60F v7.2.8",
			errors: [][2]string{
				{"get system statuz", "command parse error before 'statuz'\r\nCommand fail. Return code -61\r\n"},
				{"bogus", "Unknown action 0\r\n"},
			}},
		{vendor: "paloalto_panos", prompt: `admin@PA-VM> $`, pager: "lines 1-23 ", show: "show system info",
			showWant: "hostname: PA-VM",
			errors: [][2]string{
				{"show system infoz", "Invalid syntax.\r\n"},
				{"bogus", "Unknown command: bogus\r\n"},
			}},
		{vendor: "mikrotik_routeros", prompt: `\[\x1b\[1;36madmin\x1b\[0m@\x1b\[1;35mrtr1\x1b\[0m\] > $`,
			pager: "-- [Q quit|D dump|C-z pause|down]", show: "/interface print", cfg: thirtyPorts,
			showWant: "Flags: X - disabled; R - running",
			errors: [][2]string{
				{"/system resource prnt", "bad command name prnt (line 1 column 18)\r\n"},
				{"/interface set ether1 bogus=7", "expected end of command (line 1 column 23)\r\n"},
				{"/interface set ether99 comment=x", "no such item\r\n"},
			}},
	} {
		t.Run(f.vendor, func(t *testing.T) { checkFlavour(t, f) })
	}
}

// FortiOS blocks save on next and end and drop on abort; the console
// setting turns paging off for every later session.
func TestFortiOSBlocks(t *testing.T) {
	d := startDevice(t, Config{Vendor: "fortinet"})
	tm := shell(t, d)
	tm.expect(`FGT1 # $`)
	tm.cmd("config system interface", `FGT1 \(interface\) # $`)
	tm.cmd("edit port3", `FGT1 \(port3\) # $`)
	tm.cmd("set description fk-saved", `\(port3\) # $`)
	tm.cmd("next", `\(interface\) # $`)
	tm.cmd("edit port4", `\(port4\) # $`)
	tm.cmd("set description fk-dropped", `\(port4\) # $`)
	tm.cmd("abort", `FGT1 # $`)
	tm.cmd("config system console", `\(console\) # $`)
	tm.cmd("set output standard", `\(console\) # $`)
	tm.cmd("end", `FGT1 # $`)
	rc := d.RunningConfig()
	if !strings.Contains(rc, `set description "fk-saved"`) || strings.Contains(rc, "fk-dropped") || !strings.Contains(rc, "set output standard") {
		t.Errorf("running config:\n%s", rc)
	}
	tm2 := shell(t, d)
	tm2.expect(`FGT1 # $`)
	if out := tm2.cmd("get system status", `FGT1 # $`); strings.Contains(out, "--More--") {
		t.Errorf("paged after set output standard: %q", out)
	}
}

// The post-login banner waits for "a".
func TestFortiOSPostLoginBanner(t *testing.T) {
	d := startDevice(t, Config{Vendor: "fortinet", PostLoginBanner: true})
	tm := shell(t, d)
	tm.expect(`\(Press 'a' to accept\):$`)
	tm.send("x")
	tm.send("a")
	tm.expect(`FGT1 # $`)
}

// The PAN-OS candidate outlives the session until commit or revert.
func TestPANOSCandidate(t *testing.T) {
	d := startDevice(t, Config{Vendor: "paloalto_panos"})
	tm := shell(t, d)
	tm.expect(`> $`)
	tm.cmd("configure", `\r\n\[edit\]\r\nadmin@PA-VM# $`)
	tm.cmd("set network interface ethernet ethernet1/3 comment fk-pending", `# $`)
	tm.cmd("exit", `> $`)
	if !d.Pending() || strings.Contains(d.RunningConfig(), "fk-pending") {
		t.Fatal("the change should wait in the candidate")
	}
	tm.cmd("configure", `# $`)
	if out := tm.cmd("commit", `# $`); !strings.Contains(out, "Configuration committed successfully") {
		t.Errorf("commit: %q", out)
	}
	if d.Pending() || !strings.Contains(d.RunningConfig(), "comment fk-pending") {
		t.Errorf("after commit: pending %v\n%s", d.Pending(), d.RunningConfig())
	}
	tm.cmd("set deviceconfig system hostname fk-host", `# $`)
	tm.cmd("revert config", `# $`)
	if out := tm.cmd("commit", `# $`); !strings.Contains(out, "There are no changes to commit.") {
		t.Errorf("commit after revert: %q", out)
	}
}

// Console options after "+" in the login name: no colours with c, no
// terminal detection wait with t; without them the prompt is coloured and
// the first prompt waits.
func TestRouterOSLoginOptions(t *testing.T) {
	d := startDevice(t, Config{Vendor: "mikrotik_routeros", Username: "ops", Password: "pw"})
	start := time.Now()
	tm := shellAs(t, d, "ops+ct511w4098h", "pw")
	tm.expect(`\[ops@rtr1\] > $`)
	if time.Since(start) > rosTerminalWait {
		t.Errorf("waited %v with t", time.Since(start))
	}
	if out := tm.cmd("/interface", `\[ops@rtr1\] /interface> $`); !strings.HasPrefix(out, "/interface\r[ops@rtr1] > /interface\r\n") {
		t.Errorf("the line is not redrawn: %q", out)
	}
	tm.cmd("..", `\[ops@rtr1\] > $`)
	tm2 := shellAs(t, d, "ops", "pw")
	tm2.expect(`\x1bZ[\s\S]*\[\x1b\[1;36mops`)
}
