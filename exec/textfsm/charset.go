package textfsm

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// runeSet is a set of characters as sorted, disjoint, non-adjacent ranges.
// It is used where a Python character set mixes a negated category (\S,
// \W, \D) with other members: .NET cannot write that union as one set,
// and an alternation in its place backtracks badly under a repeat. Both
// engines get the set as plain ranges.
type runeSet []runeRange

type runeRange struct{ lo, hi rune }

func (s runeSet) union(o runeSet) runeSet {
	all := append(slices.Clone(s), o...)
	slices.SortFunc(all, func(a, b runeRange) int { return int(a.lo - b.lo) })
	var out runeSet
	for _, r := range all {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

func (s runeSet) complement() runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, runeRange{next, unicode.MaxRune})
	}
	return out
}

func tableSet(tables ...*unicode.RangeTable) runeSet {
	var s runeSet
	for _, t := range tables {
		for _, r := range t.R16 {
			s = s.addStrided(rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
		for _, r := range t.R32 {
			s = s.addStrided(rune(r.Lo), rune(r.Hi), rune(r.Stride))
		}
	}
	return s.union(nil)
}

func (s runeSet) addStrided(lo, hi, stride rune) runeSet {
	if stride == 1 {
		return append(s, runeRange{lo, hi})
	}
	for r := lo; r <= hi; r += stride {
		s = append(s, runeRange{r, r})
	}
	return s
}

// categorySet is the exact set of \d, \s or \w (lower case) under the
// ASCII flag or not.
func categorySet(c rune, ascii bool) runeSet {
	switch {
	case c == 'd' && ascii:
		return runeSet{{'0', '9'}}
	case c == 'd':
		return tableSet(unicode.Nd)
	case c == 's' && ascii:
		return runeSet{{'\t', '\r'}, {' ', ' '}}
	case c == 's':
		var s runeSet
		for r := rune(0); r <= 0x3000; r++ {
			if isPySpace(r) {
				s = append(s, runeRange{r, r})
			}
		}
		return s.union(nil)
	case ascii:
		return runeSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	}
	return tableSet(unicode.L, unicode.N).union(runeSet{{'_', '_'}})
}

// String writes the set as a .NET character class.
func (s runeSet) String() string { return s.class(`[^\s\S]`, writeSetRune) }

// re2 writes the set as a character class of Go's regexp, which takes
// the same ranges: such a set needs no backtracking engine.
func (s runeSet) re2() string { return s.class(`[^\x00-\x{10ffff}]`, writeRE2Rune) }

// class writes the set's ranges with an engine's way of writing a character;
// none is that engine's class that matches nothing.
func (s runeSet) class(none string, write func(*strings.Builder, rune)) string {
	if len(s) == 0 {
		return none
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, r := range s {
		write(&b, r.lo)
		if r.hi > r.lo {
			b.WriteByte('-')
			write(&b, r.hi)
		}
	}
	b.WriteByte(']')
	return b.String()
}

func writeRE2Rune(b *strings.Builder, r rune) {
	if r <= 0x7f {
		b.WriteString(classRune(r))
		return
	}
	fmt.Fprintf(b, `\x{%x}`, r)
}

// writeSetRune writes any character, surrogates included, so that
// regexp2 reads it back as that code point.
func writeSetRune(b *strings.Builder, r rune) {
	switch {
	case r <= 0x7f:
		b.WriteString(classRune(r))
	case r <= 0xffff:
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		b.WriteRune(r)
	}
}

// class translates a [...] set. Python reads '[' inside a set as a
// literal, where .NET would start a subtraction, so every literal is
// escaped. A set with a negated category (\S, \W, \D) among other members
// is computed exactly and written as plain ranges, for both engines.
func (t *pyTranslator) class() error {
	negate := t.accept("^")
	body := dual{re2OK: true}
	var ranges runeSet
	var cats, negCats []rune
	first := true
	for {
		if !t.more() {
			return t.errorf("unterminated character set")
		}
		c := t.next()
		if c == ']' && !first {
			break
		}
		first = false
		lo, cat, err := t.classItem(c)
		if err != nil {
			return err
		}
		if cat != 0 {
			set, set2, negated := t.category(cat)
			lc := unicode.ToLower(cat)
			if negated {
				negCats = append(negCats, lc)
			} else {
				cats = append(cats, lc)
				body.both(set, set2)
			}
			continue
		}
		hi := lo
		if t.peek() == '-' && t.pos+1 < len(t.src) && t.src[t.pos+1] != ']' {
			t.pos++
			c2 := t.next()
			h, cat2, err := t.classItem(c2)
			if err != nil {
				return err
			}
			if cat2 != 0 || h < lo {
				return t.errorf("bad character range")
			}
			hi = h
		}
		body.WriteString(classRune(lo))
		if hi > lo {
			body.WriteString("-" + classRune(hi))
		}
		ranges = append(ranges, runeRange{lo, hi})
	}
	if len(negCats) > 0 {
		set := t.exactSet(negate, ranges, cats, negCats)
		t.out.both(set.String(), set.re2())
		return nil
	}
	switch {
	case negate:
		t.out.both("[^"+body.net.String()+"]", "[^"+body.re2.String()+"]")
	default:
		t.out.both("["+body.net.String()+"]", "["+body.re2.String()+"]")
	}
	return nil
}

// exactSet computes a set's members from its ranges and categories.
func (t *pyTranslator) exactSet(negate bool, ranges runeSet, cats, negCats []rune) runeSet {
	members := ranges.union(nil)
	for _, c := range cats {
		members = members.union(categorySet(c, t.flags.ascii))
	}
	for _, c := range negCats {
		members = members.union(categorySet(c, t.flags.ascii).complement())
	}
	if negate {
		return members.complement()
	}
	return members
}

// classItem reads one member of a set: a character, or the letter of a
// category (d, D, s, S, w, W) in cat.
func (t *pyTranslator) classItem(c rune) (r rune, cat rune, err error) {
	if c != '\\' {
		return c, 0, nil
	}
	if !t.more() {
		return 0, 0, t.errorf("bad escape (end of pattern)")
	}
	c = t.next()
	switch c {
	case 'd', 'D', 's', 'S', 'w', 'W':
		return 0, c, nil
	case 'b':
		return '\b', 0, nil
	}
	if isOctal(c) {
		v := t.octalDigits(int(c-'0'), 2)
		if v > 0o377 {
			return 0, 0, t.errorf("octal escape value outside of range 0-0o377")
		}
		return rune(v), 0, nil
	}
	if c >= '0' && c <= '9' {
		return 0, 0, t.errorf(`bad escape \%c`, c)
	}
	r, err = t.charEscape(c)
	return r, 0, err
}

// classRune writes a set member so that both engines read it literally.
func classRune(r rune) string {
	switch {
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r)
	case r < utf8.RuneSelf && !isAlnum(r) && r != '_' && r != ' ':
		return `\` + string(r)
	}
	return string(r)
}
