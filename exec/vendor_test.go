package exec

import (
	"bytes"
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
}

func ciscoLike(driver, iface, showWant, cleanup string) vendorCase {
	return vendorCase{
		driver: driver, iface: iface, showWant: showWant,
		badShow: "show interfacez", badType: InvalidInput,
		change:   "interface " + iface + "\n description fk-uplink",
		rejected: "interface " + iface + "\n description fk-first\nbogus-keyword 7\n description never-sent",
		badLine:  "bogus-keyword 7", cleanup: cleanup,
	}
}

var vendorCases = []vendorCase{
	ciscoLike("cisco_ios", "GigabitEthernet1/0/1", "Cisco IOS Software", "end"),
	ciscoLike("cisco_nxos", "Ethernet1/1", "NX-OS", "end"),
	ciscoLike("arista_eos", "Ethernet1", "Arista", "end"),
	xr,
	{
		driver: "juniper_junos", iface: "ge-0/0/0", showWant: "Junos:",
		badShow: "show interfacez", badType: InvalidInput,
		change: "set interfaces ge-0/0/0 description fk-uplink\nset interfaces ge-0/0/0 disable",
		rejected: "set interfaces ge-0/0/0 description fk-first\nset interfaces ge-0/0/0 bogus-keyword 7\n" +
			"set interfaces ge-0/0/0 description never-sent",
		badLine: "set interfaces ge-0/0/0 bogus-keyword 7", cleanup: "exit configuration-mode", candidate: true,
		pagingOn: "set cli screen-length 10",
	},
}

var xr = func() vendorCase {
	vc := ciscoLike("cisco_iosxr", "GigabitEthernet0/0/0/0", "IOS XR", "abort")
	vc.candidate = true
	return vc
}()

// deviceWith seeds the rig's device with the interface the case configures.
func deviceWith(vc vendorCase) func(*devsim.Config) {
	return func(c *devsim.Config) {
		c.Interfaces = []devsim.Interface{{Name: vc.iface, Enabled: true}}
	}
}

func TestVendorShow(t *testing.T) {
	for _, vc := range vendorCases {
		t.Run(vc.driver, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, deviceWith(vc))
			res := r.exec(t, show("show version"))[0]
			if !res.Success || !strings.Contains(res.Output, vc.showWant) {
				t.Fatalf("result %+v", res)
			}
			if strings.HasPrefix(res.Output, "show version") || drivers[vc.driver].prompt.MatchString(lastLine(res.Output)) {
				t.Errorf("echo or prompt left in output: %q", res.Output)
			}
			cmds := r.dev.Commands()
			if vc.driver != "cisco_iosxr" && vc.driver != "juniper_junos" && !contains(cmds, "enable") {
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
		t.Run(vc.driver, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, deviceWith(vc))
			res := r.exec(t, show(vc.badShow), show("show version"))
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
		t.Run(vc.driver, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, deviceWith(vc))
			res := r.exec(t, config(vc.change), show("show version"))
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
		t.Run(vc.driver, func(t *testing.T) {
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
			if next := run(t, s, 5*time.Second, show("show version")); !next.Success {
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
		t.Run(vc.driver, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, vc.driver, func(c *devsim.Config) {
				deviceWith(vc)(c)
				c.Clock = func() time.Time { return time.Date(2024, 3, 5, 9, 12, 45, 913e6, time.UTC) }
			})
			s := r.open(t)
			plain := run(t, s, 5*time.Second, show("show version"))
			pagingOn := vc.pagingOn
			if pagingOn == "" {
				pagingOn = "terminal length 10"
			}
			if res := run(t, s, 5*time.Second, show(pagingOn)); !res.Success {
				t.Fatalf("terminal length: %+v", res)
			}
			paged := run(t, s, 5*time.Second, show("show version"))
			if !paged.Success || paged.Output != plain.Output {
				t.Errorf("paged output differs:\n%q\nwant\n%q", paged.Output, plain.Output)
			}
			rec := r.dev.Received()
			i := bytes.LastIndex(rec, []byte("show version\n"))
			if i < 0 || !bytes.Contains(rec[i+len("show version\n"):], []byte(" ")) {
				t.Errorf("pager never answered")
			}
		})
	}
}
