package devsim

import (
	"strconv"
	"strings"
)

// Five more CLIs follow the Cisco pattern of exec, enable and
// "configure terminal" with sub-modes: Cisco ASA, HP ProCurve
// (ArubaOS-Switch), Aruba AOS-CX, Dell OS10 and Brocade/Ruckus FastIron.
// They share one grammar here; what differs (prompts, paging commands,
// words, error wording, output formats) is data.

// campus is what one of these CLIs words differently.
type campus struct {
	desc          string // the interface description keyword
	shut, noShut  string // disabling and enabling an interface
	vlans         bool   // has a VLAN database ("vlan <n>")
	paging        []*command
	show          []*command
	version       func(st *state) []string
	saved         []string // what "write memory" prints
	configureBare bool     // "configure" alone enters config mode too
}

func init() {
	for _, f := range []func() (*vendor, campus){asaVendor, procurveVendor, aoscxVendor, os10Vendor, fastironVendor} {
		v, c := f()
		v.shell, v.exec = cliShell, cliExec
		v.tables = campusTables(v, c)
		vendors[v.name] = v
	}
}

func asaVendor() (*vendor, campus) {
	v := &vendor{
		name: "cisco_asa", hostname: "fw1", serverVersion: "SSH-2.0-Cisco-1.25",
		banner: "Authorized access only. All activity is logged.",
		pager:  "<--- More --->",
		ifaces: []Interface{
			{Name: "Management0/0", Description: "mgmt", Enabled: true, IP: "192.0.2.20/24"},
			{Name: "GigabitEthernet0/0", Description: "outside", Enabled: true, IP: "198.51.100.2/29"},
			{Name: "GigabitEthernet0/1", Description: "inside", Enabled: true, IP: "10.10.0.1/24"},
			{Name: "GigabitEthernet0/2", Enabled: false},
		},
		abbrev: map[string]string{"GigabitEthernet": "Gi", "Management": "Ma"},
		enable: true, enableTries: 3, enableFail: []string{"Access denied."},
		errs: errStyle{
			invalid:    "ERROR: % Invalid input detected at '^' marker.",
			incomplete: "ERROR: % Incomplete command",
			ambiguous:  `ERROR: % Ambiguous command:  "%[2]s"`,
			caret:      [3]bool{errInvalid: true},
		},
		prompt: func(s *session) string { return ciscoPrompt(s, "") },
		modes: func(s *session) string {
			if s.cli.mode == modeIf {
				return "config-if"
			}
			return "config"
		},
		running: asaRunning,
	}
	return v, campus{
		desc: "description", shut: "shutdown", noShut: "no shutdown",
		paging: cmds(
			&command{words: "terminal pager <n>", run: pageLength},
			&command{words: "terminal pager lines <n>", run: pageLength},
		),
		show: cmds(
			&command{words: "show interface ip brief", run: showWith(asaIPBrief)},
			&command{words: "show clock", run: func(s *session, _ *call) []string {
				return []string{s.view().clock().UTC().Format("15:04:05.000 MST Mon Jan 2 2006")}
			}},
		),
		version: asaVersion, saved: []string{"Building configuration...", "Cryptochecksum: 5b1e4c2d 9a0f7e31 c46d8b12 7f3a9e05", "", "3521 bytes copied in 0.120 secs", "[OK]"},
	}
}

func procurveVendor() (*vendor, campus) {
	v := &vendor{
		name: "hp_procurve", hostname: "sw1", serverVersion: "SSH-2.0-Mocana SSH 6.3",
		banner:  "Lab switch. Authorized access only.",
		pager:   "-- MORE --, next page: Space, next line: Enter, quit: Control-C",
		ifNames: [4]string{"1", "2", "3", "4"},
		enable:  true, enableUser: true,
		errs: errStyle{
			invalid:    "Invalid input: %[1]s",
			incomplete: "Incomplete input: %[3]s",
			ambiguous:  "Ambiguous input: %[1]s",
		},
		// The prompt is drawn with cursor positioning, as the switch does.
		prompt: func(s *session) string {
			return "\x1b[24;1H" + strings.TrimSuffix(ciscoPrompt(s, " "), " ") + " \x1b[?25h"
		},
		modes: func(s *session) string {
			switch s.cli.mode {
			case modeIf:
				return "eth-" + s.cli.iface
			case modeVlan:
				return "vlan-" + itoa(s.cli.vlan)
			}
			return "config"
		},
		login:   pressAnyKey,
		running: procurveRunning,
	}
	return v, campus{
		desc: "name", shut: "disable", noShut: "enable", vlans: true, configureBare: true,
		paging: cmds(
			// Paging can only be turned off from the manager level.
			&command{words: "no page", priv: true, run: func(s *session, _ *call) []string { s.cli.pageLen = 0; return nil }},
			&command{words: "page", run: func(s *session, _ *call) []string { s.cli.pageLen = 24; return nil }},
			&command{words: "terminal length <n>", run: pageLength},
		),
		show: cmds(
			&command{words: "show interfaces brief", run: showWith(procurveBrief)},
			&command{words: "show system", run: showWith(procurveSystem)},
		),
		version: procurveVersion, saved: nil,
	}
}

// pressAnyKey is the ProCurve login: a copyright notice, then the switch
// waits for a key before its first prompt.
func pressAnyKey(s *session) error {
	if err := s.write("\r\nHP J9773A 2530-24G-PoEP Switch\r\nSoftware revision YA.16.10.0009\r\n\r\n" +
		"(C) Copyright 2020 Hewlett Packard Enterprise Development LP\r\n\r\nPress any key to continue"); err != nil {
		return err
	}
	_, err := s.readKey()
	s.write("\r\n")
	return err
}

func aoscxVendor() (*vendor, campus) {
	v := &vendor{
		name: "aruba_aoscx", hostname: "cx1", serverVersion: "SSH-2.0-OpenSSH_8.4",
		banner:  "Aruba CX lab switch. Authorized access only.",
		pager:   "-- MORE --, next page: Space, next line: Enter, quit: q",
		ifNames: [4]string{"1/1/1", "1/1/2", "1/1/3", "1/1/4"},
		errs: errStyle{
			invalid:    "Invalid input: %[1]s",
			incomplete: "% Command incomplete.",
			ambiguous:  "% Ambiguous command.",
		},
		prompt: func(s *session) string { return ciscoPrompt(s, " ") },
		modes: func(s *session) string {
			switch s.cli.mode {
			case modeIf:
				return "config-if"
			case modeVlan:
				return "config-vlan-" + itoa(s.cli.vlan)
			}
			return "config"
		},
		running: aoscxRunning,
	}
	return v, campus{
		desc: "description", shut: "shutdown", noShut: "no shutdown", vlans: true,
		paging: cmds(
			&command{words: "no page", run: func(s *session, _ *call) []string { s.cli.pageLen = 0; return nil }},
			&command{words: "page", run: func(s *session, _ *call) []string { s.cli.pageLen = 24; return nil }},
			&command{words: "terminal length <n>", run: pageLength},
		),
		show: cmds(
			&command{words: "show system", run: showWith(aoscxSystem)},
			&command{words: "show interface brief", run: showWith(aoscxBrief)},
		),
		version: aoscxVersion, saved: []string{"Success"},
	}
}

func os10Vendor() (*vendor, campus) {
	v := &vendor{
		name: "dell_os10", hostname: "os10", serverVersion: "SSH-2.0-OpenSSH_7.9p1 Debian-10+deb10u2",
		banner:  "Dell EMC Networking OS10 Enterprise. Authorized access only.",
		pager:   "--more--",
		ifNames: [4]string{"ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/3", "ethernet1/1/4"},
		abbrev:  map[string]string{"ethernet": "eth"},
		errs: errStyle{
			invalid:    "% Error: Unrecognized command.",
			incomplete: "% Error: Incomplete command.",
			ambiguous:  "% Error: Ambiguous command.",
		},
		prompt: func(s *session) string { return ciscoPrompt(s, " ") },
		modes: func(s *session) string {
			if s.cli.mode == modeIf {
				return "conf-if-" + shortIf(s.cli.iface, s.d.v.abbrev)
			}
			return "config"
		},
		running: os10Running,
	}
	return v, campus{
		desc: "description", shut: "shutdown", noShut: "no shutdown",
		paging: cmds(&command{words: "terminal length <n>", run: pageLength}),
		show: cmds(
			&command{words: "show interface status", run: showWith(os10Status)},
		),
		version: os10Version, saved: nil,
	}
}

func fastironVendor() (*vendor, campus) {
	v := &vendor{
		name: "brocade_fastiron", hostname: "icx1", serverVersion: "SSH-2.0-RomSShell_5.40",
		banner:  "ICX lab switch. Authorized access only.",
		pager:   "--More--, next page: Space, next line: Return key, quit: Control-c",
		ifNames: [4]string{"ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/3", "ethernet1/1/4"},
		abbrev:  map[string]string{"ethernet": "e"},
		enable:  true, enableFail: []string{"Error - Incorrect username or password."},
		errs: errStyle{
			invalid:    "Invalid input -> %[1]s\nType ? for a list",
			incomplete: "Incomplete command.",
			ambiguous:  "Ambiguous input -> %[1]s",
		},
		prompt: func(s *session) string {
			p := ciscoPrompt(s, "")
			return "SSH@" + p
		},
		modes: func(s *session) string {
			switch s.cli.mode {
			case modeIf:
				return "config-if-e1000-" + strings.TrimPrefix(s.cli.iface, "ethernet")
			case modeVlan:
				return "config-vlan-" + itoa(s.cli.vlan)
			}
			return "config"
		},
		running: fastironRunning,
	}
	return v, campus{
		desc: "port-name", shut: "disable", noShut: "enable", vlans: true,
		paging: cmds(
			&command{words: "skip-page-display", priv: true, run: func(s *session, _ *call) []string {
				s.cli.pageLen = 0
				return []string{"Disable page display mode"}
			}},
			&command{words: "page-display", priv: true, run: func(s *session, _ *call) []string {
				s.cli.pageLen = 24
				return []string{"Enable page display mode"}
			}},
		),
		show: cmds(
			&command{words: "show interfaces brief", run: showWith(fastironBrief)},
		),
		version: fastironVersion, saved: []string{"Write startup-config done."},
	}
}

// pageLength sets the page length from the command's last number.
func pageLength(s *session, c *call) []string {
	n, _ := strconv.Atoi(c.args[len(c.args)-1])
	if n < 0 || n > 512 {
		return s.invalidAt(c, len(c.toks)-1)
	}
	s.cli.pageLen = n
	return nil
}

func showWith(f func(st *state) []string) func(*session, *call) []string {
	return func(s *session, _ *call) []string { return f(s.view()) }
}

// campusTables builds the exec, config, interface and VLAN tables of one
// of the Cisco-like CLIs.
func campusTables(v *vendor, c campus) map[mode][]*command {
	exec := cmds(
		&command{words: "enable", run: cEnable},
		&command{words: "disable", run: func(s *session, _ *call) []string { s.cli.priv = !s.d.enableLocked(); return nil }},
		&command{words: "exit", run: say(quitLine)},
		&command{words: "logout", run: say(quitLine)},
		&command{words: "show version", run: showWith(c.version)},
		&command{words: "show running-config", priv: true, run: showWith(v.running)},
		&command{words: "configure terminal", priv: true, run: cConfigure},
		&command{words: "write memory", priv: true, run: say(c.saved...)},
	)
	if c.configureBare {
		exec = append(exec, cmds(&command{words: "configure", priv: true, run: cConfigure})...)
	}
	exec = append(append(exec, c.paging...), c.show...)
	config := cmds(
		&command{words: "hostname <word>", run: cHostname},
		&command{words: "interface <word>", run: cInterface},
		&command{words: "interface <word> <word>", run: cInterface},
		&command{words: "end", run: cEnd},
		&command{words: "exit", run: cEnd},
	)
	ifc := cmds(
		&command{words: c.desc + " <line>", run: setIf(func(i *Interface, cl *call) { i.Description = cl.args[0] })},
		&command{words: "no " + c.desc, run: setIf(func(i *Interface, _ *call) { i.Description = "" })},
		&command{words: c.shut, run: setIf(func(i *Interface, _ *call) { i.Enabled = false })},
		&command{words: c.noShut, run: setIf(func(i *Interface, _ *call) { i.Enabled = true })},
		&command{words: "exit", run: cExit},
		&command{words: "end", run: cEnd},
	)
	tables := map[mode][]*command{modeExec: exec, modeIf: ifc}
	if c.vlans {
		config = append(config, cmds(
			&command{words: "vlan <n>", run: cVlan},
			&command{words: "no vlan <n>", run: cNoVlan},
		)...)
		tables[modeVlan] = cmds(
			&command{words: "name <word>", run: setVlan(func(vl *VLAN, cl *call) { vl.Name = cl.args[0] })},
			&command{words: "exit", run: cExit},
			&command{words: "end", run: cEnd},
		)
	}
	tables[modeConfig] = config
	return tables
}
