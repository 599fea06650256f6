package devsim

import (
	"regexp"
	"strings"
	"testing"
)

// flavour is how one simulated CLI is driven by hand: its prompt, what it
// needs before the first prompt, and the texts it prints exactly as the
// vendor does.
type flavour struct {
	vendor   string
	prompt   string        // privileged prompt, a regexp
	login    func(*term)   // before the first prompt; nil: nothing
	paging   string        // a command that makes "show version" page
	pager    string        // the pager prompt, verbatim
	errors   [][2]string   // a line and text its answer contains
	extra    func(*term)   // more checks on the open session
	cfg      func(*Config) // device settings beyond the defaults
	showWant string        // text "show version" (or its equivalent) prints
	show     string        // the vendor's "show version"; "show version" when empty
}

var campusFlavours = []flavour{
	{vendor: "cisco_asa", prompt: `fw1#$`, paging: "terminal pager 5", pager: "<--- More --->",
		errors: [][2]string{
			{"show foo", "\r\n         ^\r\nERROR: % Invalid input detected at '^' marker.\r\n"},
			{"show", "ERROR: % Incomplete command\r\n"},
		}, showWant: "Cisco Adaptive Security Appliance Software Version 9.16(4)"},
	{vendor: "hp_procurve", prompt: `sw1# \x1b\[\?25h$`, login: pressKey, paging: "terminal length 5",
		pager: "-- MORE --, next page: Space, next line: Enter, quit: Control-C",
		errors: [][2]string{
			{"show foo", "Invalid input: foo\r\n"},
			{"show", "Incomplete input: show\r\n"},
		}, showWant: "YA.16.10.0009"},
	{vendor: "aruba_aoscx", prompt: `cx1# $`, paging: "terminal length 5",
		pager: "-- MORE --, next page: Space, next line: Enter, quit: q",
		errors: [][2]string{
			{"show foo", "Invalid input: foo\r\n"},
			{"show", "% Command incomplete.\r\n"},
		}, showWant: "\r\nArubaOS-CX\r\n(c) Copyright 2017-2023 Hewlett Packard Enterprise"},
	{vendor: "dell_os10", prompt: `os10# $`, paging: "terminal length 5", pager: "--more--",
		errors: [][2]string{
			{"show foo", "show foo\r\n% Error: Unrecognized command.\r\n"},
			{"show", "% Error: Incomplete command.\r\n"},
		}, showWant: "OS Version: 10.5.4.2"},
	{vendor: "brocade_fastiron", prompt: `SSH@icx1#$`, pager: "--More--, next page: Space, next line: Return key, quit: Control-c",
		errors: [][2]string{
			{"show foo", "Invalid input -> foo\r\nType ? for a list\r\n"},
			{"show", "Incomplete command.\r\n"},
		}, showWant: "SW: Version 08.0.95mT213"},
}

func pressKey(tm *term) {
	tm.expect(`Press any key to continue$`)
	tm.send(" ")
}

// Each flavour prints its prompt, errors and pager exactly as the vendor
// does, and its "show version" says what the device is.
func TestFlavours(t *testing.T) {
	for _, f := range campusFlavours {
		t.Run(f.vendor, func(t *testing.T) { checkFlavour(t, f) })
	}
}

func checkFlavour(t *testing.T, f flavour) {
	cfg := Config{Vendor: f.vendor}
	if f.cfg != nil {
		f.cfg(&cfg)
	}
	d := startDevice(t, cfg)
	tm := shell(t, d)
	if f.login != nil {
		f.login(tm)
	}
	tm.expect(f.prompt)
	for _, e := range f.errors {
		if out := tm.cmd(e[0], f.prompt); !strings.Contains(out, e[1]) {
			t.Errorf("%q: got %q, want it to contain %q", e[0], out, e[1])
		}
	}
	show := f.show
	if show == "" {
		show = "show version"
	}
	if f.paging != "" {
		tm.cmd(f.paging, f.prompt)
	}
	page := tm.cmd(show, regexp.QuoteMeta(f.pager)+`$`)
	if !strings.Contains(page, f.showWant) {
		t.Errorf("%s: %q lacks %q", show, page, f.showWant)
	}
	tm.send("q")
	tm.expect(f.prompt)
	if f.extra != nil {
		f.extra(tm)
	}
}

// Enable on ProCurve asks for the manager's user name, then the password;
// FastIron and ASA ask for the password alone.
func TestCampusEnable(t *testing.T) {
	tests := []struct {
		vendor, user, priv, denied string
		login                      func(*term)
		username                   bool
	}{
		{"hp_procurve", `sw1> \x1b\[\?25h$`, `sw1# \x1b\[\?25h$`, "Access denied", pressKey, true},
		{"brocade_fastiron", `SSH@icx1>$`, `SSH@icx1#$`, "Error - Incorrect username or password.", nil, false},
		{"cisco_asa", `fw1>$`, `fw1#$`, "Access denied.", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.vendor, func(t *testing.T) {
			d := startDevice(t, Config{Vendor: tt.vendor, EnableSecret: "en-s3cret"})
			tm := shell(t, d)
			if tt.login != nil {
				tt.login(tm)
			}
			tm.expect(tt.user)
			ask := func() {
				if tt.username {
					tm.cmd("enable", `Username: $`)
					tm.cmd(d.cfg.Username, `Password: $`)
				} else {
					tm.cmd("enable", `Password: $`)
				}
			}
			ask()
			for i := 1; i < d.v.enableTries; i++ {
				tm.cmd("wrong", `Password: $`)
			}
			if out := tm.cmd("wrong", tt.user); !strings.Contains(out, tt.denied) {
				t.Errorf("wrong password: got %q, want %q", out, tt.denied)
			}
			ask()
			tm.cmd("en-s3cret", tt.priv)
		})
	}
}

// The configuration a session changes shows in the vendor's own running
// configuration format.
func TestCampusConfig(t *testing.T) {
	tests := []struct {
		vendor, prompt, ifLine, desc, want string
		login                              func(*term)
	}{
		{"cisco_asa", `#$`, "interface GigabitEthernet0/2", "description", " description fk-test", nil},
		{"hp_procurve", `# \x1b\[\?25h$`, "interface 2", "name", `   name "fk-test"`, pressKey},
		{"aruba_aoscx", `# $`, "interface 1/1/2", "description", "    description fk-test", nil},
		{"dell_os10", `# $`, "interface ethernet1/1/2", "description", " description fk-test", nil},
		{"brocade_fastiron", `#$`, "interface ethernet 1/1/2", "port-name", " port-name fk-test", nil},
	}
	for _, tt := range tests {
		t.Run(tt.vendor, func(t *testing.T) {
			d := startDevice(t, Config{Vendor: tt.vendor})
			tm := shell(t, d)
			if tt.login != nil {
				tt.login(tm)
			}
			tm.expect(tt.prompt)
			tm.cmd("configure terminal", `\(config\)# ?(\x1b\[\?25h)?$`)
			tm.cmd(tt.ifLine, `\)# ?(\x1b\[\?25h)?$`)
			tm.cmd(tt.desc+" fk-test", `\)# ?(\x1b\[\?25h)?$`)
			tm.cmd("end", tt.prompt)
			if rc := d.RunningConfig(); !strings.Contains(rc, tt.want) {
				t.Errorf("running config lacks %q:\n%s", tt.want, rc)
			}
		})
	}
}
