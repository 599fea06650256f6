package devsim

import (
	"fmt"
	"strings"
)

// FortiOS: "FGT1 # " at the root, "FGT1 (interface) # " inside a config
// block, "FGT1 (port1) # " inside an entry. A block edits a copy of the
// configuration that "next" and "end" save and "abort" drops. The console
// pages ("--More-- ") while "config system console" has "set output more",
// the factory default, for every session.

func init() {
	v := &vendor{
		name: "fortinet", hostname: "FGT1", serverVersion: "SSH-2.0-FortiSSH_7.2",
		pager: "--More-- ",
		ifaces: []Interface{
			{Name: "port1", Description: "uplink", Enabled: true, IP: "198.51.100.2/29"},
			{Name: "port2", Description: "lan", Enabled: true, IP: "10.10.0.1/24"},
			{Name: "port3", Enabled: false},
			{Name: "port4", Enabled: true},
		},
		errs: errStyle{
			invalidFirst: "Unknown action 0",
			invalid:      "command parse error before '%[1]s'\nCommand fail. Return code -61",
			incomplete:   "Command fail. Return code -61",
			ambiguous:    "ambiguous command before '%[1]s'\nCommand fail. Return code -61",
		},
		prompt: func(s *session) string {
			host := s.hostname()
			switch s.cli.mode {
			case modeConfig:
				return host + " (" + s.cli.block + ") # "
			case modeIf:
				return host + " (" + s.cli.iface + ") # "
			}
			return host + " # "
		},
		login: fortiLogin,
		isShow: func(line string) bool {
			w, _, _ := strings.Cut(line, " ")
			return w == "get" || w == "show"
		},
		running: fortiConfig, shell: cliShell, exec: cliExec,
	}
	v.tables = fortiTables()
	vendors[v.name] = v
}

// fortiLogin pages as the console setting says, shows the post-login
// banner when configured and waits for its "a".
func fortiLogin(s *session) error {
	s.cli.pageLen = 0
	if s.view().consoleMore() {
		s.cli.pageLen = 24
	}
	if !s.d.cfg.PostLoginBanner {
		return nil
	}
	if err := s.write("Use of this system is restricted to authorized users.\r\n(Press 'a' to accept):"); err != nil {
		return err
	}
	for {
		c, err := s.readKey()
		if err != nil {
			return err
		}
		if c == 'a' {
			return s.write("\r\n")
		}
	}
}

func (st *state) consoleMore() bool { return st.console != "standard" }

func fortiTables() map[mode][]*command {
	block := func(name string) func(*session, *call) []string {
		return func(s *session, _ *call) []string {
			s.cli.mode, s.cli.block, s.cli.cand = modeConfig, name, s.view()
			return nil
		}
	}
	inBlock := func(name string, f func(s *session, c *call) []string) func(*session, *call) []string {
		return func(s *session, c *call) []string {
			if s.cli.block != name {
				return s.invalidAt(c, 1)
			}
			return f(s, c)
		}
	}
	exec := cmds(
		&command{words: "get system status", run: showWith(fortiStatus)},
		&command{words: "get system interface", run: showWith(fortiInterfaces)},
		&command{words: "get system console", run: func(s *session, _ *call) []string {
			out := "more"
			if !s.view().consoleMore() {
				out = "standard"
			}
			return []string{"output              : " + out}
		}},
		&command{words: "show system interface", run: showWith(func(st *state) []string { return fortiInterfaceBlock(st) })},
		&command{words: "show full-configuration", run: showWith(fortiConfig)},
		&command{words: "config system interface", run: block("interface")},
		&command{words: "config system global", run: block("global")},
		&command{words: "config system console", run: block("console")},
		&command{words: "exit", run: say(quitLine)},
	)
	common := cmds(
		&command{words: "end", run: fortiEnd},
		&command{words: "abort", run: fortiAbort},
	)
	config := append(cmds(
		&command{words: "edit <word>", run: inBlock("interface", fortiEdit)},
		&command{words: "set hostname <word>", run: inBlock("global", cHostname)},
		&command{words: "set admintimeout <n>", run: inBlock("global", say())},
		&command{words: "set output <word>", run: inBlock("console", fortiOutput)},
		&command{words: "show", run: func(s *session, _ *call) []string { return fortiInterfaceBlock(s.cli.cand) }},
	), common...)
	entry := append(cmds(
		&command{words: "set description <line>", run: setIf(func(i *Interface, c *call) { i.Description = c.args[0] })},
		&command{words: "unset description", run: setIf(func(i *Interface, _ *call) { i.Description = "" })},
		&command{words: "set status <word>", run: fortiStatusSet},
		&command{words: "next", run: func(s *session, _ *call) []string {
			s.commitCandidate()
			s.cli.mode, s.cli.cand = modeConfig, s.view()
			return nil
		}},
	), common...)
	return map[mode][]*command{modeExec: exec, modeConfig: config, modeIf: entry}
}

func fortiEdit(s *session, c *call) []string {
	name := strings.Trim(c.args[0], `"`)
	s.edit(func(st *state) {
		if st.iface(name) == nil {
			st.ifaces = append(st.ifaces, Interface{Name: name, Enabled: true, MAC: fmt.Sprintf("0050.56a1.%04x", len(st.ifaces)+1)})
		}
	})
	s.cli.mode, s.cli.iface = modeIf, name
	return nil
}

func fortiStatusSet(s *session, c *call) []string {
	switch c.args[0] {
	case "up", "down":
		return setIf(func(i *Interface, c *call) { i.Enabled = c.args[0] == "up" })(s, c)
	}
	return []string{"value parse error before '" + c.args[0] + "'", "Command fail. Return code -61"}
}

func fortiOutput(s *session, c *call) []string {
	switch c.args[0] {
	case "more", "standard":
		s.edit(func(st *state) { st.console = c.args[0] })
		return nil
	}
	return []string{"value parse error before '" + c.args[0] + "'", "Command fail. Return code -61"}
}

// fortiEnd saves and leaves the block (from an entry, the block too).
func fortiEnd(s *session, _ *call) []string {
	s.commitCandidate()
	s.cli.mode, s.cli.cand, s.cli.block = modeExec, nil, ""
	if s.view().consoleMore() {
		s.cli.pageLen = 24
	} else {
		s.cli.pageLen = 0
	}
	return nil
}

// fortiAbort drops what the block changed since the last save.
func fortiAbort(s *session, _ *call) []string {
	s.cli.mode, s.cli.cand, s.cli.block = modeExec, nil, ""
	return nil
}

func fortiStatus(st *state) []string {
	return []string{
		"Version: FortiGate-60F v7.2.8,build1639,240313 (GA.M)",
		"Firmware Signature: certified",
		"Virus-DB: 92.02142(2024-03-04 16:27)",
		"Extended DB: 92.02142(2024-03-04 16:26)",
		"AV AI/ML Model: 2.15057(2024-03-04 15:54)",
		"IPS-DB: 27.00722(2024-03-04 01:39)",
		"IPS-ETDB: 0.00000(2001-01-01 00:00)",
		"APP-DB: 27.00722(2024-03-04 01:39)",
		"INDUSTRIAL-DB: 27.00722(2024-03-04 01:39)",
		"IPS Malicious URL Database: 4.00877(2024-03-05 02:12)",
		"Serial-Number: FGT60FTK21090ABC",
		"BIOS version: 05000007",
		"System Part-Number: P24278-04",
		"Log hard disk: Not available",
		"Hostname: " + st.hostname,
		"Private Encryption: Disable",
		"Operation Mode: NAT",
		"Current virtual domain: root",
		"Max number of virtual domains: 10",
		"Virtual domains status: 1 in NAT mode, 0 in TP mode",
		"Virtual domain configuration: disable",
		"FIPS-CC mode: disable",
		"Current HA mode: standalone",
		"Branch point: 1639",
		"Release Version Information: GA",
		"System time: " + st.clock().UTC().Format("Mon Jan _2 15:04:05 2006"),
		"Last reboot reason: warm reboot",
	}
}

func fortiInterfaces(st *state) []string {
	var out []string
	for _, i := range st.ifaces {
		ip, mask := "0.0.0.0", "0.0.0.0"
		if a, m := prefixMask(i.IP); a != "" {
			ip, mask = a, m
		}
		status := "up"
		if !i.Enabled {
			status = "down"
		}
		out = append(out, fmt.Sprintf("== [ %s ]", i.Name),
			fmt.Sprintf("name: %s   mode: static    ip: %s %s   status: %s    netbios-forward: disable    type: physical   ring-rx: 0   ring-tx: 0   netflow-sampler: disable    sflow-sampler: disable    src-check: enable    explicit-web-proxy: disable    explicit-ftp-proxy: disable    proxy-captive-portal: disable    mtu-override: disable    wccp: disable    drop-overlapped-fragment: disable    drop-fragment: disable",
				i.Name, ip, mask, status))
	}
	return out
}

func fortiInterfaceBlock(st *state) []string {
	out := []string{"config system interface"}
	for _, i := range st.ifaces {
		out = append(out, fmt.Sprintf("    edit %q", i.Name), `        set vdom "root"`)
		if a, m := prefixMask(i.IP); a != "" {
			out = append(out, "        set ip "+a+" "+m, "        set allowaccess ping https ssh")
		}
		out = append(out, "        set type physical")
		if i.Description != "" {
			out = append(out, fmt.Sprintf("        set description %q", i.Description))
		}
		if !i.Enabled {
			out = append(out, "        set status down")
		}
		out = append(out, "    next")
	}
	return append(out, "end")
}

func fortiConfig(st *state) []string {
	out := []string{"#config-version=FGT60F-7.2.8-FW-build1639-240313:opmode=0:vdom=0:user=admin",
		"#conf_file_ver=48211939752305", "#buildno=1639", "#global_vdom=1",
		"config system global", "    set admintimeout 30", fmt.Sprintf("    set hostname %q", st.hostname), "end",
		"config system console"}
	if !st.consoleMore() {
		out = append(out, "    set output standard")
	}
	out = append(out, "end")
	return append(out, fortiInterfaceBlock(st)...)
}
