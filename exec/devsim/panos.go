package devsim

import (
	"fmt"
	"strings"
)

// PAN-OS: "admin@PA-VM> " operational mode and "admin@PA-VM# " below an
// "[edit]" line in configuration mode, entered with configure. Changes go
// to the candidate configuration, which outlives the session until commit
// applies it or "revert config" drops it. The pager ("lines 1-23") is on
// until "set cli pager off".

func init() {
	v := &vendor{
		name: "paloalto_panos", hostname: "PA-VM", serverVersion: "SSH-2.0-OpenSSH_8.0",
		pagerAt: func(first, last int) string { return fmt.Sprintf("lines %d-%d ", first, last) },
		ifaces: []Interface{
			{Name: "ethernet1/1", Description: "untrust", Enabled: true, IP: "198.51.100.2/29"},
			{Name: "ethernet1/2", Description: "trust", Enabled: true, IP: "10.10.0.1/24"},
			{Name: "ethernet1/3", Enabled: true},
			{Name: "ethernet1/4", Enabled: true},
		},
		errs: errStyle{
			invalidFirst: "Unknown command: %[1]s",
			invalid:      "Invalid syntax.",
			incomplete:   "Invalid syntax.",
			ambiguous:    "Invalid syntax.",
		},
		prompt: func(s *session) string {
			p := s.user + "@" + s.hostname()
			if s.cli.mode == modeExec {
				return p + "> "
			}
			return "\r\n[edit]\r\n" + p + "# "
		},
		running: panosConfig, shell: cliShell, exec: cliExec,
	}
	v.tables = panosTables(v)
	// The pager is on for every session until "set cli pager off".
	vendors[v.name] = v
}

func panosTables(v *vendor) map[mode][]*command {
	ifSet := func(f func(i *Interface, c *call)) func(*session, *call) []string {
		return func(s *session, c *call) []string {
			found := false
			s.edit(func(st *state) {
				if i := st.iface(c.args[0]); i != nil {
					f(i, c)
					found = true
				}
			})
			if !found {
				return []string{"Invalid syntax."}
			}
			return nil
		}
	}
	exec := cmds(
		&command{words: "show system info", run: showWith(panosInfo)},
		&command{words: "show interface all", run: showWith(panosInterfaces)},
		&command{words: "show config running", run: func(s *session, _ *call) []string { return panosConfig(s.view()) }},
		&command{words: "set cli pager off", run: func(s *session, _ *call) []string { s.cli.pageLen = 0; return nil }},
		&command{words: "set cli pager on", run: func(s *session, _ *call) []string { s.cli.pageLen = 23; return nil }},
		&command{words: "set cli scripting-mode <word>", run: say()},
		&command{words: "configure", run: func(s *session, _ *call) []string {
			s.cli.mode, s.cli.cand = modeConfig, s.d.candidate()
			return []string{"Entering configuration mode"}
		}},
		&command{words: "exit", run: say(quitLine)},
		&command{words: "quit", run: say(quitLine)},
	)
	config := cmds(
		&command{words: "set deviceconfig system hostname <word>", run: cHostname},
		&command{words: "set network interface ethernet <word> comment <line>", run: ifSet(func(i *Interface, c *call) { i.Description = c.args[1] })},
		&command{words: "delete network interface ethernet <word> comment", run: ifSet(func(i *Interface, _ *call) { i.Description = "" })},
		&command{words: "set network interface ethernet <word> link-state <word>", run: ifSet(func(i *Interface, c *call) { i.Enabled = c.args[1] != "down" })},
		&command{words: "commit", run: panosCommit},
		&command{words: "revert config", run: func(s *session, _ *call) []string {
			s.cli.cand = s.view()
			s.d.keepCandidate(nil)
			return nil
		}},
		&command{words: "show", run: func(s *session, _ *call) []string { return panosConfig(s.cli.cand) }},
		&command{words: "run <line>", run: func(s *session, c *call) []string { return s.run(&v.errs, v.tables[modeExec], c.args[0]) }},
		&command{words: "exit", run: panosExit},
		&command{words: "quit", run: panosExit},
	)
	return map[mode][]*command{modeExec: exec, modeConfig: config}
}

// panosExit leaves configuration mode; the candidate stays for the next
// configure, by this user or another.
func panosExit(s *session, _ *call) []string {
	if s.dirty() {
		s.d.keepCandidate(s.cli.cand)
	}
	s.cli.mode, s.cli.cand = modeExec, nil
	return []string{"Exiting configuration mode"}
}

func panosCommit(s *session, _ *call) []string {
	if !s.dirty() {
		return []string{"There are no changes to commit."}
	}
	s.commitCandidate()
	s.d.keepCandidate(nil)
	return []string{"Commit job 7 is in progress. Use Ctrl+C to return to command prompt",
		"..........55%.......75%.....98%.......100%", "Configuration committed successfully"}
}

// candidate is a copy of the candidate configuration kept from an earlier
// session, or of the running one.
func (d *Device) candidate() *state {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending != nil {
		return d.pending.clone()
	}
	return d.st.clone()
}

// keepCandidate stores a candidate configuration across sessions; nil
// means none is pending.
func (d *Device) keepCandidate(st *state) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st != nil {
		st = st.clone()
	}
	d.pending = st
}

// Pending reports whether a candidate configuration is waiting for a
// commit (PAN-OS keeps it across sessions).
func (d *Device) Pending() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pending != nil
}

func panosInfo(st *state) []string {
	return []string{
		"",
		"hostname: " + st.hostname,
		"ip-address: 192.0.2.40",
		"public-ip-address: unknown",
		"netmask: 255.255.255.0",
		"default-gateway: 192.0.2.1",
		"ip-assignment: static",
		"ipv6-address: unknown",
		"ipv6-link-local-address: fe80::250:56ff:fea1:1/64",
		"mac-address: 00:50:56:a1:00:01",
		"time: " + st.clock().UTC().Format("Mon Jan _2 15:04:05 2006"),
		"uptime: 23 days, 4:12:45",
		"family: vm",
		"model: PA-VM",
		"serial: 007951000123456",
		"vm-mac-base: 7C:89:C1:00:00:00",
		"vm-mac-count: 256",
		"vm-uuid: 4A1B2C3D-0000-1111-2222-333344445555",
		"vm-cpuid: ESX:F2060300FFFBAB1F",
		"vm-license: VM-SERIES-2",
		"vm-cap-tier: 6.5 GB",
		"vm-cpu-count: 2",
		"vm-memory: 6848136",
		"vm-mode: VMWare ESXi",
		"sw-version: 10.2.8",
		"global-protect-client-package-version: 0.0.0",
		"app-version: 8817-8621",
		"threat-version: 8817-8621",
		"wildfire-version: 0",
		"url-filtering-version: 20240305.20150",
		"operational-mode: normal",
		"multi-vsys: off",
	}
}

func panosInterfaces(st *state) []string {
	out := []string{"total configured hardware interfaces: " + itoa(len(st.ifaces)), "",
		fmt.Sprintf("%-19s %-5s %-24s %-17s %s", "name", "id", "speed/duplex/state", "mac address", ""),
		strings.Repeat("-", 80)}
	for n, i := range st.ifaces {
		state := "1000/full/up"
		if !i.Enabled {
			state = "ukn/ukn/down(power-down)"
		}
		out = append(out, fmt.Sprintf("%-19s %-5d %-24s %s", i.Name, 16+n, state, colonMAC(i.MAC)))
	}
	return out
}

// panosConfig is the configuration in "set" form, as "show" prints it with
// the set output format.
func panosConfig(st *state) []string {
	out := []string{"set deviceconfig system hostname " + st.hostname}
	for _, i := range st.ifaces {
		if i.IP != "" {
			out = append(out, fmt.Sprintf("set network interface ethernet %s layer3 ip %s", i.Name, i.IP))
		}
		if i.Description != "" {
			out = append(out, fmt.Sprintf("set network interface ethernet %s comment %s", i.Name, i.Description))
		}
		if !i.Enabled {
			out = append(out, fmt.Sprintf("set network interface ethernet %s link-state down", i.Name))
		}
	}
	return out
}
