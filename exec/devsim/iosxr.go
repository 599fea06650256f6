package devsim

import (
	"fmt"
	"strings"
)

// IOS-XR: no enable, a candidate configuration that needs "commit", and a
// timestamp line before every show output.

const xrNode = "RP/0/RSP0/CPU0"

// xrUncommitted is the question "end" and "exit" ask with changes pending.
const xrUncommitted = "Uncommitted changes found, commit them before exiting(yes/no/cancel)? [cancel]:"

func init() {
	v := &vendor{
		name: "cisco_iosxr", hostname: "xr1", serverVersion: "SSH-2.0-Cisco-2.0",
		banner: "IOS XR lab router. Authorized access only.",
		pager:  " --More-- ",
		ifaces: []Interface{
			{Name: "MgmtEth0/RSP0/CPU0/0", Description: "mgmt", Enabled: true, IP: "192.0.2.30/24"},
			{Name: "GigabitEthernet0/0/0/0", Description: "to core-rtr1", Enabled: true, IP: "10.0.0.1/30"},
			{Name: "GigabitEthernet0/0/0/1", Description: "customer A", Enabled: true, IP: "10.0.1.1/24"},
			{Name: "GigabitEthernet0/0/0/2", Enabled: false},
		},
		abbrev:    map[string]string{"GigabitEthernet": "Gi", "TenGigE": "Te", "MgmtEth": "Mg", "Loopback": "Lo", "Bundle-Ether": "BE"},
		creatable: []string{"Loopback", "Bundle-Ether"},
		errs: errStyle{
			invalid:    "% Invalid input detected at '^' marker.",
			incomplete: "% Incomplete command.",
			ambiguous:  `%% Ambiguous command:  "%[2]s"`,
			caret:      [3]bool{errInvalid: true},
		},
		prompt: func(s *session) string {
			if s.cli.mode == modeExec {
				return xrNode + ":" + s.hostname() + "#"
			}
			return xrNode + ":" + s.hostname() + "(" + s.d.v.modeName(s) + ")#"
		},
		running: xrRunning, shell: cliShell, exec: cliExec,
	}
	v.tables = xrTables(v)
	vendors[v.name] = v
}

func xrTables(v *vendor) map[mode][]*command {
	show := func(f func(st *state) []string) func(*session, *call) []string {
		return func(s *session, _ *call) []string {
			st := s.view()
			return append([]string{st.clock().UTC().Format("Mon Jan _2 15:04:05.000 MST")}, f(st)...)
		}
	}
	exec := cmds(
		&command{words: "terminal length <n>", run: cTermLength},
		&command{words: "terminal width <n>", run: cTermWidth},
		&command{words: "show version", run: show(xrVersion)},
		&command{words: "show ipv4 interface brief", run: show(xrIPBrief)},
		&command{words: "show running-config", run: show(xrRunning)},
		&command{words: "show lldp neighbors", run: show(xrLLDP)},
		&command{words: "show arp", run: show(xrArp)},
		&command{words: "configure", run: xrConfigure},
		&command{words: "configure terminal", run: xrConfigure},
		&command{words: "ping <word>", run: cPing},
		&command{words: "exit", run: say(quitLine)},
		&command{words: "logout", run: say(quitLine)},
	)
	common := cmds(
		&command{words: "commit", run: xrCommit},
		&command{words: "end", run: xrEnd},
		&command{words: "abort", run: xrAbort},
	)
	config := append(cmds(
		&command{words: "hostname <word>", run: cHostname},
		&command{words: "interface <word>", run: cInterface},
		&command{words: "interface <word> <word>", run: cInterface},
		&command{words: "exit", run: xrEnd},
	), common...)
	ifc := append(cmds(
		&command{words: "description <line>", run: setIf(func(i *Interface, c *call) { i.Description = c.args[0] })},
		&command{words: "no description", run: setIf(func(i *Interface, _ *call) { i.Description = "" })},
		&command{words: "shutdown", run: setIf(func(i *Interface, _ *call) { i.Enabled = false })},
		&command{words: "no shutdown", run: setIf(func(i *Interface, _ *call) { i.Enabled = true })},
		&command{words: "ipv4 address <word> <word>", run: cIPMask},
		&command{words: "no ipv4 address", run: setIf(func(i *Interface, _ *call) { i.IP = "" })},
		&command{words: "exit", run: cExit},
	), common...)
	return map[mode][]*command{modeExec: exec, modeConfig: config, modeIf: ifc}
}

func xrConfigure(s *session, _ *call) []string {
	s.cli.mode = modeConfig
	s.cli.cand = s.view()
	return nil
}

// dirty reports whether the candidate differs from the running config.
func (s *session) dirty() bool {
	if s.cli.cand == nil {
		return false
	}
	run := s.view()
	return joinLines(s.d.v.running(run)) != joinLines(s.d.v.running(s.cli.cand))
}

// commitCandidate makes the candidate the running configuration.
func (s *session) commitCandidate() {
	s.d.mu.Lock()
	s.d.st = s.cli.cand.clone()
	s.d.mu.Unlock()
}

func xrCommit(s *session, _ *call) []string {
	if !s.dirty() {
		return []string{"% No configuration changes to commit."}
	}
	s.commitCandidate()
	return nil
}

func xrAbort(s *session, _ *call) []string {
	s.cli.mode, s.cli.cand = modeExec, nil
	return nil
}

// xrEnd leaves config mode, asking about uncommitted changes: yes commits,
// no discards, anything else (cancel) stays in config mode.
func xrEnd(s *session, _ *call) []string {
	if s.dirty() {
		switch strings.ToLower(strings.TrimSpace(s.ask(xrUncommitted, true))) {
		case "yes", "y":
			s.commitCandidate()
		case "no", "n":
		default:
			return nil
		}
	}
	s.cli.mode, s.cli.cand = modeExec, nil
	return nil
}

func xrVersion(st *state) []string {
	out := []string{
		"",
		"Cisco IOS XR Software, Version 6.5.3[Default]",
		"Copyright (c) 2019 by Cisco Systems, Inc.",
		"",
		"ROM: System Bootstrap, Version 12.0(20140214:101513) [ASR9K ROMMON], ",
		"",
		st.hostname + " uptime is 5 weeks, 2 days, 3 hours, 11 minutes",
		`System image file is "bootflash:disk0/asr9k-os-mbi-6.5.3/0x100305/mbiasr9k-rsp3.vm"`,
		"",
		"cisco ASR9K Series (Intel 686 F6M14S4) processor with 12582912K bytes of memory.",
		"Intel 686 F6M14S4 processor at 2134MHz, Revision 2.174",
		"ASR 9006 4 Line Card Slot Chassis with V2 AC PEM",
		"",
		"2 Management Ethernet",
		"12 GigabitEthernet",
		"219k bytes of non-volatile configuration memory.",
		"2880M bytes of hard disk.",
		"11702256k bytes of disk0: (Sector size 512 bytes).",
		"",
		"Configuration register on node 0/RSP0/CPU0 is 0x1922",
		"Boot device on node 0/RSP0/CPU0 is disk0:",
		"Package active on node 0/RSP0/CPU0:",
	}
	for _, p := range []string{"iosxr-infra", "iosxr-fwding", "iosxr-routing", "iosxr-diags", "asr9k-scfclient", "iosxr-mpls", "iosxr-mgbl"} {
		out = append(out, fmt.Sprintf("%s, V 6.5.3[Default], Cisco Systems, at disk0:%s-6.5.3", p, p),
			"    Built on Thu Aug 22 14:13:05 UTC 2019", "")
	}
	return out
}

func xrIPBrief(st *state) []string {
	out := []string{"", fmt.Sprintf("%-30s %-15s %-15s %-8s %s", "Interface", "IP-Address", "Status", "Protocol", "Vrf-Name")}
	for _, i := range st.ifaces {
		ip, status, proto := "unassigned", "Up", "Up"
		if p, ok := prefix(i.IP); ok {
			ip = p.Addr().String()
		}
		if !i.Enabled {
			status, proto = "Shutdown", "Down"
		}
		out = append(out, fmt.Sprintf("%-30s %-15s %-15s %-8s %-8s", i.Name, ip, status, proto, "default"))
	}
	return out
}

func xrLLDP(st *state) []string {
	out := []string{"Capability codes:",
		"        (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
		"        (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other", "",
		fmt.Sprintf("%-15s %-24s %-10s %-14s %s", "Device ID", "Local Intf", "Hold-time", "Capability", "Port ID")}
	ns := st.neighbors()
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%-15s %-24s %-10d %-14s %s", n.name, n.local, 120, "R", n.port))
	}
	return append(out, "", fmt.Sprintf("Total entries displayed: %d", len(ns)))
}

func xrArp(st *state) []string {
	rule := strings.Repeat("-", 79)
	out := []string{"", rule, "0/RSP0/CPU0", rule,
		fmt.Sprintf("%-15s %-10s %-15s %-10s %-5s %s", "Address", "Age", "Hardware Addr", "State", "Type", "Interface")}
	for _, e := range st.arp() {
		age, state := "00:01:10", "Dynamic"
		if e.own {
			age, state = "-", "Interface"
		}
		out = append(out, fmt.Sprintf("%-15s %-10s %-15s %-10s %-5s %s", e.ip, age, e.mac, state, "ARPA", e.iface))
	}
	return out
}

func xrRunning(st *state) []string {
	out := []string{"Building configuration...", "!! IOS XR Configuration version = 6.5.3",
		"!! Last configuration change at Mon Oct  4 09:15:02 2021 by admin", "!",
		"hostname " + st.hostname, "clock timezone UTC 0", "logging console informational",
		"username admin", " group root-lr", " group cisco-support",
		" secret 5 $1$Yb3m$Xq0cV7n2Rk9sT4wLp8eHd/", "!"}
	for _, i := range st.ifaces {
		out = append(out, "interface "+i.Name)
		if i.Description != "" {
			out = append(out, " description "+i.Description)
		}
		if a, m := prefixMask(i.IP); a != "" {
			out = append(out, " ipv4 address "+a+" "+m)
		}
		if !i.Enabled {
			out = append(out, " shutdown")
		}
		out = append(out, "!")
	}
	return append(out, "ssh server v2", "ssh server vrf default", "end")
}
