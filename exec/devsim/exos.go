package devsim

import (
	"fmt"
	"strings"
)

// ExtremeXOS: no enable and no configuration mode; "configure ..." lines
// apply at once. The prompt counts the commands of the session
// ("sw1.5 # ") and opens with "* " while the configuration is unsaved.

func init() {
	v := &vendor{
		name: "extreme_exos", hostname: "sw1", serverVersion: "SSH-2.0-OpenSSH_8.2",
		banner: "ExtremeXOS\nCopyright (C) 1996-2023 Extreme Networks. All rights reserved.\n" +
			"Lab switch. Authorized access only.",
		pager:   "Press <SPACE> to continue or <Q> to quit:",
		ifNames: [4]string{"1", "2", "3", "4"},
		errs: errStyle{
			invalid:    "%% Invalid input detected at '^' marker.",
			incomplete: "%% Incomplete command",
			ambiguous:  `%% Ambiguous command: "%[2]s"`,
			caret:      [3]bool{errInvalid: true},
		},
		prompt: func(s *session) string {
			p := fmt.Sprintf("%s.%d # ", s.hostname(), s.cli.lines+1)
			if s.d.isUnsaved() {
				p = "* " + p
			}
			return p
		},
		running: exosConfig, shell: cliShell, exec: cliExec,
	}
	v.tables = map[mode][]*command{modeExec: exosTable()}
	vendors[v.name] = v
}

func exosTable() []*command {
	port := func(f func(i *Interface, c *call)) func(*session, *call) []string {
		return func(s *session, c *call) []string {
			found := false
			s.edit(func(st *state) {
				if i := st.iface(c.args[0]); i != nil {
					f(i, c)
					found = true
				}
			})
			if !found {
				return s.invalidAt(c, 2)
			}
			s.d.setUnsaved(true)
			return nil
		}
	}
	return cmds(
		&command{words: "show version", run: showWith(exosVersion)},
		&command{words: "show switch", run: showWith(exosSwitch)},
		&command{words: "show ports description", run: showWith(exosDescriptions)},
		&command{words: "show configuration", run: showWith(exosConfig)},
		&command{words: "disable clipaging", run: func(s *session, _ *call) []string { s.cli.pageLen = 0; return nil }},
		&command{words: "enable clipaging", run: func(s *session, _ *call) []string { s.cli.pageLen = 24; return nil }},
		&command{words: "disable cli prompting", run: func(s *session, _ *call) []string { s.cli.noConfirm = true; return nil }},
		&command{words: "enable cli prompting", run: func(s *session, _ *call) []string { s.cli.noConfirm = false; return nil }},
		&command{words: "configure ports <word> description-string <line>", run: port(func(i *Interface, c *call) { i.Description = c.args[1] })},
		&command{words: "unconfigure ports <word> description-string", run: port(func(i *Interface, _ *call) { i.Description = "" })},
		&command{words: "disable ports <word>", run: port(func(i *Interface, _ *call) { i.Enabled = false })},
		&command{words: "enable ports <word>", run: port(func(i *Interface, _ *call) { i.Enabled = true })},
		&command{words: "configure snmp sysName <word>", run: func(s *session, c *call) []string {
			s.d.setUnsaved(true)
			return cHostname(s, c)
		}},
		&command{words: "save configuration", run: exosSave},
		&command{words: "exit", run: say(quitLine)},
		&command{words: "logout", run: say(quitLine)},
		&command{words: "quit", run: say(quitLine)},
	)
}

func exosSave(s *session, _ *call) []string {
	if !s.cli.noConfirm {
		ans := s.ask("Do you want to save configuration to primary.cfg and overwrite it? (y/N) ", true)
		if a := strings.ToLower(strings.TrimSpace(ans)); a != "y" && a != "yes" {
			return []string{"Save configuration cancelled."}
		}
	}
	s.d.setUnsaved(false)
	return []string{"Saving configuration on master ....... done!", "Configuration saved to primary.cfg successfully."}
}

func (d *Device) isUnsaved() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.unsaved
}

func (d *Device) setUnsaved(u bool) {
	d.mu.Lock()
	d.unsaved = u
	d.mu.Unlock()
}

func exosVersion(*state) []string {
	out := []string{
		"Switch      : 800605-00-06 1931G-01234 Rev 6.0 BootROM: 2.0.1.7    IMG: 31.7.1.4",
	}
	for slot := 1; slot <= 8; slot++ {
		out = append(out, fmt.Sprintf("Slot-%d     : 800605-00-06 1931G-0%04d Rev 6.0 BootROM: 2.0.1.7    IMG: 31.7.1.4", slot, 1234+slot))
	}
	return append(out,
		"PSU-1       : Internal PSU-1 800607-00-02 1930W-40012",
		"PSU-2       : Internal PSU-2 800607-00-02 1930W-40013",
		"",
		"Image   : ExtremeXOS version 31.7.1.4 by release-manager",
		"          on Wed Mar 15 10:17:23 EDT 2023",
		"Diagnostics : 5.16",
		"Certified Version : EXOS Linux  4.19.117, FIPS fips-ecp-2.0.16",
		"",
		"Build Tools Version: 4.4.2",
		"Stack Manager : 31.7.1.4",
		"Boot Manager  : 2.0.1.7",
		"",
		"Licensed features : Base",
		"Feature pack      : none",
		"Core license      : Advanced Edge",
		"",
		"Uptime : 23 days 4 hours 12 minutes 45 seconds",
		"Slots in stack : 8",
		"Master : Slot-1",
		"Backup : Slot-2",
	)
}

func exosSwitch(st *state) []string {
	return []string{
		"",
		"SysName:          " + st.hostname,
		"SysLocation:      lab rack 3",
		"SysContact:       noc",
		"System MAC:       00:04:96:9A:00:01",
		"System Type:      X465-48T",
		"",
		"SysHealth check:  Enabled (Normal)",
		"Recovery Mode:    All",
		"",
		"Current State:    OPERATIONAL",
		"Image Selected:   secondary",
		"Image Booted:     secondary",
		"Primary ver:      31.7.1.4",
		"Secondary ver:    31.7.1.4",
	}
}

func exosDescriptions(st *state) []string {
	out := []string{"", "Port      Display String          Description-String", "========= ==================== =================================================="}
	for _, i := range st.ifaces {
		out = append(out, fmt.Sprintf("%-9s %-20s %s", i.Name, "", i.Description))
	}
	return append(out, "========= ==================== ==================================================")
}

func exosConfig(st *state) []string {
	out := []string{"#", "# Module devmgr configuration.", "#",
		fmt.Sprintf("configure snmp sysName %q", st.hostname), "configure snmp sysContact \"noc\"", "#",
		"# Module vlan configuration.", "#", "configure vlan default delete ports all"}
	for _, vl := range st.vlans {
		if vl.ID != 1 {
			out = append(out, fmt.Sprintf("create vlan %q", vl.Name), fmt.Sprintf("configure vlan %s tag %d", vl.Name, vl.ID))
		}
	}
	for _, i := range st.ifaces {
		if !i.Enabled {
			out = append(out, "disable ports "+i.Name)
		}
		if i.Description != "" {
			out = append(out, fmt.Sprintf("configure ports %s description-string %q", i.Name, i.Description))
		}
	}
	return out
}
