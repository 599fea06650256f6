package devsim

import (
	"fmt"
	"strconv"
	"strings"
)

// The Cisco-like platforms (IOS, NX-OS, EOS) share one command grammar;
// what differs (prompts, error wording, enable, output formats) is data.

var iosErrs = errStyle{
	invalid:    "% Invalid input detected at '^' marker.",
	incomplete: "% Incomplete command.",
	ambiguous:  `%% Ambiguous command:  "%[2]s"`,
	caret:      [3]bool{errInvalid: true},
	blankAfter: [3]bool{errInvalid: true, errIncomplete: true},
}

var nxosErrs = errStyle{
	invalid:      "% Invalid command at '^' marker.",
	incomplete:   "% Incomplete command at '^' marker.",
	ambiguous:    "% Ambiguous command at '^' marker.",
	caret:        [3]bool{true, true, true},
	privRequired: "% Permission denied for the role",
}

var eosErrs = errStyle{
	invalid:      "% Invalid input",
	incomplete:   "% Incomplete command",
	ambiguous:    "% Ambiguous command",
	privRequired: "% Invalid input (privileged mode required)",
}

func init() {
	ios := &vendor{
		name: "cisco_ios", hostname: "sw1", serverVersion: "SSH-2.0-Cisco-1.25",
		banner:    "*** Authorized access only. Disconnect IMMEDIATELY if you are not an authorized user! ***",
		pager:     " --More-- ",
		ifNames:   [4]string{"GigabitEthernet1/0/1", "GigabitEthernet1/0/2", "GigabitEthernet1/0/3", "GigabitEthernet1/0/4"},
		abbrev:    map[string]string{"GigabitEthernet": "Gi", "FastEthernet": "Fa", "TenGigabitEthernet": "Te", "Port-channel": "Po", "Vlan": "Vl", "Loopback": "Lo"},
		creatable: []string{"Loopback", "Vlan", "Port-channel"},
		enable:    true, errs: iosErrs, enableTries: 3, enableFail: []string{"% Bad secrets", ""},
		configBanner: "Enter configuration commands, one per line.  End with CNTL/Z.",
		prompt:       func(s *session) string { return ciscoPrompt(s, "") },
		running:      iosRunning, shell: cliShell, exec: cliExec,
	}
	nxos := &vendor{
		name: "cisco_nxos", hostname: "n9k1", serverVersion: "SSH-2.0-OpenSSH_8.3 PKIX[12.5.1]",
		banner:    "Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\nUnauthorized access is prohibited.",
		pager:     " --More-- ",
		ifNames:   [4]string{"Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4"},
		abbrev:    map[string]string{"Ethernet": "Eth", "port-channel": "Po", "loopback": "Lo", "Vlan": "Vlan", "mgmt": "mgmt"},
		creatable: []string{"loopback", "Vlan", "port-channel"},
		enable:    true, errs: nxosErrs,
		configBanner: "Enter configuration commands, one per line.  End with CNTL/Z.",
		prompt:       func(s *session) string { return ciscoPrompt(s, " ") },
		running:      nxosRunning, shell: cliShell, exec: cliExec,
	}
	eos := &vendor{
		name: "arista_eos", hostname: "leaf1", serverVersion: "SSH-2.0-OpenSSH_7.8",
		banner:    "Arista Networks EOS. Authorized use only.",
		pager:     " --More-- ",
		ifNames:   [4]string{"Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4"},
		abbrev:    map[string]string{"Ethernet": "Et", "Management": "Ma", "Port-Channel": "Po", "Vlan": "Vl", "Loopback": "Lo"},
		creatable: []string{"Loopback", "Vlan", "Port-Channel"},
		enable:    true, errs: eosErrs,
		prompt:  func(s *session) string { return ciscoPrompt(s, "") },
		running: eosRunning, shell: cliShell, exec: cliExec,
	}
	for _, v := range []*vendor{ios, nxos, eos} {
		v.tables = ciscoTables(v)
		vendors[v.name] = v
	}
}

// ciscoTables builds the exec, config, config-if and config-vlan tables.
func ciscoTables(v *vendor) map[mode][]*command {
	show := func(f func(v *vendor, st *state) []string) func(*session, *call) []string {
		return func(s *session, _ *call) []string { return f(v, s.view()) }
	}
	exec := cmds(
		&command{words: "enable", run: cEnable},
		&command{words: "disable", run: func(s *session, _ *call) []string {
			s.cli.priv = !s.d.enableLocked()
			return nil
		}},
		&command{words: "exit", run: say(quitLine)},
		&command{words: "logout", run: say(quitLine)},
		&command{words: "terminal length <n>", run: cTermLength},
		&command{words: "terminal width <n>", run: cTermWidth},
		&command{words: "terminal monitor", run: say()},
		&command{words: "show version", run: show(ciscoVersion)},
		&command{words: "show clock", run: func(s *session, _ *call) []string { return []string{clock(s.view())} }},
		&command{words: "show ip interface brief", run: show(ipIntBrief)},
		&command{words: "show interfaces status", run: show(intStatus)},
		&command{words: "show interface status", run: show(intStatus)}, // NX-OS spelling
		&command{words: "show interfaces description", run: show(intDescription)},
		&command{words: "show vlan", run: show(vlanFull)},
		&command{words: "show vlan brief", run: show(vlanBrief)},
		&command{words: "show cdp neighbors", run: show(cdpNeighbors)},
		&command{words: "show lldp neighbors", run: show(lldpNeighbors)},
		&command{words: "show mac address-table", run: show(macTable)},
		&command{words: "show ip arp", run: show(ipArp)},
		&command{words: "show arp", run: show(ipArp)},
		&command{words: "show running-config", priv: true, run: show(func(v *vendor, st *state) []string { return v.running(st) })},
		&command{words: "show tech-support", priv: true, run: func(s *session, _ *call) []string {
			s.cli.pace = techSupportPace
			return techSupport(v, s.view())
		}},
		&command{words: "show startup-config", priv: true, run: show(func(v *vendor, st *state) []string { return v.running(st) })},
		&command{words: "configure terminal", priv: true, run: cConfigure},
		&command{words: "write memory", priv: true, run: cWrite},
		&command{words: "copy running-config startup-config", priv: true, run: cCopy},
		&command{words: "ping <word>", run: cPing},
		&command{words: "traceroute <word>", run: say("% Unrecognized host or address, or protocol not running.")},
		&command{words: "ssh <line>", run: say("% Connection refused by remote host")},
		&command{words: "telnet <word>", run: say("% Connection refused by remote host")},
		&command{words: "send <line>", priv: true, run: say()},
		&command{words: "setup", priv: true, run: say("% Setup is not available in this session")},
	)
	if v.name != "cisco_ios" {
		// NX-OS and EOS enter config mode with a bare "configure" too.
		exec = append(exec, cmds(&command{words: "configure", priv: true, run: cConfigure})...)
	}
	config := cmds(
		&command{words: "hostname <word>", run: cHostname},
		&command{words: "interface <word>", run: cInterface},
		&command{words: "interface <word> <word>", run: cInterface},
		&command{words: "vlan <n>", run: cVlan},
		&command{words: "no vlan <n>", run: cNoVlan},
		&command{words: "end", run: cEnd},
		&command{words: "exit", run: cEnd},
		&command{words: "do <line>", run: cDo},
	)
	ifc := cmds(
		&command{words: "description <line>", run: setIf(func(i *Interface, c *call) { i.Description = c.args[0] })},
		&command{words: "no description", run: setIf(func(i *Interface, _ *call) { i.Description = "" })},
		&command{words: "shutdown", run: setIf(func(i *Interface, _ *call) { i.Enabled = false })},
		&command{words: "no shutdown", run: setIf(func(i *Interface, _ *call) { i.Enabled = true })},
		&command{words: "switchport", run: setIf(func(i *Interface, _ *call) { i.Mode, i.IP = "access", "" })},
		&command{words: "no switchport", run: setIf(func(i *Interface, _ *call) { i.Mode = "" })},
		&command{words: "switchport mode access", run: setIf(func(i *Interface, _ *call) { i.Mode, i.IP = "access", "" })},
		&command{words: "switchport mode trunk", run: setIf(func(i *Interface, _ *call) { i.Mode, i.IP = "trunk", "" })},
		&command{words: "switchport access vlan <n>", run: cAccessVlan},
		&command{words: "no ip address", run: setIf(func(i *Interface, _ *call) { i.IP = "" })},
		&command{words: "exit", run: cExit},
		&command{words: "end", run: cEnd},
		&command{words: "do <line>", run: cDo},
	)
	if v.name == "cisco_ios" || v.name == "cisco_nxos" {
		ifc = append(ifc, cmds(&command{words: "ip address <word> <word>", run: cIPMask})...)
	}
	if v.name != "cisco_ios" {
		ifc = append(ifc, cmds(&command{words: "ip address <word>", run: cIPPrefix})...)
	}
	vlan := cmds(
		&command{words: "name <word>", run: setVlan(func(vl *VLAN, c *call) { vl.Name = c.args[0] })},
		&command{words: "no name", run: setVlan(func(vl *VLAN, _ *call) { vl.Name = fmt.Sprintf("VLAN%04d", vl.ID) })},
		&command{words: "exit", run: cExit},
		&command{words: "end", run: cEnd},
		&command{words: "do <line>", run: cDo},
	)
	return map[mode][]*command{modeExec: exec, modeConfig: config, modeIf: ifc, modeVlan: vlan}
}

// invalidAt reports the vendor's invalid-input error under token i.
func (s *session) invalidAt(c *call, i int) []string {
	return s.syntaxError(&s.d.v.errs, c.line, c.toks, &matchErr{kind: errInvalid, at: i})
}

// cEnable asks for the enable secret when one is set. IOS asks three
// times before "% Bad secrets"; NX-OS and EOS give up after one try.
func cEnable(s *session, _ *call) []string {
	secret := s.d.cfg.EnableSecret
	if s.cli.priv || (secret == "" && !s.d.cfg.EnableEmpty) {
		s.cli.priv = true
		return nil
	}
	v := s.d.v
	if v.enableUser {
		user := s.ask("Username: ", true)
		if s.cli.dead {
			return nil
		}
		if user != s.d.cfg.Username {
			secret = "\x00" // any password is wrong now, as the device would not tell
		}
	}
	for range max(v.enableTries, 1) {
		ans := s.ask("Password: ", false)
		if s.cli.dead {
			return nil
		}
		if ans == secret {
			s.cli.priv = true
			return nil
		}
	}
	if v.enableFail != nil {
		return v.enableFail
	}
	return []string{"% Access denied"}
}

func cTermLength(s *session, c *call) []string {
	n, _ := strconv.Atoi(c.args[0])
	if n < 0 || n > 512 {
		return s.invalidAt(c, 2)
	}
	s.cli.pageLen = n
	if s.d.v.name == "arista_eos" && n == 0 {
		return []string{"Pagination disabled."}
	}
	return nil
}

func cTermWidth(s *session, c *call) []string {
	n, _ := strconv.Atoi(c.args[0])
	if n < 0 || n > 32767 {
		return s.invalidAt(c, 2)
	}
	s.cli.width = n
	if s.d.v.name == "arista_eos" {
		return []string{fmt.Sprintf("Width set to %d columns.", n)}
	}
	return nil
}

func cConfigure(s *session, _ *call) []string {
	s.cli.mode = modeConfig
	if s.d.v.configBanner == "" {
		return nil
	}
	return []string{s.d.v.configBanner}
}

func cWrite(s *session, _ *call) []string {
	switch s.d.v.name {
	case "arista_eos":
		return []string{"Copy completed successfully."}
	case "cisco_nxos":
		return []string{"[########################################] 100%", "Copy complete, now saving to disk (please wait)...", "Copy complete."}
	}
	return []string{"Building configuration...", "[OK]"}
}

func cCopy(s *session, c *call) []string {
	if s.d.v.name == "cisco_ios" {
		s.ask("Destination filename [startup-config]? ", true)
	}
	return cWrite(s, c)
}

func cPing(s *session, c *call) []string {
	return []string{
		"Type escape sequence to abort.",
		fmt.Sprintf("Sending 5, 100-byte ICMP Echos to %s, timeout is 2 seconds:", c.args[0]),
		"!!!!!",
		"Success rate is 100 percent (5/5), round-trip min/avg/max = 1/1/2 ms",
	}
}

func cHostname(s *session, c *call) []string {
	s.edit(func(st *state) { st.hostname = c.args[0] })
	return nil
}

func cInterface(s *session, c *call) []string {
	name := ""
	s.edit(func(st *state) { name = st.findIface(strings.Join(c.args, ""), true, s.d.v.creatable) })
	if name == "" {
		return s.invalidAt(c, 1)
	}
	s.cli.mode, s.cli.iface = modeIf, name
	return nil
}

func cVlan(s *session, c *call) []string {
	id, _ := strconv.Atoi(c.args[0])
	if id < 1 || id > 4094 {
		return s.invalidAt(c, 1)
	}
	s.edit(func(st *state) { st.addVLAN(id, fmt.Sprintf("VLAN%04d", id)) })
	s.cli.mode, s.cli.vlan = modeVlan, id
	return nil
}

func cNoVlan(s *session, c *call) []string {
	id, _ := strconv.Atoi(c.args[0])
	if id <= 1 || id > 4094 {
		return s.invalidAt(c, 2)
	}
	s.edit(func(st *state) { st.deleteVLAN(id) })
	return nil
}

func cEnd(s *session, _ *call) []string {
	s.cli.mode = modeExec
	return nil
}

func cExit(s *session, _ *call) []string {
	s.cli.mode = modeConfig
	return nil
}

// cDo runs an exec command from config mode.
func cDo(s *session, c *call) []string {
	return s.run(&s.d.v.errs, s.d.v.tables[modeExec], c.args[0])
}

func setIf(f func(i *Interface, c *call)) func(*session, *call) []string {
	return func(s *session, c *call) []string {
		s.edit(func(st *state) {
			if i := st.iface(s.cli.iface); i != nil {
				f(i, c)
			}
		})
		return nil
	}
}

func setVlan(f func(v *VLAN, c *call)) func(*session, *call) []string {
	return func(s *session, c *call) []string {
		s.edit(func(st *state) {
			if v := st.vlan(s.cli.vlan); v != nil {
				f(v, c)
			}
		})
		return nil
	}
}

func cAccessVlan(s *session, c *call) []string {
	id, _ := strconv.Atoi(c.args[0])
	if id < 1 || id > 4094 {
		return s.invalidAt(c, 3)
	}
	return setIf(func(i *Interface, _ *call) {
		i.Mode, i.VLAN, i.IP = "access", id, ""
	})(s, c)
}

func cIPMask(s *session, c *call) []string {
	p, ok := maskToPrefix(c.args[0], c.args[1])
	if !ok {
		return s.invalidAt(c, 2)
	}
	return setIf(func(i *Interface, _ *call) { i.IP, i.Mode = p, "" })(s, c)
}

func cIPPrefix(s *session, c *call) []string {
	p, ok := prefix(c.args[0])
	if !ok || !p.Addr().Is4() {
		return s.invalidAt(c, 2)
	}
	return setIf(func(i *Interface, _ *call) { i.IP, i.Mode = p.String(), "" })(s, c)
}

// cliExec answers an exec request on a CLI platform: the command runs as
// if typed at the privileged prompt, without paging.
func cliExec(s *session, cmd string) (string, string, int) {
	s.cli = cliState{priv: true, width: 511}
	out, _ := s.dispatch(cmd)
	return joinLines(out), "", 0
}
