package textfsm

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Python's character categories, spelt out so that they do not depend on
// the .NET definitions regexp2 uses for \s and \w: Python's \s is
// str.isspace() (which includes \x1c-\x1f and U+00A0), its \w is a letter,
// a number of any kind, or '_', and its \d a decimal digit.
const (
	pySpace      = `\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000`
	pySpaceRE2   = `\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`
	pyWord       = `\p{L}\p{N}_`
	pyDigit      = `\p{Nd}`
	asciiSpace   = `\t-\r\x20`
	asciiWord    = `a-zA-Z0-9_`
	asciiDigit   = `0-9`
	wordBoundary = `(?:(?<=[%[1]s])(?![%[1]s])|(?<![%[1]s])(?=[%[1]s]))`
	notBoundary  = `(?:(?<=[%[1]s])(?=[%[1]s])|(?<![%[1]s])(?![%[1]s]))`
)

// flagSet holds the inline flags in force: those regexp2 understands are
// passed on; a (ASCII classes) and x (verbose) are applied here.
type flagSet struct {
	ignoreCase, multiline, dotAll, verbose, ascii bool
}

// pyTranslator rewrites a Python pattern into .NET syntax with the same
// meaning. It tokenises the whole pattern as Python's sre_parse does, so
// everything Python rejects is rejected here too, with Python's reason.
type pyTranslator struct {
	src      []rune
	pos      int
	out      dual // the pattern for regexp2, and for Go's regexp where RE2 can say it
	flags    flagSet
	global   flagSet // flags set by a (?flags) group, which apply to the whole pattern
	groups   int
	names    []string
	named    map[string]int // name -> Python group number
	unnamed  map[int]int    // Python group number -> ordinal among unnamed groups
	open     map[int]bool   // groups not closed yet
	numbered bool           // a numeric back-reference or condition needs unnamed groups captured
}

// translatePy translates pattern, restarting once when a flag group in the
// middle turns on x or a: Python applies such flags to the whole pattern.
func translatePy(pattern string) (*pyTranslator, error) {
	var start flagSet
	for range 3 {
		t := &pyTranslator{src: []rune(pattern), flags: start, global: start, out: dual{re2OK: true},
			named: map[string]int{}, unnamed: map[int]int{}, open: map[int]bool{}}
		if err := t.sequence(0); err != nil {
			return nil, err
		}
		if t.pos < len(t.src) { // a ')' with no '('
			return nil, t.errorf("unbalanced parenthesis")
		}
		if t.global.verbose == start.verbose && t.global.ascii == start.ascii {
			return t, nil
		}
		start.verbose, start.ascii = t.global.verbose, t.global.ascii
	}
	return nil, fmt.Errorf("inconsistent inline flags")
}

func (t *pyTranslator) flagPrefix() string {
	var b strings.Builder
	for _, f := range []struct {
		on bool
		c  byte
	}{{t.global.ignoreCase, 'i'}, {t.global.multiline, 'm'}, {t.global.dotAll, 's'}} {
		if f.on {
			b.WriteByte(f.c)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "(?" + b.String() + ")"
}

func (t *pyTranslator) errorf(format string, args ...any) error {
	return fmt.Errorf("%s at position %d", fmt.Sprintf(format, args...), t.pos)
}

func (t *pyTranslator) more() bool { return t.pos < len(t.src) }

func (t *pyTranslator) peek() rune {
	if t.pos < len(t.src) {
		return t.src[t.pos]
	}
	return -1
}

func (t *pyTranslator) next() rune {
	r := t.peek()
	t.pos++
	return r
}

func (t *pyTranslator) accept(s string) bool {
	i := t.pos
	for _, r := range s {
		if i >= len(t.src) || t.src[i] != r {
			return false
		}
		i++
	}
	t.pos = i
	return true
}

// sequence translates alternatives up to the ')' closing the group opened
// at depth (0: the whole pattern).
func (t *pyTranslator) sequence(depth int) error {
	canRepeat := false
	for t.more() {
		if t.flags.verbose && t.skipVerbose() {
			continue
		}
		c := t.peek()
		switch {
		case c == ')':
			return nil
		case c == '|':
			t.pos++
			t.out.WriteByte('|')
			canRepeat = false
		case c == '*' || c == '+' || c == '?' || (c == '{' && t.isRepeat()):
			if !canRepeat {
				return t.errorf("nothing to repeat")
			}
			if err := t.quantifier(); err != nil {
				return err
			}
			canRepeat = false
		default:
			repeatable, err := t.atom(depth)
			if err != nil {
				return err
			}
			canRepeat = repeatable
		}
	}
	if depth > 0 {
		return t.errorf("missing ), unterminated subpattern")
	}
	return nil
}

// skipVerbose skips white space and a comment in verbose mode.
func (t *pyTranslator) skipVerbose() bool {
	c := t.peek()
	if unicode.IsSpace(c) {
		t.pos++
		return true
	}
	if c == '#' {
		for t.more() && t.peek() != '\n' {
			t.pos++
		}
		return true
	}
	return false
}

// isRepeat reports whether the '{' at pos starts a repeat count; otherwise
// Python reads it as a literal brace.
func (t *pyTranslator) isRepeat() bool {
	_, _, _, ok := t.repeatCount()
	return ok
}

// repeatCount parses {m}, {m,}, {,n}, {m,n} and {,} at pos without
// consuming them.
func (t *pyTranslator) repeatCount() (lo, hi string, end int, ok bool) {
	i := t.pos + 1
	if i < len(t.src) && t.src[i] == '}' {
		return "", "", 0, false
	}
	digits := func() string {
		s := i
		for i < len(t.src) && t.src[i] >= '0' && t.src[i] <= '9' {
			i++
		}
		return string(t.src[s:i])
	}
	lo = digits()
	if i < len(t.src) && t.src[i] == ',' {
		i++
		hi = digits()
	} else {
		hi = lo
		if lo == "" {
			return "", "", 0, false
		}
	}
	if i >= len(t.src) || t.src[i] != '}' {
		return "", "", 0, false
	}
	if hi == lo && !strings.Contains(string(t.src[t.pos:i]), ",") {
		return lo, lo, i + 1, true
	}
	return lo, hi, i + 1, true
}

func (t *pyTranslator) quantifier() error {
	c := t.peek()
	if c != '{' {
		t.pos++
		t.out.WriteRune(c)
	} else {
		lo, hi, end, _ := t.repeatCount()
		exact := !strings.Contains(string(t.src[t.pos:end]), ",")
		t.pos = end
		if lo == "" {
			lo = "0"
		}
		if exact {
			t.out.checkCount(lo)
			fmt.Fprintf(&t.out, "{%s}", lo)
		} else {
			if hi != "" {
				l, _ := strconv.ParseUint(lo, 10, 64)
				h, _ := strconv.ParseUint(hi, 10, 64)
				if h < l {
					return t.errorf("min repeat greater than max repeat")
				}
			}
			t.out.checkCount(lo)
			t.out.checkCount(hi)
			fmt.Fprintf(&t.out, "{%s,%s}", lo, hi)
		}
	}
	switch t.peek() {
	case '?':
		t.pos++
		t.out.WriteByte('?')
	case '+':
		// Python 3.11's possessive repeat: the same as an atomic group
		// around it, which regexp2 has; keep the rest of Python's meaning
		// by rejecting it, as older Pythons do.
		return t.errorf("multiple repeat")
	case '*':
		return t.errorf("multiple repeat")
	case '{':
		if t.isRepeat() {
			return t.errorf("multiple repeat")
		}
	}
	return nil
}

// atom translates one item; it reports whether a quantifier may follow.
func (t *pyTranslator) atom(depth int) (bool, error) {
	c := t.next()
	switch c {
	case '(':
		return t.group(depth)
	case '[':
		return true, t.class()
	case '\\':
		return t.escape()
	case '.', '^', '$':
		t.out.WriteRune(c)
		return c == '.', nil
	case '{', '}', ']':
		t.out.WriteByte('\\')
		t.out.WriteRune(c)
		return true, nil
	}
	t.literal(c)
	return true, nil
}

func (t *pyTranslator) literal(c rune) {
	if c < utf8.RuneSelf && !isAlnum(c) && c != '_' {
		if c < 0x20 || c == 0x7f {
			fmt.Fprintf(&t.out, `\x%02x`, c)
			return
		}
		t.out.WriteByte('\\')
	}
	t.out.WriteRune(c)
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// escape translates a backslash sequence outside a character class.
func (t *pyTranslator) escape() (bool, error) {
	if !t.more() {
		return false, t.errorf("bad escape (end of pattern)")
	}
	c := t.next()
	switch c {
	case 'A':
		t.out.WriteString(`\A`)
		return false, nil
	case 'Z':
		t.out.WriteString(`\z`)
		return false, nil
	case 'b', 'B':
		tmpl := wordBoundary
		if c == 'B' {
			tmpl = notBoundary
		}
		// Go's \b only knows ASCII words.
		t.out.noRE2()
		fmt.Fprintf(&t.out, tmpl, t.wordSet())
		return false, nil
	case 'd', 'D', 's', 'S', 'w', 'W':
		set, set2, negated := t.category(c)
		if negated {
			t.out.both("[^"+set+"]", "[^"+set2+"]")
		} else {
			t.out.both("["+set+"]", "["+set2+"]")
		}
		return true, nil
	}
	if c >= '0' && c <= '9' {
		return t.numericEscape(c)
	}
	r, err := t.charEscape(c)
	if err != nil {
		return false, err
	}
	t.literal(r)
	return true, nil
}

// numericEscape handles \0, octal escapes and group references.
func (t *pyTranslator) numericEscape(c rune) (bool, error) {
	if c == '0' {
		v := t.octalDigits(0, 2)
		t.literal(rune(v))
		return true, nil
	}
	digits := string(c)
	if t.peek() >= '0' && t.peek() <= '9' {
		digits += string(t.next())
		if isOctal(rune(digits[0])) && isOctal(rune(digits[1])) && isOctal(t.peek()) {
			digits += string(t.next())
			v, _ := strconv.ParseUint(digits, 8, 32)
			if v > 0o377 {
				return false, t.errorf(`octal escape value \%s outside of range 0-0o377`, digits)
			}
			t.literal(rune(v))
			return true, nil
		}
	}
	n, _ := strconv.Atoi(digits)
	ref, err := t.groupRef(n)
	if err != nil {
		return false, err
	}
	t.out.noRE2()
	t.out.WriteString(`\k<` + ref + `>`)
	return true, nil
}

func isOctal(c rune) bool { return c >= '0' && c <= '7' }

func (t *pyTranslator) octalDigits(v, max int) int {
	for range max {
		if !isOctal(t.peek()) {
			break
		}
		v = v*8 + int(t.next()-'0')
	}
	return v
}

// groupRef names group n for regexp2, which numbers unnamed groups before
// named ones: a named group is referred to by name, an unnamed one by its
// ordinal among the unnamed.
func (t *pyTranslator) groupRef(n int) (string, error) {
	if n < 1 || n > t.groups {
		return "", t.errorf("invalid group reference %d", n)
	}
	if t.open[n] {
		return "", t.errorf("cannot refer to an open group")
	}
	t.numbered = true
	if o, ok := t.unnamed[n]; ok {
		return strconv.Itoa(o), nil
	}
	for name, g := range t.named {
		if g == n {
			return name, nil
		}
	}
	return "", t.errorf("invalid group reference %d", n)
}

// charEscape reads an escape that stands for one character, as Python's
// sre_parse accepts them.
func (t *pyTranslator) charEscape(c rune) (rune, error) {
	switch c {
	case 'a':
		return '\a', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'v':
		return '\v', nil
	case '\\':
		return '\\', nil
	case 'x':
		return t.hexDigits(2, c)
	case 'u':
		return t.hexDigits(4, c)
	case 'U':
		r, err := t.hexDigits(8, c)
		if err == nil && r > unicode.MaxRune {
			return 0, t.errorf(`bad escape \U`)
		}
		return r, err
	}
	if c < utf8.RuneSelf && isAlnum(c) {
		return 0, t.errorf(`bad escape \%c`, c)
	}
	return c, nil
}

func (t *pyTranslator) hexDigits(n int, c rune) (rune, error) {
	if t.pos+n > len(t.src) {
		return 0, t.errorf(`incomplete escape \%c`, c)
	}
	v, err := strconv.ParseUint(string(t.src[t.pos:t.pos+n]), 16, 32)
	if err != nil {
		return 0, t.errorf(`incomplete escape \%c`, c)
	}
	t.pos += n
	return rune(v), nil
}

// category returns the set body of \d \s \w (or of the class they
// negate) under the flags in force, for regexp2 and for Go's regexp.
func (t *pyTranslator) category(c rune) (set, set2 string, negated bool) {
	negated = unicode.IsUpper(c)
	switch {
	case t.flags.ascii:
		set = map[rune]string{'d': asciiDigit, 's': asciiSpace, 'w': asciiWord}[unicode.ToLower(c)]
		return set, set, negated
	case unicode.ToLower(c) == 'd':
		return pyDigit, pyDigit, negated
	case unicode.ToLower(c) == 's':
		return pySpace, pySpaceRE2, negated
	}
	return pyWord, pyWord, negated
}

func (t *pyTranslator) wordSet() string {
	if t.flags.ascii {
		return asciiWord
	}
	return pyWord
}

// dual writes a translation twice: for regexp2 (.NET syntax) and for Go's
// regexp (RE2 syntax), until something RE2 cannot say — a lookaround, a
// back-reference, a Unicode \b, a repeat count over 1000 — turns the RE2
// copy off.
type dual struct {
	net, re2 strings.Builder
	re2OK    bool
}

func (d *dual) Write(p []byte) (int, error) {
	d.net.Write(p)
	d.re2.Write(p)
	return len(p), nil
}

func (d *dual) WriteString(s string) {
	d.net.WriteString(s)
	d.re2.WriteString(s)
}
func (d *dual) WriteByte(c byte) error {
	d.both(string(c), string(c))
	return nil
}
func (d *dual) WriteRune(r rune) {
	d.net.WriteRune(r)
	d.re2.WriteRune(r)
}

func (d *dual) both(net, re2 string) {
	d.net.WriteString(net)
	d.re2.WriteString(re2)
}

func (d *dual) noRE2() { d.re2OK = false }

// checkCount turns RE2 off for a repeat count it refuses: one over 1000.
// The empty upper count of "{2,}" is no limit, which RE2 takes.
func (d *dual) checkCount(n string) {
	if n == "" {
		return
	}
	if v, err := strconv.Atoi(n); err != nil || v > 1000 {
		d.noRE2()
	}
}
