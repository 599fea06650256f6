package textfsm

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// matchTimeout bounds one regex match: a backtracking engine can take
// exponential time on a hostile line, and a parse must never hang a request.
// It is a variable only for the test that forces every pattern onto the
// backtracking engine.
var matchTimeout = 5 * time.Second

// pyRegex is a Python re pattern translated with Python's meaning: for
// Go's regexp (RE2: linear time, few allocations) when RE2 can say it,
// else for regexp2, a backtracking engine with lookarounds and
// back-references. Translating checks the pattern as Python would;
// compiling it is left to compile, which a template runs at its first
// use: that is most of the cost of loading a thousand templates.
type pyRegex struct {
	src    string // for regexp2, anchored for re.match
	srcRE2 string // for Go's regexp, "" when RE2 cannot express the pattern
	opts   regexp2.RegexOptions
	groups int      // capturing groups, as Python's Pattern.groups counts them
	names  []string // named groups in the order Python's groupdict() lists them

	goRE  *regexp.Regexp // set by compile when RE2 serves
	goIdx []int          // submatch index of each of names in goRE
	re    *regexp2.Regexp
	// need is text every match contains ("" when none is known): a line without
	// it is refused before the engine runs. Most lines of an output are tried
	// against most rules of their state and match none.
	need string
}

// useBacktracking turns the RE2 path off, so that tests can run every
// pattern through regexp2 and compare.
var useBacktracking = false

// translateRegex checks and translates a Python re pattern for re.match:
// anchored at the start of the string, not at its end.
func translateRegex(pattern string) (*pyRegex, error) {
	t, err := translatePy(pattern)
	if err != nil {
		return nil, err
	}
	p := &pyRegex{src: `\A(?:` + t.flagPrefix() + t.out.net.String() + `)`, opts: regexp2.None, groups: t.groups, names: t.names}
	if !t.numbered {
		// Only named groups are read; unnamed ones need not capture unless
		// a back-reference points at one.
		p.opts = regexp2.ExplicitCapture
	}
	if t.out.re2OK {
		p.srcRE2 = `\A(?:` + t.flagPrefix() + t.out.re2.String() + `)`
	}
	return p, nil
}

// compile builds the matcher; it is not safe to call concurrently with
// itself or with a match.
func (p *pyRegex) compile() error {
	if p.goRE != nil || p.re != nil {
		return nil
	}
	if p.srcRE2 != "" && !useBacktracking {
		// Go may still refuse (a group name RE2 does not allow, nesting
		// too deep): regexp2 then serves.
		if re, err := regexp.Compile(p.srcRE2); err == nil {
			p.goRE, p.need = re, requiredText(p.srcRE2)
			p.goIdx = make([]int, len(p.names))
			for i, n := range p.names {
				p.goIdx[i] = re.SubexpIndex(n)
			}
			return nil
		}
	}
	re, err := regexp2.Compile(p.src, p.opts)
	if err != nil {
		return fmt.Errorf("%s (translated for the backtracking engine)", err)
	}
	re.MatchTimeout = matchTimeout
	p.re = re
	return nil
}

// match is one successful match of a pyRegex.
type match struct {
	p   *pyRegex
	s   string
	idx []int          // Go's submatch indexes
	m   *regexp2.Match // or regexp2's match
}

// find matches s at its start. runes caches s as runes for regexp2 across
// the rules tried on one line.
func (p *pyRegex) find(s string, runes *[]rune) (match, bool, error) {
	if p.need != "" && !strings.Contains(s, p.need) {
		return match{}, false, nil
	}
	if p.goRE != nil {
		idx := p.goRE.FindStringSubmatchIndex(s)
		return match{p: p, s: s, idx: idx}, idx != nil, nil
	}
	if *runes == nil {
		*runes = []rune(s)
	}
	m, err := p.re.FindRunesMatch(*runes)
	return match{p: p, m: m}, m != nil, err
}

// matchString reports whether s matches at its start.
func (p *pyRegex) matchString(s string) (bool, error) {
	if p.need != "" && !strings.Contains(s, p.need) {
		return false, nil
	}
	if p.goRE != nil {
		return p.goRE.MatchString(s), nil
	}
	return p.re.MatchString(s)
}

// group is Python's match.group(name) of the i-th named group: None (nil)
// when the group took no part in the match.
func (m match) group(i int) any {
	if m.idx != nil {
		j := m.p.goIdx[i]
		if m.idx[2*j] < 0 {
			return nil
		}
		return m.s[m.idx[2*j]:m.idx[2*j+1]]
	}
	g := m.m.GroupByName(m.p.names[i])
	if g == nil || len(g.Captures) == 0 {
		return nil
	}
	return g.String()
}

// requiredText is the longest literal every match of an RE2 pattern contains: one
// matched case-sensitively, in the pattern's top-level sequence, inside its groups
// or in something repeated at least once. "" when there is none (or the pattern
// does not parse, which compiling it reports).
func requiredText(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return ""
	}
	best := ""
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			// U+FFFD also matches a byte that is not UTF-8, which Contains would not find.
			if lit := string(r.Rune); r.Flags&syntax.FoldCase == 0 && len(lit) > len(best) && !strings.ContainsRune(lit, utf8.RuneError) {
				best = lit
			}
		case syntax.OpConcat:
			for _, sub := range r.Sub {
				walk(sub)
			}
		case syntax.OpCapture, syntax.OpPlus:
			walk(r.Sub[0])
		case syntax.OpRepeat:
			if r.Min > 0 {
				walk(r.Sub[0])
			}
		}
	}
	walk(re)
	return best
}

// compilePy translates and compiles at once.
func compilePy(pattern string) (*pyRegex, error) {
	p, err := translateRegex(pattern)
	if err != nil {
		return nil, err
	}
	return p, p.compile()
}
