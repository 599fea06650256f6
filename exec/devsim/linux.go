package devsim

import (
	"fmt"
	"strconv"
	"strings"
)

// The linux platform answers exec requests (one command per channel, the
// way the linux driver works) and also offers a bash-like shell; generic
// is a minimal "host$ " shell for devices no driver knows.

func init() {
	vendors["linux"] = &vendor{
		name: "linux", hostname: "srv1", serverVersion: "SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10",
		banner:  "Welcome to Ubuntu 22.04.4 LTS (GNU/Linux 5.15.0-105-generic x86_64)",
		ifaces:  hostIfaces("lo", "eth0", "eth1", "eth2"),
		prompt:  func(s *session) string { return s.user + "@" + s.hostname() + ":~$ " },
		running: linuxRunning, shell: cliShell, exec: linuxExec,
		errs: errStyle{}, tables: map[mode][]*command{modeExec: cmds(&command{words: "<line>", run: linuxLine})},
	}
	vendors["generic"] = &vendor{
		name: "generic", hostname: "device1", serverVersion: "SSH-2.0-OpenSSH_7.4",
		banner:  "Authorized access only.",
		ifaces:  hostIfaces("mgmt0", "eth0", "eth1", "eth2"),
		prompt:  func(s *session) string { return s.hostname() + "$ " },
		running: linuxRunning, shell: cliShell, exec: genericExec,
		errs:   errStyle{invalid: "%% Unknown command: %[2]s", incomplete: "%% Incomplete command: %[2]s", ambiguous: "%% Ambiguous command: %[2]s"},
		tables: map[mode][]*command{modeExec: genericTable()},
	}
}

func genericTable() []*command {
	return cmds(
		&command{words: "show version", run: func(s *session, _ *call) []string {
			return []string{"Generic Network OS 1.4.2", "Hostname: " + s.hostname(), "Uptime: 12 days, 3:04:05"}
		}},
		&command{words: "show interfaces", run: func(s *session, _ *call) []string {
			return linuxIPBrief(s.view())
		}},
		&command{words: "show running-config", run: func(s *session, _ *call) []string { return linuxRunning(s.view()) }},
		&command{words: "echo <line>", run: func(_ *session, c *call) []string { return []string{c.args[0]} }},
		&command{words: "help", run: say("Commands: show version, show interfaces, show running-config, echo, exit")},
		&command{words: "exit", run: say(quitLine)},
		&command{words: "logout", run: say(quitLine)},
	)
}

func genericExec(s *session, cmd string) (string, string, int) {
	s.cli = cliState{priv: true}
	out, _ := s.dispatch(cmd)
	if len(out) > 0 && strings.HasPrefix(out[0], "% ") {
		return "", joinLines(out), 1
	}
	return joinLines(out), "", 0
}

// linuxLine runs a shell line typed at the interactive prompt.
func linuxLine(s *session, c *call) []string {
	if f := strings.Fields(c.args[0]); f[0] == "exit" || f[0] == "logout" {
		return []string{quitLine}
	}
	stdout, stderr, _ := linuxExec(s, c.args[0])
	return strings.Split(strings.TrimSuffix(stdout+stderr, "\n"), "\n")
}

// linuxExec answers one command the way bash on Ubuntu would.
func linuxExec(s *session, cmd string) (stdout, stderr string, status int) {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return "", "", 0
	}
	st := s.view()
	switch f[0] {
	case "true", ":":
		return "", "", 0
	case "false":
		return "", "", 1
	case "exit":
		n := 0
		if len(f) > 1 {
			n, _ = strconv.Atoi(f[1])
		}
		return "", "", n & 0xff
	case "echo":
		return strings.Join(f[1:], " ") + "\n", "", 0
	case "hostname":
		return st.hostname + "\n", "", 0
	case "whoami":
		return s.user + "\n", "", 0
	case "id":
		return fmt.Sprintf("uid=1000(%[1]s) gid=1000(%[1]s) groups=1000(%[1]s),4(adm),27(sudo)\n", s.user), "", 0
	case "uname":
		if len(f) > 1 && f[1] == "-a" {
			return "Linux " + st.hostname + " 5.15.0-105-generic #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux\n", "", 0
		}
		return "Linux\n", "", 0
	case "uptime":
		return " 09:12:45 up 12 days,  3:04,  1 user,  load average: 0.08, 0.03, 0.01\n", "", 0
	case "cat":
		if len(f) > 1 && f[1] == "/etc/os-release" {
			return osRelease, "", 0
		}
		if len(f) > 1 {
			return "", "cat: " + f[1] + ": No such file or directory\n", 1
		}
	case "ip":
		if len(f) > 2 && f[1] == "-br" && strings.HasPrefix("address", f[2]) {
			return joinLines(linuxIPBrief(st)), "", 0
		}
		return "", "Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n", 255
	case "ls":
		return "", "", 0
	}
	return "", "bash: " + f[0] + ": command not found\n", 127
}

const osRelease = `PRETTY_NAME="Ubuntu 22.04.4 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.4 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
UBUNTU_CODENAME=jammy
`

// linuxIPBrief renders "ip -br addr".
func linuxIPBrief(st *state) []string {
	var out []string
	for _, i := range st.ifaces {
		state := "UP"
		switch {
		case !i.Enabled:
			state = "DOWN"
		case i.Name == "lo":
			state = "UNKNOWN"
		}
		addr := i.IP
		if i.Name == "lo" && addr == "" {
			addr = "127.0.0.1/8 ::1/128"
		}
		out = append(out, strings.TrimRight(fmt.Sprintf("%-16s %-14s %s", i.Name, state, addr), " "))
	}
	return out
}

// linuxRunning is what RunningConfig reports for hosts: a netplan-like
// summary of hostname and addresses.
func linuxRunning(st *state) []string {
	out := []string{"hostname: " + st.hostname, "interfaces:"}
	for _, i := range st.ifaces {
		out = append(out, fmt.Sprintf("  %s: {enabled: %t, address: %q, description: %q}", i.Name, i.Enabled, i.IP, i.Description))
	}
	return out
}

// hostIfaces are the default interfaces of a host: addresses on all but
// the last, which is down.
func hostIfaces(names ...string) []Interface {
	return []Interface{
		{Name: names[0], Enabled: true},
		{Name: names[1], Enabled: true, IP: "192.0.2.20/24"},
		{Name: names[2], Enabled: true, IP: "198.51.100.5/24"},
		{Name: names[3], Enabled: false},
	}
}
