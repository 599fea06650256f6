package exec

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldkit/exec/devsim"
)

// RouterOS gets its console options in the login name, once.
func TestRouterOSLoginName(t *testing.T) {
	r := newRig(t, "mikrotik_routeros", nil)
	plain := r.exec(t, show("/system resource print"))
	if !plain[0].Success || !slices.Equal(r.dev.LoginNames(), []string{testUser + "+ct511w4098h"}) {
		t.Fatalf("%+v, logins %q", plain[0], r.dev.LoginNames())
	}
	// A name that already carries options is sent as it is; the coloured
	// prompt and the terminal detection it then gets change nothing.
	r.cred.Username = testUser + "+e"
	res := r.exec(t, show("/system resource print"))
	if !res[0].Success || res[0].Output != plain[0].Output || r.dev.LoginNames()[1] != testUser+"+e" {
		t.Errorf("%+v\nwant output %q, logins %q", res[0], plain[0].Output, r.dev.LoginNames())
	}
}

// Output longer than the RouterOS terminal pages; the pager is answered
// and the output is the same as unpaged.
func TestRouterOSPager(t *testing.T) {
	ports := func(c *devsim.Config) {
		for i := 1; i <= 30; i++ {
			c.Interfaces = append(c.Interfaces, devsim.Interface{Name: fmt.Sprintf("ether%d", i), Enabled: true})
		}
	}
	r := newRig(t, "mikrotik_routeros", ports)
	plain := r.exec(t, show("/interface print"))
	r.cred.Username = testUser + "+ct" // no height: the console pages at 24 lines
	paged := r.exec(t, show("/interface print"))
	if !paged[0].Success || paged[0].Output != plain[0].Output || !strings.Contains(plain[0].Output, "ether30") {
		t.Errorf("paged %+v\nwant %q", paged[0], plain[0].Output)
	}
	rec := r.dev.Received()
	if i := bytes.LastIndex(rec, []byte("/interface print\r\n")); i < 0 || !bytes.Contains(rec[i:], []byte(" ")) {
		t.Errorf("pager never answered")
	}
}

// A PAN-OS login banner asked through keyboard-interactive is accepted.
func TestPANOSLoginBanner(t *testing.T) {
	r := newRig(t, "paloalto_panos", func(c *devsim.Config) {
		c.KeyboardInteractive = true
		c.AcceptQuestion = "Do you accept and acknowledge the statement above ? (yes/no) : "
	})
	if res := r.exec(t, show("show system info")); !res[0].Success {
		t.Errorf("%+v", res[0])
	}
}

// A refused line leaves nothing in the PAN-OS candidate for someone else's
// commit to apply.
func TestPANOSRefusedChangeReverted(t *testing.T) {
	r := newRig(t, "paloalto_panos", nil)
	res := r.exec(t, config("set network interface ethernet ethernet1/3 comment fk-half\nset network bogus 7"))
	if res[0].Success || res[0].Syntax.Input != "set network bogus 7" {
		t.Fatalf("%+v", res[0])
	}
	if r.dev.Pending() || !contains(r.dev.Commands(), "revert config") {
		t.Errorf("candidate left pending; commands %q", r.dev.Commands())
	}
}

// FortiOS: the post-login banner is accepted, and blocks the text leaves
// open are closed (and so saved) by the driver.
func TestFortinetBannerAndOpenBlocks(t *testing.T) {
	r := newRig(t, "fortinet", func(c *devsim.Config) { c.PostLoginBanner = true })
	r.opt.Timeout = 5 * time.Second
	res := r.exec(t, config("config system interface\nedit port1\nset description fk-open"), show("get system status"))
	if !res[0].Success || !res[1].Success || !strings.Contains(r.dev.RunningConfig(), `set description "fk-open"`) {
		t.Fatalf("%+v\n%s", res, r.dev.RunningConfig())
	}
	// The logout line goes out blind as the connection closes: the device may or may
	// not read it first.
	cmds := r.dev.Commands()
	if cmds[len(cmds)-1] == "exit" {
		cmds = cmds[:len(cmds)-1]
	}
	if !slices.Equal(cmds[len(cmds)-2:], []string{"end", "get system status"}) {
		t.Errorf("commands %q", cmds)
	}
}
