package exec

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"fieldkit/exec/devsim"
)

// vendorCase is what one shell platform is exercised with.
type vendorCase struct {
	driver   string
	iface    string
	showWant string // text "show version" prints
	badShow  string // a show command with a typo
	badType  string
	change   string // a two-line configuration change
	rejected string // a change whose second line the device refuses
	badLine  string // that line
	cleanup  string // the command sent after the refused line
	// candidate platforms discard the lines before the refused one; the
	// others have applied them already
	candidate bool
	pagingOn  string // turns paging back on; "terminal length 10" when empty
	noEnable  bool   // the platform has no enable step, or the simulator lands privileged
	name      string // the subtest's name; the driver when empty
	version   string // the platform's "show version"; "show version" when empty
	dev       func(*devsim.Config)
	noPaging  bool // paging cannot be turned on within a session (tested on its own)
}

func (vc vendorCase) testName() string {
	if vc.name != "" {
		return vc.name
	}
	return vc.driver
}

func (vc vendorCase) versionCmd() string {
	if vc.version != "" {
		return vc.version
	}
	return "show version"
}

func ciscoLike(driver, iface, showWant, cleanup string) vendorCase {
	return ciscoWords(driver, "interface "+iface, "description", showWant, cleanup)
}

// ciscoWords is a Cisco-like case whose interface line and description
// keyword differ ("interface 1" and "name" on ProCurve).
func ciscoWords(driver, ifLine, desc, showWant, cleanup string) vendorCase {
	return vendorCase{
		driver: driver, iface: strings.ReplaceAll(strings.TrimPrefix(ifLine, "interface "), " ", ""), showWant: showWant,
		badShow: "show interfacez", badType: InvalidInput,
		change:   ifLine + "\n " + desc + " fk-uplink",
		rejected: ifLine + "\n " + desc + " fk-first\nbogus-keyword 7\n " + desc + " never-sent",
		badLine:  "bogus-keyword 7", cleanup: cleanup,
	}
}

// with returns vc changed by f, for table entries.
func (vc vendorCase) with(f func(*vendorCase)) vendorCase {
	f(&vc)
	return vc
}

var vendorCases = []vendorCase{
	ciscoLike("cisco_ios", "GigabitEthernet1/0/1", "Cisco IOS Software", "end"),
	ciscoLike("cisco_nxos", "Ethernet1/1", "NX-OS", "end"),
	ciscoLike("arista_eos", "Ethernet1", "Arista", "end"),
	xr,
	ciscoLike("cisco_asa", "GigabitEthernet0/2", "Adaptive Security Appliance", "end").with(func(vc *vendorCase) {
		vc.pagingOn = "terminal pager 10"
	}),
	ciscoWords("hp_procurve", "interface 1", "name", "YA.16.10.0009", "end"),
	ciscoLike("aruba_aoscx", "1/1/1", "ArubaOS-CX", "end").with(func(vc *vendorCase) { vc.noEnable = true }),
	ciscoLike("dell_os10", "ethernet1/1/1", "OS10 Enterprise", "end").with(func(vc *vendorCase) {
		vc.noEnable, vc.badType, vc.pagingOn = true, UnknownCommand, "terminal length 5"
	}),
	ciscoWords("brocade_fastiron", "interface ethernet 1/1/1", "port-name", "ICX7150", "end").with(func(vc *vendorCase) {
		vc.pagingOn = "page-display"
	}),
	huawei,
	huawei.with(func(vc *vendorCase) {
		vc.name, vc.candidate = "huawei_vrp_two_stage", true
		vc.dev = func(c *devsim.Config) { c.TwoStage = true }
	}),
	{
		driver: "extreme_exos", iface: "1", showWant: "ExtremeXOS version 31.7.1.4",
		badShow: "show interfacez", badType: InvalidInput,
		change:   "disable ports 1\nconfigure ports 1 description-string fk-uplink",
		rejected: "configure ports 1 description-string fk-first\nconfigure ports 1 bogus-keyword 7\nconfigure ports 1 description-string never-sent",
		badLine:  "configure ports 1 bogus-keyword 7", cleanup: "configure ports 1 bogus-keyword 7",
		pagingOn: "enable clipaging", noEnable: true,
	},
	{
		driver: "fortinet", iface: "port1", showWant: "Version: FortiGate-60F v7.2.8", version: "get system status",
		badShow: "get system statuz", badType: InvalidInput,
		change:   "config system interface\nedit port1\nset description fk-uplink\nnext\nend",
		rejected: "config system interface\nedit port1\nset description fk-first\nset bogus-keyword 7\nset description never-sent\nnext\nend",
		badLine:  "set bogus-keyword 7", cleanup: "abort", candidate: true,
		pagingOn: "config system console\nset output more\nend", noEnable: true,
	},
	{
		driver: "paloalto_panos", iface: "ethernet1/1", showWant: "sw-version: 10.2.8", version: "show system info",
		badShow: "show system infoz", badType: InvalidInput,
		change: "set network interface ethernet ethernet1/1 comment fk-uplink\nset network interface ethernet ethernet1/1 link-state up",
		rejected: "set network interface ethernet ethernet1/1 comment fk-first\nset network interface ethernet ethernet1/1 bogus-keyword 7\n" +
			"set network interface ethernet ethernet1/1 comment never-sent",
		badLine: "set network interface ethernet ethernet1/1 bogus-keyword 7", cleanup: "exit", candidate: true,
		pagingOn: "set cli pager on", noEnable: true,
	},
	{
		driver: "mikrotik_routeros", iface: "ether1", showWant: "board-name: RB4011iGS+", version: "/system resource print",
		badShow: "/system resource prnt", badType: UnknownCommand,
		change:   "/interface set ether1 comment=fk-uplink\n/interface disable ether1",
		rejected: "/interface set ether1 comment=fk-first\n/interface set ether1 bogus-keyword=7\n/interface set ether1 comment=never-sent",
		badLine:  "/interface set ether1 bogus-keyword=7", cleanup: "/interface set ether1 bogus-keyword=7",
		noEnable: true, noPaging: true,
	},
	{
		driver: "juniper_junos", iface: "ge-0/0/0", showWant: "Junos:",
		badShow: "show interfacez", badType: InvalidInput,
		change: "set interfaces ge-0/0/0 description fk-uplink\nset interfaces ge-0/0/0 disable",
		rejected: "set interfaces ge-0/0/0 description fk-first\nset interfaces ge-0/0/0 bogus-keyword 7\n" +
			"set interfaces ge-0/0/0 description never-sent",
		badLine: "set interfaces ge-0/0/0 bogus-keyword 7", cleanup: "exit configuration-mode", candidate: true,
		pagingOn: "set cli screen-length 10", noEnable: true,
	},
}

var huawei = ciscoLike("huawei_vrp", "GigabitEthernet0/0/1", "VRP (R) software", "return").with(func(vc *vendorCase) {
	vc.badShow, vc.version, vc.pagingOn, vc.noEnable = "display interfacez", "display version", "screen-length 10 temporary", true
})

var xr = func() vendorCase {
	vc := ciscoLike("cisco_iosxr", "GigabitEthernet0/0/0/0", "IOS XR", "abort")
	vc.candidate, vc.noEnable = true, true
	return vc
}()

// deviceWith seeds the rig's device with the interface the case configures.
func deviceWith(vc vendorCase) func(*devsim.Config) {
	return func(c *devsim.Config) {
		c.Interfaces = []devsim.Interface{{Name: vc.iface, Enabled: true}}
		if vc.dev != nil {
			vc.dev(c)
		}
	}
}

func TestVendorShow(t *testing.T) {
	for _, vc := range vendorCases {
		t.Run(vc.testName(), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, deviceWith(vc))
			res := r.exec(t, show(vc.versionCmd()))[0]
			if !res.Success || !strings.Contains(res.Output, vc.showWant) {
				t.Fatalf("result %+v", res)
			}
			if strings.HasPrefix(res.Output, vc.versionCmd()) || drivers[vc.driver].prompt.MatchString(lastLine(res.Output)) {
				t.Errorf("echo or prompt left in output: %q", res.Output)
			}
			cmds := r.dev.Commands()
			if !vc.noEnable && !contains(cmds, "enable") {
				t.Errorf("no enable in %q", cmds)
			}
			if !bytes.Contains(r.dev.Received(), []byte(testEnable)) && contains(cmds, "enable") {
				t.Errorf("enable secret never typed")
			}
			for _, c := range drivers[vc.driver].setup {
				if !contains(cmds, c) {
					t.Errorf("setup %q not sent: %q", c, cmds)
				}
			}
		})
	}
}

func TestVendorSyntaxError(t *testing.T) {
	for _, vc := range vendorCases {
		t.Run(vc.testName(), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, deviceWith(vc))
			res := r.exec(t, show(vc.badShow), show(vc.versionCmd()))
			se := res[0].Syntax
			if res[0].Success || !se.Detected || se.Type != vc.badType || se.Vendor != vc.driver || se.Guidance == "" {
				t.Fatalf("result %+v", res[0])
			}
			if res[0].ErrorMessage != "Syntax error detected: "+se.Line || !strings.Contains(res[0].Output, se.Line) {
				t.Errorf("message %q, line %q, output %q", res[0].ErrorMessage, se.Line, res[0].Output)
			}
			if !res[1].Success {
				t.Errorf("next command failed: %+v", res[1])
			}
		})
	}
}

func TestVendorConfig(t *testing.T) {
	for _, vc := range vendorCases {
		t.Run(vc.testName(), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, deviceWith(vc))
			res := r.exec(t, config(vc.change), show(vc.versionCmd()))
			if !res[0].Success || !res[1].Success {
				t.Fatalf("results %+v", res)
			}
			if rc := r.dev.RunningConfig(); !strings.Contains(rc, "fk-uplink") {
				t.Errorf("change not in running config:\n%s", rc)
			}
			if !strings.Contains(res[0].Output, "fk-uplink") {
				t.Errorf("transcript lacks the change: %q", res[0].Output)
			}
		})
	}
}

func TestVendorConfigRejectedLineStops(t *testing.T) {
	for _, vc := range vendorCases {
		t.Run(vc.testName(), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, deviceWith(vc))
			s := r.open(t)
			res := run(t, s, 5*time.Second, config(vc.rejected))
			if res.Success || !res.Syntax.Detected || res.Syntax.Input != vc.badLine {
				t.Fatalf("result %+v", res)
			}
			cmds := r.dev.Commands()
			if contains(cmds, "description never-sent") || strings.Contains(r.dev.RunningConfig(), "never-sent") {
				t.Errorf("line after the rejected one was sent: %q", cmds)
			}
			if applied := strings.Contains(r.dev.RunningConfig(), "fk-first"); applied == vc.candidate {
				t.Errorf("line before the rejected one applied: %v, want %v", applied, !vc.candidate)
			}
			if cmds[len(cmds)-1] != vc.cleanup {
				t.Errorf("last command %q, want %q", cmds[len(cmds)-1], vc.cleanup)
			}
			if next := run(t, s, 5*time.Second, show(vc.versionCmd())); !next.Success {
				t.Errorf("session not usable after a rejected change: %+v", next)
			}
		})
	}
}

// With paging left on, the pager is answered and the output is the same as
// with paging off, byte for byte: the device clock is fixed, because IOS-XR
// prints the time above every show output.
func TestVendorPaging(t *testing.T) {
	for _, vc := range vendorCases {
		if vc.noPaging {
			continue
		}
		t.Run(vc.testName(), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, func(c *devsim.Config) {
				deviceWith(vc)(c)
				c.Clock = func() time.Time { return time.Date(2024, 3, 5, 9, 12, 45, 913e6, time.UTC) }
			})
			s := r.open(t)
			plain := run(t, s, 5*time.Second, show(vc.versionCmd()))
			pagingOn := vc.pagingOn
			if pagingOn == "" {
				pagingOn = "terminal length 10"
			}
			if res := run(t, s, 5*time.Second, show(pagingOn)); !res.Success {
				t.Fatalf("terminal length: %+v", res)
			}
			paged := run(t, s, 5*time.Second, show(vc.versionCmd()))
			if !paged.Success || paged.Output != plain.Output {
				t.Errorf("paged output differs:\n%q\nwant\n%q", paged.Output, plain.Output)
			}
			rec, typed := r.dev.Received(), []byte(vc.versionCmd()+drivers[vc.driver].newline())
			i := bytes.LastIndex(rec, typed)
			if i < 0 || !bytes.Contains(rec[i+len(typed):], []byte(" ")) {
				t.Errorf("pager never answered")
			}
		})
	}
}

// A device that goes silent mid-command fails at the deadline with what it
// printed so far; the session is then refused for further commands.
func TestVendorTimeout(t *testing.T) {
	for _, vc := range vendorCases {
		t.Run(vc.testName(), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, deviceWith(vc))
			s := r.open(t)
			r.dev.SetFault(devsim.FaultSilence)
			start := time.Now()
			res := run(t, s, 700*time.Millisecond, show(vc.versionCmd()))
			if res.Success || res.ErrorMessage != "Timed out after 0.7 s" || time.Since(start) > 2*time.Second {
				t.Errorf("after %v: %+v", time.Since(start), res)
			}
			if next := run(t, s, time.Second, show(vc.versionCmd())); next.Success || !strings.HasPrefix(next.ErrorMessage, "not run: ") {
				t.Errorf("after the timeout: %+v", next)
			}
		})
	}
}

// A wrong enable password fails the open with ErrEnable, on every platform
// with an enable step.
func TestVendorEnableRefused(t *testing.T) {
	for _, vc := range vendorCases {
		if vc.noEnable {
			continue
		}
		t.Run(vc.testName(), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, deviceWith(vc))
			r.cred.EnableSecret = "not-" + testEnable
			_, err := Open(context.Background(), r.tg, r.cred, r.opt)
			if !errors.Is(err, ErrEnable) {
				t.Errorf("err = %v", err)
			}
		})
	}
}
