package devsim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MikroTik RouterOS: "[user@host] > " at the root, "[user@host] /interface> "
// in a menu. Commands are menu paths, an action and name=value arguments,
// applied at once ("/interface set ether1 comment=uplink"). The login name
// carries console options after a "+": c turns colours off, t skips the
// terminal detection (which otherwise takes a while), <n>w and <n>h set
// the width and height; output longer than the height pages. The CLI
// redraws each line it is given.

// rosTerminalWait is how long the terminal detection waits for an answer
// a plain SSH client never gives.
const rosTerminalWait = time.Second

func init() {
	v := &vendor{
		name: "mikrotik_routeros", hostname: "rtr1", serverVersion: "SSH-2.0-ROSSSH",
		banner:  "  MikroTik RouterOS 7.12.1 (c) 1999-2023       https://www.mikrotik.com/",
		pager:   "-- [Q quit|D dump|C-z pause|down]",
		ifNames: [4]string{"ether1", "ether2", "ether3", "ether4"},
		prompt: func(s *session) string {
			user, host := s.d.loginName(s.user), s.hostname()
			menu := ""
			if len(s.cli.path) > 0 {
				menu = "/" + strings.Join(s.cli.path, "/")
			}
			if s.cli.color {
				return "[\x1b[1;36m" + user + "\x1b[0m@\x1b[1;35m" + host + "\x1b[0m] " + menu + "> "
			}
			return "[" + user + "@" + host + "] " + menu + "> "
		},
		login:        rosLogin,
		dispatch:     rosDispatch,
		repaint:      true,
		loginOptions: true,
		isShow:       func(line string) bool { return strings.Contains(line, "print") || strings.Contains(line, "export") },
		running:      rosExport, shell: cliShell, exec: cliExec,
	}
	vendors[v.name] = v
}

// rosLogin reads the console options of the login name.
func rosLogin(s *session) error {
	_, opts, _ := strings.Cut(s.user, "+")
	s.cli.color, s.cli.pageLen = true, 24
	num := ""
	for _, r := range opts {
		switch {
		case r >= '0' && r <= '9':
			num += string(r)
			continue
		case r == 'c':
			s.cli.color = false
		case r == 'h' && num != "":
			s.cli.pageLen, _ = strconv.Atoi(num)
		case r == 'w' && num != "":
			s.cli.width, _ = strconv.Atoi(num)
		}
		num = ""
	}
	if !strings.ContainsRune(opts, 't') {
		// Terminal detection: a query the client never answers.
		s.write("\x1bZ")
		if !sleep(s.ctx, rosTerminalWait) {
			return errClosed
		}
	}
	return nil
}

// rosMenus are the menus and their actions. An action gets the item named
// after it (if any), the name=value arguments, and reports an unknown
// argument by its index.
var rosMenus = map[string]map[string]func(s *session, a *rosArgs) []string{
	"": {
		"export": func(s *session, _ *rosArgs) []string { return rosExport(s.view()) },
	},
	"system": {},
	"system identity": {
		"print": func(s *session, _ *rosArgs) []string { return []string{"  name: " + s.hostname()} },
		"set": func(s *session, a *rosArgs) []string {
			if bad := a.only("name"); bad != nil {
				return bad
			}
			s.edit(func(st *state) { st.hostname = a.vals["name"] })
			return nil
		},
	},
	"system resource": {"print": func(s *session, _ *rosArgs) []string { return rosResource(s.view()) }},
	"interface": {
		"print":   func(s *session, _ *rosArgs) []string { return rosInterfaces(s.view()) },
		"set":     rosSet,
		"enable":  rosEnable(true),
		"disable": rosEnable(false),
	},
	"ip":         {},
	"ip address": {"print": func(s *session, _ *rosArgs) []string { return rosAddresses(s.view()) }},
}

// rosArgs are the words after an action.
type rosArgs struct {
	line  string
	items []token           // positional words
	vals  map[string]string // name=value
	names []token           // the name tokens, in order
}

// rosError words an error at a token the way RouterOS does.
func rosError(what string, t token) []string {
	return []string{fmt.Sprintf("%s (line 1 column %d)", what, t.pos+1)}
}

// only refuses arguments other than the allowed names.
func (a *rosArgs) only(allowed ...string) []string {
	for _, n := range a.names {
		name, _, _ := strings.Cut(n.text, "=")
		ok := false
		for _, w := range allowed {
			ok = ok || name == w
		}
		if !ok {
			return rosError("expected end of command", n)
		}
	}
	return nil
}

func rosDispatch(s *session, line string) ([]string, bool) {
	toks := tokenize(line)
	if len(toks) == 0 {
		return nil, false
	}
	path := append([]string(nil), s.cli.path...)
	if strings.HasPrefix(toks[0].text, "/") {
		path = nil
		toks[0].text = strings.TrimPrefix(toks[0].text, "/")
		toks[0].pos++
		if toks[0].text == "" {
			toks = toks[1:]
		}
	}
	i := 0
	for ; i < len(toks); i++ {
		w := toks[i].text
		if w == ".." {
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
			continue
		}
		if _, ok := rosMenus[strings.Join(append(path, w), " ")]; !ok {
			break
		}
		path = append(path, w)
	}
	if i == len(toks) {
		s.cli.path = path
		return nil, false
	}
	act := toks[i]
	if act.text == "quit" && len(path) == 0 {
		return nil, true
	}
	run, ok := rosMenus[strings.Join(path, " ")][act.text]
	if !ok {
		return rosError("bad command name "+act.text, act), false
	}
	a := &rosArgs{line: line, vals: map[string]string{}}
	for _, t := range toks[i+1:] {
		if name, val, found := strings.Cut(t.text, "="); found {
			a.vals[name] = strings.Trim(val, `"`)
			a.names = append(a.names, t)
		} else {
			a.items = append(a.items, t)
		}
	}
	return run(s, a), false
}

// rosItem finds an interface by name or print number.
func rosItem(st *state, a *rosArgs) *Interface {
	if len(a.items) == 0 {
		return nil
	}
	w := a.items[0].text
	if n, err := strconv.Atoi(w); err == nil && n >= 0 && n < len(st.ifaces) {
		return &st.ifaces[n]
	}
	return st.iface(w)
}

func rosSet(s *session, a *rosArgs) []string {
	if bad := a.only("comment", "disabled"); bad != nil {
		return bad
	}
	if d, ok := a.vals["disabled"]; ok && d != "yes" && d != "no" {
		return []string{"value of disabled must be one of yes, no"}
	}
	found := false
	s.edit(func(st *state) {
		if i := rosItem(st, a); i != nil {
			found = true
			if c, ok := a.vals["comment"]; ok {
				i.Description = c
			}
			if d, ok := a.vals["disabled"]; ok {
				i.Enabled = d == "no"
			}
		}
	})
	if !found {
		return []string{"no such item"}
	}
	return nil
}

func rosEnable(on bool) func(*session, *rosArgs) []string {
	return func(s *session, a *rosArgs) []string {
		found := false
		s.edit(func(st *state) {
			if i := rosItem(st, a); i != nil {
				i.Enabled, found = on, true
			}
		})
		if !found {
			return []string{"no such item"}
		}
		return nil
	}
}

func rosResource(st *state) []string {
	return []string{
		"                   uptime: 3w2d4h12m45s",
		"                  version: 7.12.1 (stable)",
		"               build-time: 2023-11-17 11:38:45",
		"         factory-software: 6.44.6",
		"              free-memory: 815.3MiB",
		"             total-memory: 1024.0MiB",
		"                      cpu: ARMv7",
		"                cpu-count: 4",
		"            cpu-frequency: 1400MHz",
		"                 cpu-load: 1%",
		"           free-hdd-space: 91.0MiB",
		"          total-hdd-space: 128.0MiB",
		"  write-sect-since-reboot: 10417",
		"         write-sect-total: 5244981",
		"        architecture-name: arm",
		"               board-name: RB4011iGS+",
		"                 platform: MikroTik",
	}
}

func rosInterfaces(st *state) []string {
	out := []string{"Flags: X - disabled; R - running", "Columns: NAME, TYPE, ACTUAL-MTU, L2MTU, MAX-L2MTU, MAC-ADDRESS",
		fmt.Sprintf(" %-4s %-13s %-6s %10s %5s %9s %s", "#", "NAME", "TYPE", "ACTUAL-MTU", "L2MTU", "MAX-L2MTU", "MAC-ADDRESS")}
	for n, i := range st.ifaces {
		flag := "R"
		if !i.Enabled {
			flag = "X"
		}
		if i.Description != "" {
			out = append(out, fmt.Sprintf("%2d   ;;; %s", n, i.Description))
			out = append(out, fmt.Sprintf("%4s %-13s %-6s %10d %5d %9d %s", flag, i.Name, "ether", 1500, 1598, 9796, strings.ToUpper(colonMAC(i.MAC))))
			continue
		}
		out = append(out, fmt.Sprintf("%2d %s %-13s %-6s %10d %5d %9d %s", n, flag, i.Name, "ether", 1500, 1598, 9796, strings.ToUpper(colonMAC(i.MAC))))
	}
	return out
}

func rosAddresses(st *state) []string {
	out := []string{"Columns: ADDRESS, NETWORK, INTERFACE", fmt.Sprintf("%-2s %-18s %-14s %s", "#", "ADDRESS", "NETWORK", "INTERFACE")}
	n := 0
	for _, i := range st.ifaces {
		if p, ok := prefix(i.IP); ok {
			out = append(out, fmt.Sprintf("%-2d %-18s %-14s %s", n, p.String(), p.Masked().Addr().String(), i.Name))
			n++
		}
	}
	return out
}

func rosExport(st *state) []string {
	out := []string{"# 2024-03-05 09:12:45 by RouterOS 7.12.1", "# software id = 7KZ1-X3QP", "#",
		"# model = RB4011iGS+", "# serial number = HE908ABC123", "/interface ethernet"}
	for _, i := range st.ifaces {
		line := fmt.Sprintf("set [ find default-name=%s ]", i.Name)
		if i.Description != "" {
			line += " comment=" + rosQuote(i.Description)
		}
		if !i.Enabled {
			line += " disabled=yes"
		}
		out = append(out, line)
	}
	out = append(out, "/ip address")
	for _, i := range st.ifaces {
		if p, ok := prefix(i.IP); ok {
			out = append(out, fmt.Sprintf("add address=%s interface=%s network=%s", p, i.Name, p.Masked().Addr()))
		}
	}
	return append(out, "/system identity", "set name="+rosQuote(st.hostname))
}

func rosQuote(s string) string {
	if strings.ContainsAny(s, " \"") {
		return strconv.Quote(s)
	}
	return s
}
