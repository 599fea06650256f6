package devsim

import (
	"fmt"
	"strconv"
	"strings"
)

// Huawei VRP: "<host>" user view, "[host]" system view entered with
// system-view, "[host-GigabitEthernet0/0/1]" sub-views; quit goes up one
// view, return back to user view. On VRP5 each line applies at once; with
// Config.TwoStage (VRP8, CloudEngine) system view edits a candidate that
// commit applies, the prompt reads "[~host]", and "[*host]" while changes
// are pending.

// vrpUncommitted is the question leaving system view with changes pending.
const vrpUncommitted = "Warning: Uncommitted configurations found, commit them before exiting? [Y(yes)/N(no)/C(cancel)]:"

func init() {
	const more = "  ---- More ----"
	v := &vendor{
		name: "huawei_vrp", hostname: "sw1", serverVersion: "SSH-2.0--",
		banner: "Info: The max number of VTY users is 5, and the number\n" +
			"      of current VTY users on line is 1.\n" +
			"      The current login time is 2024-03-05 09:12:45.",
		pager: more,
		// The pager erases itself by moving the cursor back over it.
		pagerErase: fmt.Sprintf("\x1b[%dD%s\x1b[%dD", len(more), strings.Repeat(" ", len(more)), len(more)),
		ifNames:    [4]string{"GigabitEthernet0/0/1", "GigabitEthernet0/0/2", "GigabitEthernet0/0/3", "GigabitEthernet0/0/4"},
		abbrev:     map[string]string{"GigabitEthernet": "GE", "Vlanif": "Vlanif", "LoopBack": "LoopBack"},
		creatable:  []string{"Vlanif", "LoopBack"},
		errs: errStyle{
			invalid:    "Error: Unrecognized command found at '^' position.",
			incomplete: "Error: Incomplete command found at '^' position.",
			ambiguous:  "Error: Ambiguous command found at '^' position.",
			caret:      [3]bool{true, true, true},
		},
		prompt: vrpPrompt,
		isShow: func(line string) bool {
			w, _, _ := strings.Cut(line, " ")
			return strings.HasPrefix("display", w) && len(w) >= 3
		},
		running: vrpRunning, shell: cliShell, exec: cliExec,
	}
	v.tables = vrpTables(v)
	vendors[v.name] = v
}

func vrpPrompt(s *session) string {
	host := s.hostname()
	view := ""
	switch s.cli.mode {
	case modeExec:
		return "<" + host + ">"
	case modeIf:
		view = "-" + s.cli.iface
	case modeVlan:
		view = "-vlan" + itoa(s.cli.vlan)
	}
	mark := ""
	if s.d.cfg.TwoStage {
		mark = "~"
		if s.dirty() {
			mark = "*"
		}
	}
	return "[" + mark + host + view + "]"
}

func vrpTables(v *vendor) map[mode][]*command {
	display := cmds(
		&command{words: "display version", run: showWith(vrpVersion)},
		&command{words: "display interface brief", run: showWith(vrpBrief)},
		&command{words: "display current-configuration", run: showWith(vrpRunning)},
	)
	exec := append(cmds(
		&command{words: "screen-length <n> temporary", run: func(s *session, c *call) []string {
			s.cli.pageLen, _ = strconv.Atoi(c.args[0])
			return []string{"Info: The configuration takes effect on the current user terminal interface only."}
		}},
		&command{words: "system-view", run: vrpSystemView},
		&command{words: "save", run: say("Info: The current configuration was saved to the device successfully.")},
		&command{words: "quit", run: say(quitLine)},
	), display...)
	ifc := cmds(
		&command{words: "description <line>", run: setIf(func(i *Interface, c *call) { i.Description = c.args[0] })},
		&command{words: "undo description", run: setIf(func(i *Interface, _ *call) { i.Description = "" })},
		&command{words: "shutdown", run: setIf(func(i *Interface, _ *call) { i.Enabled = false })},
		&command{words: "undo shutdown", run: setIf(func(i *Interface, _ *call) { i.Enabled = true })},
		&command{words: "port link-type access", run: setIf(func(i *Interface, _ *call) { i.Mode, i.IP = "access", "" })},
		&command{words: "port link-type trunk", run: setIf(func(i *Interface, _ *call) { i.Mode, i.IP = "trunk", "" })},
		&command{words: "port default vlan <n>", run: cAccessVlan},
		&command{words: "commit", run: vrpCommit},
		&command{words: "quit", run: cExit},
		&command{words: "return", run: vrpReturn},
	)
	vlan := cmds(
		&command{words: "description <line>", run: setVlan(func(vl *VLAN, c *call) { vl.Name = c.args[0] })},
		&command{words: "commit", run: vrpCommit},
		&command{words: "quit", run: cExit},
		&command{words: "return", run: vrpReturn},
	)
	config := append(cmds(
		&command{words: "sysname <word>", run: cHostname},
		&command{words: "interface <word>", run: cInterface},
		&command{words: "interface <word> <word>", run: cInterface},
		&command{words: "vlan <n>", run: cVlan},
		&command{words: "undo vlan <n>", run: cNoVlan},
		&command{words: "commit", run: vrpCommit},
		&command{words: "quit", run: vrpReturn},
		&command{words: "return", run: vrpReturn},
	), display...)
	return map[mode][]*command{modeExec: exec, modeConfig: config, modeIf: append(ifc, display...), modeVlan: vlan}
}

func vrpSystemView(s *session, _ *call) []string {
	s.cli.mode = modeConfig
	if s.d.cfg.TwoStage {
		s.cli.cand = s.view()
		return []string{"Enter system view, return user view with return command."}
	}
	return []string{"Enter system view, return user view with Ctrl+Z."}
}

func vrpCommit(s *session, _ *call) []string {
	if s.cli.cand == nil {
		return s.syntaxError(&s.d.v.errs, "commit", tokenize("commit"), &matchErr{kind: errInvalid})
	}
	s.commitCandidate()
	s.cli.cand = s.view()
	return nil
}

// vrpReturn goes back to user view; with changes pending it asks first:
// yes commits them, no drops them, anything else stays in the view.
func vrpReturn(s *session, _ *call) []string {
	if s.dirty() {
		switch strings.ToLower(strings.TrimSpace(s.ask(vrpUncommitted, true))) {
		case "y", "yes":
			s.commitCandidate()
		case "n", "no":
		default:
			return nil
		}
	}
	s.cli.mode, s.cli.cand = modeExec, nil
	return nil
}

func vrpVersion(st *state) []string {
	return []string{
		"Huawei Versatile Routing Platform Software",
		"VRP (R) software, Version 5.170 (S5720 V200R019C10SPC500)",
		"Copyright (C) 2000-2020 HUAWEI TECH Co., Ltd.",
		"HUAWEI S5720-28X-SI-AC Routing Switch uptime is 23 days, 4 hours, 12 minutes",
		"",
		"ES5D2S28Q001 0(Master) : uptime is 23 days, 4 hours, 11 minutes",
		"DDR             Memory Size : 512   M bytes",
		"FLASH Total     Memory Size : 512   M bytes",
		"FLASH Available Memory Size : 327   M bytes",
		"Pcb           Version   : VER.B",
		"BootROM       Version   : 020a.0001",
		"BootLoad      Version   : 020a.0001",
		"CPLD          Version   : 0109",
		"Software      Version   : VRP (R) Software, Version 5.170 (V200R019C10SPC500)",
		"FLASH         Version   : 0000.0000",
		"",
		"PWR1 information",
		"Pcb           Version   : PWR VER.A",
		"FAN information",
		"Pcb           Version   : FAN VER.A",
		fmt.Sprintf("Device name             : %s", st.hostname),
	}
}

func vrpBrief(st *state) []string {
	out := []string{"PHY: Physical", "*down: administratively down", "(l): loopback", "(s): spoofing",
		"(b): BFD down", "(e): ETHOAM down", "(dl): DLDP down", "(d): Dampening Suppressed",
		"InUti/OutUti: input utility/output utility",
		fmt.Sprintf("%-26s %-6s %-9s %-6s %-6s %-9s %s", "Interface", "PHY", "Protocol", "InUti", "OutUti", "inErrors", "outErrors")}
	for _, i := range st.ifaces {
		phy, proto := "up", "up"
		if !i.Enabled {
			phy, proto = "*down", "down"
		}
		out = append(out, fmt.Sprintf("%-26s %-6s %-9s %-6s %-6s %-9d %d", i.Name, phy, proto, "0.01%", "0.01%", 0, 0))
	}
	return out
}

func vrpRunning(st *state) []string {
	out := []string{"!Software Version V200R019C10SPC500", "#", "sysname " + st.hostname, "#"}
	var ids []string
	for _, vl := range st.vlans {
		if vl.ID != 1 {
			ids = append(ids, itoa(vl.ID))
		}
	}
	out = append(out, "vlan batch "+strings.Join(ids, " "), "#")
	for _, vl := range st.vlans {
		if vl.ID != 1 {
			out = append(out, fmt.Sprintf("vlan %d", vl.ID), " description "+vl.Name, "#")
		}
	}
	for _, i := range st.ifaces {
		out = append(out, "interface "+i.Name)
		if i.Description != "" {
			out = append(out, " description "+i.Description)
		}
		switch i.Mode {
		case "access":
			out = append(out, " port link-type access", fmt.Sprintf(" port default vlan %d", max(i.VLAN, 1)))
		case "trunk":
			out = append(out, " port link-type trunk", " port trunk allow-pass vlan 2 to 4094")
		}
		if a, m := prefixMask(i.IP); a != "" {
			out = append(out, " ip address "+a+" "+m)
		}
		if !i.Enabled {
			out = append(out, " shutdown")
		}
		out = append(out, "#")
	}
	return append(out, "user-interface vty 0 4", " authentication-mode aaa", " protocol inbound ssh", "#", "return")
}
