package exec

import (
	"regexp"
	"strings"
)

// ansiRE matches CSI and OSC escape sequences and lone two-byte escapes,
// which some CLIs use to colour or redraw their prompt.
var ansiRE = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][A-Za-z0-9]|[=>78DEHMc])`)

// stripANSI removes terminal escape sequences.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}

// normalize turns terminal output into plain text lines: escapes removed,
// CRLF and lone CR folded, backspaces applied (pagers erase themselves that
// way), NUL and BEL dropped.
func normalize(s string) string {
	s = stripANSI(s)
	b := make([]byte, 0, len(s))
	lineStart := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\b':
			if len(b) > lineStart {
				b = b[:len(b)-1]
			}
		case '\r', 0, '\a':
			// A lone CR only returns the cursor; keeping the text is safer
			// than guessing what the device meant to overwrite.
		case '\n':
			b = append(b, c)
			lineStart = len(b)
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// lastLine returns the text after the last newline.
func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// promptBase is the leading host-name part of a prompt ("router" of
// "router(config)#"), used to tell the real prompt from output that happens
// to end like one.
func promptBase(prompt string) string {
	p := strings.TrimSpace(prompt)
	for i, r := range p {
		ok := r == '.' || r == '-' || r == '_' || r == '@' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return p[:i]
		}
	}
	return p
}

// cleanOutput removes the echoed command from the start and the prompt (and
// any lines the driver prints above it) from the end of normalized output.
func (d *driver) cleanOutput(out, command string) string {
	out = stripEcho(out, command)
	if d.prompt != nil {
		out = d.stripPrompt(out)
	}
	return strings.TrimRight(out, " \n")
}

// stripEcho removes the first line when it is the echo of the command. Long
// commands may come back wrapped, so only a prefix has to agree.
func stripEcho(out, command string) string {
	first, rest, found := strings.Cut(out, "\n")
	cmd := strings.TrimSpace(firstLineOf(command))
	line := strings.TrimSpace(first)
	if cmd == "" || line == "" {
		if found && line == "" && cmd == "" {
			return rest
		}
		return out
	}
	if strings.HasSuffix(line, cmd) || (len(line) >= 8 && strings.HasPrefix(cmd, line)) {
		if !found {
			return ""
		}
		return rest
	}
	return out
}

func firstLineOf(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// stripPrompt removes a trailing prompt line and its preamble lines.
func (d *driver) stripPrompt(out string) string {
	trimmed := strings.TrimRight(out, "\n")
	last := lastLine(trimmed)
	if !d.prompt.MatchString(last) {
		return out
	}
	out = trimmed[:len(trimmed)-len(last)]
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
