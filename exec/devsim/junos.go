package devsim

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Junos: "user@host> " operational mode, a candidate configuration edited
// with set/delete and activated by commit, and an "[edit]" line above every
// configuration-mode prompt.

var junosIfName = regexp.MustCompile(`^((ge|xe|et|fe|mge)-\d+/\d+/\d+|(ae|lo|irb|vme|em|fxp|me)\d*)$`)

func init() {
	v := &vendor{
		name: "juniper_junos", hostname: "ex1", serverVersion: "SSH-2.0-OpenSSH_7.5",
		banner:  "--- JUNOS 21.4R3-S3.4 Kernel 64-bit  JNPR-12.1-20221014.8c2c8c5_buil",
		pager:   "---(more)---",
		ifNames: [4]string{"ge-0/0/0", "ge-0/0/1", "ge-0/0/2", "ge-0/0/3"},
		errs: errStyle{
			invalidFirst: "unknown command.",
			invalid:      "syntax error, expecting <command>: %[1]s",
			incomplete:   "syntax error, expecting <command>.",
			ambiguous:    "'%[1]s' is ambiguous.",
			caret:        [3]bool{true, true, true},
			completions:  true,
		},
		cfgErrs: &errStyle{
			invalidFirst: "unknown command.",
			invalid:      "syntax error.",
			incomplete:   "syntax error.",
			ambiguous:    "'%[1]s' is ambiguous.",
			caret:        [3]bool{true, true, true},
			completions:  true,
		},
		prompt: func(s *session) string {
			p := s.user + "@" + s.hostname()
			if s.cli.mode == modeExec {
				return p + "> "
			}
			return "\r\n[edit]\r\n" + p + "# "
		},
		running: junosConfig, shell: cliShell, exec: cliExec,
	}
	v.tables = junosTables(v)
	vendors[v.name] = v
}

func junosTables(v *vendor) map[mode][]*command {
	show := func(f func(st *state) []string) func(*session, *call) []string {
		return func(s *session, _ *call) []string { return f(s.view()) }
	}
	exec := cmds(
		&command{words: "show version", run: show(junosVersion)},
		&command{words: "show interfaces terse", run: show(junosTerse)},
		&command{words: "show vlans", run: show(junosVlans)},
		&command{words: "show lldp neighbors", run: show(junosLLDP)},
		&command{words: "show arp", run: show(func(st *state) []string { return junosArp(st, true) })},
		&command{words: "show arp no-resolve", run: show(func(st *state) []string { return junosArp(st, false) })},
		&command{words: "show configuration", run: show(junosConfig)},
		&command{words: "show system uptime", run: say("Current time: 2024-05-02 09:12:45 UTC", "System booted: 2024-04-20 06:08:40 UTC (1w5d 03:04 ago)")},
		&command{words: "set cli screen-length <n>", run: jScreenLength},
		&command{words: "set cli screen-width <n>", run: func(_ *session, c *call) []string { return []string{"Screen width set to " + c.args[0]} }},
		&command{words: "configure", run: jConfigure},
		&command{words: "configure private", run: jConfigure},
		&command{words: "configure exclusive", run: jConfigure},
		&command{words: "ping <word>", run: say("PING: cannot resolve host")},
		&command{words: "ssh <line>", run: say("ssh: connect to host: Connection refused")},
		&command{words: "start shell", run: say("% Permission denied")},
		&command{words: "exit", run: say(quitLine)},
		&command{words: "quit", run: say(quitLine)},
	)
	ifSet := func(f func(i *Interface, c *call) bool) func(*session, *call) []string {
		return func(s *session, c *call) []string {
			if !junosIfName.MatchString(c.args[0]) {
				return s.syntaxError(v.cfgErrs, c.line, c.toks, &matchErr{kind: errInvalid, at: 2})
			}
			ok := true
			s.edit(func(st *state) {
				i := st.iface(c.args[0])
				if i == nil {
					st.ifaces = append(st.ifaces, Interface{Name: c.args[0], Enabled: true, MAC: fmt.Sprintf("0050.56a1.%04x", len(st.ifaces)+1)})
					i = &st.ifaces[len(st.ifaces)-1]
				}
				ok = f(i, c)
			})
			if !ok {
				return s.syntaxError(v.cfgErrs, c.line, c.toks, &matchErr{kind: errInvalid, at: len(c.toks) - 1})
			}
			return nil
		}
	}
	config := cmds(
		&command{words: "set system host-name <word>", run: cHostname},
		&command{words: "set interfaces <word> description <line>", run: ifSet(func(i *Interface, c *call) bool { i.Description = c.args[1]; return true })},
		&command{words: "delete interfaces <word> description", run: ifSet(func(i *Interface, _ *call) bool { i.Description = ""; return true })},
		&command{words: "set interfaces <word> disable", run: ifSet(func(i *Interface, _ *call) bool { i.Enabled = false; return true })},
		&command{words: "delete interfaces <word> disable", run: ifSet(func(i *Interface, _ *call) bool { i.Enabled = true; return true })},
		&command{words: "set interfaces <word> unit <n> family inet address <word>", run: ifSet(func(i *Interface, c *call) bool {
			p, ok := prefix(c.args[2])
			if ok {
				i.IP, i.Mode = p.String(), ""
			}
			return ok
		})},
		&command{words: "delete interfaces <word> unit <n> family inet", run: ifSet(func(i *Interface, _ *call) bool { i.IP = ""; return true })},
		&command{words: "set interfaces <word> unit <n> family ethernet-switching interface-mode <word>", run: ifSet(func(i *Interface, c *call) bool {
			if c.args[2] != "access" && c.args[2] != "trunk" {
				return false
			}
			i.Mode, i.IP = c.args[2], ""
			return true
		})},
		&command{words: "set interfaces <word> unit <n> family ethernet-switching vlan members <word>", run: jMembers},
		&command{words: "set vlans <word> vlan-id <n>", run: jVlan},
		&command{words: "delete vlans <word>", run: jDeleteVlan},
		&command{words: "commit", run: jCommit},
		&command{words: "commit check", run: say("configuration check succeeds")},
		&command{words: "commit and-quit", run: jCommitQuit},
		&command{words: "rollback", run: jRollback},
		&command{words: "rollback <n>", run: jRollback},
		&command{words: "show", run: func(s *session, _ *call) []string { return junosConfig(s.cli.cand)[1:] }},
		&command{words: "run <line>", run: func(s *session, c *call) []string { return s.run(&v.errs, v.tables[modeExec], c.args[0]) }},
		&command{words: "top", run: say()},
		&command{words: "exit", run: jExit},
		&command{words: "quit", run: jExit},
		&command{words: "exit configuration-mode", run: jExit},
	)
	return map[mode][]*command{modeExec: exec, modeConfig: config}
}

func jScreenLength(s *session, c *call) []string {
	n, _ := strconv.Atoi(c.args[0])
	s.cli.pageLen = n
	return []string{"Screen length set to " + c.args[0]}
}

func jConfigure(s *session, c *call) []string {
	s.cli.mode, s.cli.cand = modeConfig, s.view()
	if len(c.toks) > 1 && strings.HasPrefix("private", c.toks[1].text) {
		return []string{"warning: uncommitted changes will be discarded on exit", "Entering configuration mode"}
	}
	return []string{"Entering configuration mode"}
}

func jVlan(s *session, c *call) []string {
	id, _ := strconv.Atoi(c.args[1])
	if id < 1 || id > 4094 {
		return s.syntaxError(s.d.v.cfgErrs, c.line, c.toks, &matchErr{kind: errInvalid, at: 4})
	}
	s.edit(func(st *state) {
		st.vlans = slices.DeleteFunc(st.vlans, func(v VLAN) bool { return v.Name == c.args[0] })
		st.deleteVLAN(id)
		st.addVLAN(id, c.args[0])
	})
	return nil
}

func jDeleteVlan(s *session, c *call) []string {
	s.edit(func(st *state) {
		st.vlans = slices.DeleteFunc(st.vlans, func(v VLAN) bool { return v.Name == c.args[0] })
	})
	return nil
}

// jMembers sets an access port's VLAN by id or by name.
func jMembers(s *session, c *call) []string {
	var id int
	s.edit(func(st *state) {
		if n, err := strconv.Atoi(c.args[2]); err == nil {
			id = n
		}
		for _, v := range st.vlans {
			if v.Name == c.args[2] {
				id = v.ID
			}
		}
		if i := st.iface(c.args[0]); i != nil && id > 0 && i.Mode == "access" {
			i.VLAN = id
		}
	})
	if id == 0 && c.args[2] != "all" {
		return s.syntaxError(s.d.v.cfgErrs, c.line, c.toks, &matchErr{kind: errInvalid, at: len(c.toks) - 1})
	}
	return nil
}

func jCommit(s *session, _ *call) []string {
	s.commitCandidate()
	return []string{"commit complete"}
}

func jCommitQuit(s *session, _ *call) []string {
	s.commitCandidate()
	s.cli.mode, s.cli.cand = modeExec, nil
	return []string{"commit complete", "Exiting configuration mode"}
}

func jRollback(s *session, _ *call) []string {
	s.cli.cand = s.view()
	return []string{"load complete"}
}

// jExit leaves configuration mode, asking first when changes are pending.
func jExit(s *session, _ *call) []string {
	if s.dirty() {
		s.write("The configuration has been changed but not committed\r\n")
		ans := strings.ToLower(strings.TrimSpace(s.ask("Exit with uncommitted changes? [yes,no] (yes) ", true)))
		if ans != "" && ans != "yes" && ans != "y" {
			return nil
		}
	}
	s.cli.mode, s.cli.cand = modeExec, nil
	return []string{"Exiting configuration mode"}
}
