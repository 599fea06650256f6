package exec

import (
	"regexp"
	"strconv"
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

// cursorLeftRE matches "cursor n columns left", which some CLIs (Huawei
// VRP) use instead of backspaces to erase their pager prompt.
var cursorLeftRE = regexp.MustCompile(`\x1b\[(\d{0,4})D`)

// normalize turns terminal output into plain text lines: escapes removed,
// CRLF folded, backspaces and cursor-left moves applied at the end of a
// line as erasing (pagers erase themselves that way), text after a lone CR
// written over the line, NUL and BEL dropped.
func normalize(s string) string {
	if strings.Contains(s, "\x1b[") {
		s = cursorLeftRE.ReplaceAllStringFunc(s, func(m string) string {
			n, err := strconv.Atoi(m[2 : len(m)-1])
			if err != nil {
				n = 1
			}
			return strings.Repeat("\b", min(n, 512))
		})
	}
	s = stripANSI(s)
	b := make([]byte, 0, len(s))
	lineStart, cur := 0, 0 // cur: where the next character lands
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\b':
			switch {
			case cur < len(b):
				cur--
			case len(b) > lineStart:
				b = b[:len(b)-1]
				cur = len(b)
			}
			cur = max(cur, lineStart)
		case '\r':
			// A carriage return moves back over the line; what follows is
			// written over it, as a terminal shows it (RouterOS redraws
			// each line it is given this way).
			cur = lineStart
		case 0, '\a':
		case '\n':
			b = append(b, c)
			lineStart, cur = len(b), len(b)
		default:
			if cur < len(b) {
				b[cur] = c
			} else {
				b = append(b, c)
			}
			cur++
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
