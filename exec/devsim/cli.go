package devsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// mode is where the CLI is: exec, global config or a config sub-mode.
type mode int

const (
	modeExec mode = iota
	modeConfig
	modeIf
	modeVlan
)

// cliState is one session's CLI state.
type cliState struct {
	priv      bool
	mode      mode
	iface     string // interface being configured (modeIf)
	vlan      int    // VLAN being configured (modeVlan)
	pageLen   int    // lines per screen; 0 = paging off
	width     int
	cand      *state        // candidate configuration (IOS-XR, Junos) in config mode
	dead      bool          // the connection went away during an interactive question
	noMore    bool          // "| no-more": do not page this command's output
	lines     int           // command lines entered so far (EXOS counts them in its prompt)
	pace      time.Duration // the command just run prints this slowly, per line (show tech-support)
	noConfirm bool          // EXOS "disable cli prompting": confirmations take their default
	block     string        // FortiOS: the config block being edited ("interface")
	path      []string      // RouterOS: the current menu ("interface")
	color     bool          // RouterOS: the console colours its prompt
}

// command is one row of a vendor's command table. Pattern words are
// keywords (abbreviable), "<n>" (a number), "<word>" (any token) or
// "<line>" (the rest of the line, at least one token).
type command struct {
	words string
	priv  bool // needs privileged (enable) mode
	run   func(s *session, c *call) []string
	pat   []string
}

// call is a matched command line.
type call struct {
	line string
	toks []token
	args []string
}

type token struct {
	text string
	pos  int
}

type errKind int

const (
	errInvalid errKind = iota
	errIncomplete
	errAmbiguous
)

type matchErr struct {
	kind  errKind
	at    int      // token index
	words []string // the candidates of an ambiguous keyword
}

// errStyle is how a vendor words its CLI errors.
type errStyle struct {
	invalid      string // %[1]s is the offending token, %[3]s the last one; "\n" splits lines
	invalidFirst string // for the first word, when it differs (Junos)
	incomplete   string
	ambiguous    string // %[1]s token, %[2]s the whole line
	caret        [3]bool
	privRequired string // "" = privileged commands are simply invalid
	blankAfter   [3]bool
	completions  bool // list the ambiguous candidates (Junos)
}

func tokenize(line string) []token {
	var toks []token
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		start := i
		if line[i] == '"' {
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				toks = append(toks, token{line[i+1:], start})
				break
			}
			toks = append(toks, token{line[i+1 : i+1+end], start})
			i += end + 2
			continue
		}
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		toks = append(toks, token{line[start:i], start})
	}
	return toks
}

func isNum(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// match finds the one command the tokens select, allowing every keyword to
// be abbreviated to a unique prefix.
func match(line string, toks []token, cmds []*command) (*command, *call, *matchErr) {
	cands := cmds
	for i, t := range toks {
		low := strings.ToLower(t.text)
		var lit, ph []*command
		kws := map[string]bool{}
		for _, c := range cands {
			if i >= len(c.pat) {
				if c.pat[len(c.pat)-1] == "<line>" {
					ph = append(ph, c)
				}
				continue
			}
			switch w := c.pat[i]; {
			case w == "<line>" || w == "<word>":
				ph = append(ph, c)
			case w == "<n>":
				if isNum(low) {
					ph = append(ph, c)
				}
			case strings.HasPrefix(w, low):
				lit = append(lit, c)
				kws[w] = true
			}
		}
		// A plural keyword and its singular ("interfaces", "interface")
		// are aliases, not an ambiguity.
		for w := range kws {
			if w != strings.TrimSuffix(w, "s") && kws[strings.TrimSuffix(w, "s")] {
				delete(kws, w)
			}
		}
		if kws[low] {
			lit = slices.DeleteFunc(lit, func(c *command) bool { return c.pat[i] != low })
		} else if len(kws) > 1 {
			words := make([]string, 0, len(kws))
			for w := range kws {
				words = append(words, w)
			}
			slices.Sort(words)
			return nil, nil, &matchErr{kind: errAmbiguous, at: i, words: words}
		}
		if len(lit) > 0 {
			cands = lit
		} else {
			cands = ph
		}
		if len(cands) == 0 {
			return nil, nil, &matchErr{kind: errInvalid, at: i}
		}
	}
	for _, c := range cands {
		last := c.pat[len(c.pat)-1]
		if len(c.pat) == len(toks) || (last == "<line>" && len(toks) >= len(c.pat)) {
			return c, newCall(line, toks, c), nil
		}
	}
	return nil, nil, &matchErr{kind: errIncomplete, at: len(toks)}
}

func newCall(line string, toks []token, c *command) *call {
	cl := &call{line: line, toks: toks}
	for i, w := range c.pat {
		switch w {
		case "<n>", "<word>":
			cl.args = append(cl.args, toks[i].text)
		case "<line>":
			rest := strings.TrimSpace(line[toks[i].pos:])
			if len(rest) >= 2 && rest[0] == '"' && rest[len(rest)-1] == '"' {
				rest = rest[1 : len(rest)-1]
			}
			cl.args = append(cl.args, rest)
		}
	}
	return cl
}

// syntaxError renders a match error the way the vendor prints it, with the
// caret under the offending token of the echoed line.
func (s *session) syntaxError(es *errStyle, line string, toks []token, e *matchErr) []string {
	col := len(lastLine(s.prompt())) + len(line)
	tok := ""
	if e.at < len(toks) {
		col = len(lastLine(s.prompt())) + toks[e.at].pos
		tok = toks[e.at].text
	}
	var msg string
	switch e.kind {
	case errInvalid:
		msg = es.invalid
		if e.at == 0 && es.invalidFirst != "" {
			msg = es.invalidFirst
		}
	case errIncomplete:
		msg = es.incomplete
	case errAmbiguous:
		msg = es.ambiguous
	}
	var out []string
	if es.caret[e.kind] {
		out = append(out, strings.Repeat(" ", col)+"^")
	}
	if strings.Contains(msg, "%[") {
		last := ""
		if len(toks) > 0 {
			last = toks[len(toks)-1].text
		}
		msg = fmt.Sprintf(msg, tok, strings.TrimSpace(line), last)
	}
	out = append(out, strings.Split(msg, "\n")...)
	if e.kind == errAmbiguous && es.completions {
		out = append(out, "Possible completions:")
		for _, w := range e.words {
			out = append(out, "  "+w)
		}
	}
	if es.blankAfter[e.kind] {
		out = append(out, "")
	}
	return out
}

func lastLine(s string) string {
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

func (s *session) prompt() string { return s.d.v.prompt(s) }

// visible returns the commands of a table the session may run.
func visible(cmds []*command, priv bool) []*command {
	if priv {
		return cmds
	}
	return slices.DeleteFunc(slices.Clone(cmds), func(c *command) bool { return c.priv })
}

// run matches line against a mode's table and runs it. Privileged commands
// in unprivileged mode get the vendor's "privileged mode required" error or,
// where the vendor hides them, the invalid-input error.
func (s *session) run(es *errStyle, table []*command, line string) []string {
	body, pipe := splitPipe(line)
	toks := tokenize(body)
	if len(toks) == 0 {
		return nil
	}
	c, cl, merr := match(body, toks, visible(table, s.cli.priv))
	if merr != nil && !s.cli.priv && es.privRequired != "" {
		if pc, _, perr := match(body, toks, table); perr == nil && pc.priv {
			return []string{es.privRequired}
		}
	}
	if merr != nil {
		return s.syntaxError(es, line, toks, merr)
	}
	out := c.run(s, cl)
	if pipe != "" {
		return s.applyPipe(es, line, pipe, out)
	}
	return out
}

func splitPipe(line string) (body, pipe string) {
	if i := strings.Index(line, "|"); i >= 0 {
		return line[:i], strings.TrimSpace(line[i+1:])
	}
	return line, ""
}

// applyPipe implements the output filters both families know: include,
// exclude, begin (Cisco-like) and match, except, count, no-more (Junos).
func (s *session) applyPipe(es *errStyle, line, pipe string, out []string) []string {
	kw, arg, _ := strings.Cut(pipe, " ")
	arg = strings.Trim(strings.TrimSpace(arg), `"`)
	keep := func(f func(string) bool) []string {
		var r []string
		for _, l := range out {
			if f(l) {
				r = append(r, l)
			}
		}
		return r
	}
	switch kw = strings.ToLower(kw); {
	case kw == "no-more":
		s.cli.noMore = true
		return out
	case kw == "display" && arg == "set" && s.d.v.name == "juniper_junos":
		st := s.cli.cand
		if st == nil {
			st = s.view()
		}
		return junosSet(st)
	case kw == "count":
		return []string{fmt.Sprintf("Count: %d lines", len(out))}
	case arg == "":
	case strings.HasPrefix("include", kw) || kw == "match" || kw == "grep":
		return keep(func(l string) bool { return strings.Contains(l, arg) })
	case strings.HasPrefix("exclude", kw) || kw == "except":
		return keep(func(l string) bool { return !strings.Contains(l, arg) })
	case strings.HasPrefix("begin", kw):
		for i, l := range out {
			if strings.Contains(l, arg) {
				return out[i:]
			}
		}
		return nil
	}
	toks := tokenize(line)
	at := len(toks) - 1
	for i, t := range toks {
		if t.pos > strings.Index(line, "|") {
			at = i
			break
		}
	}
	return s.syntaxError(es, line, toks, &matchErr{kind: errInvalid, at: at})
}

// ask prints a question after the device latency and reads the answer;
// secrets are read without echo. Answers are not recorded as commands.
func (s *session) ask(question string, echo bool) string {
	_, lat := s.d.snapshot()
	if !sleep(s.ctx, lat) || s.write(question) != nil {
		s.cli.dead = true
		return ""
	}
	ans, err := s.readLine(echo)
	if err != nil {
		s.cli.dead = true
	}
	return ans
}

// cmds builds a command table, splitting each pattern once.
func cmds(rows ...*command) []*command {
	for _, r := range rows {
		r.pat = strings.Fields(r.words)
	}
	return rows
}

// say returns a handler printing fixed lines.
func say(lines ...string) func(*session, *call) []string {
	return func(*session, *call) []string { return lines }
}
