package exec

import (
	"regexp"
	"sort"
	"strings"

	"fieldkit/exec/platform"
)

// driver describes one platform as data; the rows are in drivers.go.
// Prompt patterns are matched against normalized text (escapes stripped,
// backspaces applied), one line at a time.
type driver struct {
	name string
	exec bool // one exec channel per command instead of a PTY shell

	// prompt matches a whole prompt line, in every mode of the CLI.
	prompt *regexp.Regexp
	// privMark and configMark are matched against a line already known to
	// be a prompt, so they look only at what tells the mode apart ("#",
	// "(config)#", a leading "["), never at the host name: a prompt
	// pattern overridden for one device keeps them working. A nil privMark
	// means the platform has no enable step.
	privMark   *regexp.Regexp
	configMark *regexp.Regexp
	// base picks the stable host-name part out of a prompt (first group),
	// for a prompt that carries a counter (EXOS "sw1.5 #"); nil takes the
	// leading host-name characters after any "[", "<", "*" or "~".
	base *regexp.Regexp
	// promptPreamble matches lines the CLI prints just above its prompt
	// (Junos and PAN-OS "[edit]"), removed with the prompt.
	promptPreamble *regexp.Regexp

	// userSuffix is appended to the login name unless it already holds a
	// "+": RouterOS reads console options there.
	userSuffix string
	// loginAnswers answer keyboard-interactive questions other than the
	// password (a PAN-OS login banner to accept).
	loginAnswers []question
	// enter ends every line sent; "\n" when empty.
	enter string
	// questions are answered wherever they appear: a banner waiting for a
	// key, a license prompt, leaving config mode with a pending change
	// (answered so that the commit that follows still decides).
	questions []question

	enable         string
	enableUser     *regexp.Regexp // enable asks for a user name before the password
	passwordPrompt *regexp.Regexp
	// setup runs after enable: paging off and the like. The width comes
	// with the PTY request (ptyCols), which these CLIs honour over SSH.
	setup  []string
	pagers []*regexp.Regexp // answered with a space

	// configEnter enters configuration mode; empty where commands
	// configure at the ordinary prompt (RouterOS, EXOS, FortiOS blocks).
	configEnter  string
	configCommit []string // sent after the lines; output checked for errors
	// commitWhen, when set, sends configCommit only while the prompt shows
	// uncommitted changes (Huawei VRP8 "[*host]"; VRP5 applies each line).
	commitWhen *regexp.Regexp
	// configExit and configAbort leave configuration mode after a
	// successful and a refused change; each line is sent only while the
	// prompt is still a configuration prompt.
	configExit  []string
	configAbort []string
	logout      string

	errors []errorPattern

	// unsafe are characters, besides unsafeChars, that a variable's value may not
	// hold unless its pattern allows them (RouterOS's [ ] command substitution).
	unsafe string
}

// question is a device prompt for an answer other than a command. The
// answer is sent as is: it carries its own line end, or none for a
// single key.
type question struct {
	re     *regexp.Regexp
	answer string
}

// errorPattern maps one vendor error line to a SyntaxError type.
type errorPattern struct {
	re  *regexp.Regexp
	typ string
}

// Drivers returns the names of the built-in drivers, sorted.
func Drivers() []string {
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// unsafeChars chain, pipe, redirect or substitute commands on some CLI or shell:
// a variable's value may hold them only where its pattern allows.
const unsafeChars = "|;&`$<>\\"

// ValueRules say how a variable's value may enter a command on a driver.
type ValueRules struct {
	// Unsafe are the characters a value without a pattern may not hold.
	Unsafe string
	// OptionPrefix, when set, may not start a value without a pattern.
	OptionPrefix string
	// Quote, when set, writes a value at byte offset at of the command text so
	// that the device reads it as exactly that text; nil writes it as is.
	Quote func(text string, at int, value string) string
}

// ValueRulesFor returns the value rules of a driver ("generic"'s for an
// unknown name). Where commands go through a shell (linux), every value is
// quoted for it and may not start with "-"; an interactive CLI answers "?"
// with help at once, mid-line, so it joins the unsafe characters there.
func ValueRulesFor(name string) ValueRules {
	d := drivers[name]
	if d == nil {
		d = drivers["generic"]
	}
	r := ValueRules{Unsafe: unsafeChars + d.unsafe}
	if d.exec {
		r.Quote, r.OptionPrefix = shellQuote, "-"
	} else {
		r.Unsafe += "?"
	}
	return r
}

// DriverFor chooses the driver of a platform: its explicit driver wins;
// otherwise the driver is inferred from the slug through the aliases of
// package platform, "generic" when it names no driver here.
func DriverFor(platformDriver, platformSlug string) string {
	if d := strings.ToLower(strings.TrimSpace(platformDriver)); d != "" {
		return d
	}
	if d := platform.Driver(platformSlug); drivers[d] != nil {
		return d
	}
	return "generic"
}

func (d *driver) newline() string {
	if d.enter == "" {
		return "\n"
	}
	return d.enter
}

func (d *driver) isPriv(prompt string) bool {
	return d.privMark == nil || d.privMark.MatchString(strings.TrimSpace(prompt))
}

func (d *driver) isConfig(prompt string) bool {
	return d.configMark != nil && d.configMark.MatchString(strings.TrimSpace(prompt))
}

// promptLead are the characters some prompts open with before the host
// name: Huawei "<host>" and "[~host]", RouterOS "[user@host]", EXOS "* ".
const promptLead = "[<*~ "

// baseOf is the stable host-name part of a prompt ("router" of
// "router(config)#", "sw1" of EXOS "* sw1.5 #"), used to tell the real
// prompt from output that happens to end like one.
func (d *driver) baseOf(prompt string) string {
	p := strings.TrimSpace(prompt)
	if d.base != nil {
		if m := d.base.FindStringSubmatch(p); m != nil {
			return m[1]
		}
	}
	p = strings.TrimLeft(p, promptLead)
	for i, r := range p {
		ok := r == '.' || r == '-' || r == '_' || r == '@' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return p[:i]
		}
	}
	return p
}

// hasBase reports whether a prompt line starts with the host name base,
// after its lead characters.
func hasBase(line, base string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, promptLead), base)
}

// gluedPrompt finds a prompt that ends line right after other text, with
// no newline between them: a pager's or a setup command's reply that runs
// into the prompt, or output without a final newline. It needs the host
// name base and returns the start of the prompt, or -1.
func (d *driver) gluedPrompt(line, base string) int {
	if base == "" {
		return -1
	}
	for i := strings.LastIndex(line, base); i > 0; i = strings.LastIndex(line[:i], base) {
		j := i
		for j > 0 && strings.IndexByte(promptLead, line[j-1]) >= 0 {
			j--
		}
		for _, start := range []int{j, i} {
			if start > 0 && d.prompt.MatchString(line[start:]) {
				return start
			}
		}
	}
	return -1
}

// cleanOutput removes the echoed command from the start and the prompt
// (and any lines the driver prints above it) from the end of normalized
// output. prompt is the prompt that ended the read, "" when none did.
func (d *driver) cleanOutput(out, command, prompt string) string {
	out = stripEcho(out, command)
	if d.prompt != nil {
		out = d.stripPrompt(out, prompt)
	}
	return strings.TrimRight(out, " \n")
}

// stripPrompt removes a trailing prompt, whole line or glued, and the
// preamble lines above it.
func (d *driver) stripPrompt(out, prompt string) string {
	trimmed := strings.TrimRight(out, "\n")
	last := lastLine(trimmed)
	switch p := strings.TrimRight(prompt, " "); {
	case d.prompt.MatchString(last):
		out = trimmed[:len(trimmed)-len(last)]
	case p != "" && strings.HasSuffix(strings.TrimRight(trimmed, " "), p):
		// A glued prompt leaves the output's last line in place.
		return strings.TrimRight(trimmed, " ")[:len(strings.TrimRight(trimmed, " "))-len(p)]
	default:
		return out
	}
	for d.promptPreamble != nil {
		t := strings.TrimRight(out, "\n")
		l := lastLine(t)
		if !d.promptPreamble.MatchString(strings.TrimSpace(l)) {
			break
		}
		out = t[:len(t)-len(l)]
	}
	return out
}

// detectSyntax returns the first line of out that matches one of the
// driver's error patterns.
func (d *driver) detectSyntax(out string) SyntaxError {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		for _, p := range d.errors {
			if p.re.MatchString(line) {
				return SyntaxError{Detected: true, Type: p.typ, Vendor: d.name, Line: line, Guidance: guidance[p.typ]}
			}
		}
	}
	return SyntaxError{}
}
