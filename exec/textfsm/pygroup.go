package textfsm

import (
	"strconv"
	"strings"
	"unicode"
)

// group translates what follows a '('.
func (t *pyTranslator) group(depth int) (bool, error) {
	saved := t.flags
	if !t.accept("?") {
		n := t.newGroup()
		t.unnamed[n] = len(t.unnamed) + 1
		t.out.both("(", "(?:")
		return t.closeGroup(depth, n, saved)
	}
	switch {
	case t.accept("P<"):
		name, err := t.groupName('>')
		if err != nil {
			return false, err
		}
		if _, dup := t.named[name]; dup {
			return false, t.errorf("redefinition of group name %q", name)
		}
		n := t.newGroup()
		t.named[name] = n
		t.names = append(t.names, name)
		t.out.both("(?<"+name+">", "(?P<"+name+">")
		return t.closeGroup(depth, n, saved)
	case t.accept("P="):
		name, err := t.groupName(')')
		if err != nil {
			return false, err
		}
		n, ok := t.named[name]
		if !ok {
			return false, t.errorf("unknown group name %q", name)
		}
		if t.open[n] {
			return false, t.errorf("cannot refer to an open group")
		}
		t.out.noRE2()
		t.out.WriteString(`\k<` + name + `>`)
		return true, nil
	case t.accept(":"):
		t.out.WriteString("(?:")
		return t.closeGroup(depth, 0, saved)
	case t.accept("="), t.accept("!"):
		t.out.noRE2()
		t.out.WriteString("(?" + string(t.src[t.pos-1]))
		return t.closeGroup(depth, 0, saved)
	case t.accept("<="), t.accept("<!"):
		t.out.noRE2()
		t.out.WriteString("(?" + string(t.src[t.pos-2:t.pos]))
		return t.closeGroup(depth, 0, saved)
	case t.accept("#"):
		for t.more() && t.peek() != ')' {
			t.pos++
		}
		if !t.accept(")") {
			return false, t.errorf("missing ), unterminated comment")
		}
		return false, nil
	case t.accept("("):
		return t.conditional(depth, saved)
	}
	return t.flagGroup(depth, saved)
}

func (t *pyTranslator) newGroup() int {
	t.groups++
	t.open[t.groups] = true
	return t.groups
}

// closeGroup translates a group's body and its ')'; n is the group's
// number, 0 for a group that does not capture.
func (t *pyTranslator) closeGroup(depth, n int, saved flagSet) (bool, error) {
	if err := t.sequence(depth + 1); err != nil {
		return false, err
	}
	if !t.accept(")") {
		return false, t.errorf("missing ), unterminated subpattern")
	}
	t.out.WriteByte(')')
	delete(t.open, n)
	t.flags = saved
	return true, nil
}

func (t *pyTranslator) groupName(end rune) (string, error) {
	start := t.pos
	for t.more() && t.peek() != end {
		t.pos++
	}
	name := string(t.src[start:t.pos])
	if !t.accept(string(end)) {
		return "", t.errorf("missing %c, unterminated name", end)
	}
	if !isIdentifier(name) {
		return "", t.errorf("bad character in group name %q", name)
	}
	return name, nil
}

// isIdentifier is Python's str.isidentifier for the names regexes use.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || unicode.IsLetter(r) || i > 0 && (unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc)) {
			continue
		}
		return false
	}
	return true
}

// conditional translates (?(id)yes|no), id a group name or number.
func (t *pyTranslator) conditional(depth int, saved flagSet) (bool, error) {
	start := t.pos
	for t.more() && t.peek() != ')' {
		t.pos++
	}
	id := string(t.src[start:t.pos])
	if !t.accept(")") {
		return false, t.errorf("missing ), unterminated name")
	}
	var ref string
	if n, err := strconv.Atoi(id); err == nil {
		if ref, err = t.groupRef(n); err != nil {
			return false, err
		}
	} else if n, ok := t.named[id]; ok && !t.open[n] {
		ref = id
	} else {
		return false, t.errorf("unknown group name %q", id)
	}
	t.out.noRE2()
	t.out.WriteString("(?(" + ref + ")")
	return t.closeGroup(depth, 0, saved)
}

// flagGroup translates (?aiLmsux) and (?aiLmsux-imsx:...).
func (t *pyTranslator) flagGroup(depth int, saved flagSet) (bool, error) {
	if c := t.peek(); !strings.ContainsRune("aiLmsux-", c) {
		return false, t.errorf("unknown extension ?%c", c)
	}
	on, err := t.readFlags(true)
	if err != nil {
		return false, err
	}
	var off flagSet
	if t.accept("-") {
		if off, err = t.readFlags(false); err != nil {
			return false, err
		}
		if t.peek() != ':' {
			return false, t.errorf("missing :")
		}
	}
	if t.accept(")") {
		// A global flag group: Python applies it to the whole pattern.
		t.global = orFlags(t.global, on)
		t.flags = orFlags(t.flags, on)
		return false, nil
	}
	if !t.accept(":") {
		return false, t.errorf("missing -, : or )")
	}
	t.flags = orFlags(t.flags, on)
	t.flags = andNotFlags(t.flags, off)
	t.out.WriteString("(?" + netFlags(on) + dashed(netFlags(off)) + ":")
	return t.closeGroup(depth, 0, saved)
}

func dashed(s string) string {
	if s == "" {
		return ""
	}
	return "-" + s
}

func (t *pyTranslator) readFlags(on bool) (flagSet, error) {
	var f flagSet
	for t.more() {
		switch t.peek() {
		case 'i':
			f.ignoreCase = true
		case 'm':
			f.multiline = true
		case 's':
			f.dotAll = true
		case 'x':
			f.verbose = true
		case 'a':
			if !on {
				return f, t.errorf("bad inline flags: cannot turn off flags 'a', 'u' and 'L'")
			}
			f.ascii = true
		case 'u':
			if !on {
				return f, t.errorf("bad inline flags: cannot turn off flags 'a', 'u' and 'L'")
			}
		case 'L':
			return f, t.errorf("bad inline flags: cannot use 'L' flag with a str pattern")
		default:
			return f, nil
		}
		t.pos++
	}
	return f, t.errorf("missing -, : or )")
}

func orFlags(a, b flagSet) flagSet {
	return flagSet{a.ignoreCase || b.ignoreCase, a.multiline || b.multiline, a.dotAll || b.dotAll, a.verbose || b.verbose, a.ascii || b.ascii}
}

func andNotFlags(a, b flagSet) flagSet {
	return flagSet{a.ignoreCase && !b.ignoreCase, a.multiline && !b.multiline, a.dotAll && !b.dotAll, a.verbose && !b.verbose, a.ascii}
}

func netFlags(f flagSet) string {
	s := ""
	if f.ignoreCase {
		s += "i"
	}
	if f.multiline {
		s += "m"
	}
	if f.dotAll {
		s += "s"
	}
	return s
}
