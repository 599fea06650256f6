package textfsm

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The parts of a TextFSM template, as Python's textfsm reads them. A
// program is immutable once parsed; every parse runs on a machine of its
// own, so one program serves any number of goroutines.

type option uint8

const (
	optRequired option = iota
	optFilldown
	optFillup
	optKey
	optList
)

var optionNames = map[string]option{
	"Required": optRequired, "Filldown": optFilldown, "Fillup": optFillup, "Key": optKey, "List": optList,
}

// valueDef is one "Value [options] NAME (regex)" line.
type valueDef struct {
	name     string
	regex    string
	options  []option // in the order written: Python runs their hooks in that order
	filldown bool
	list     bool
	key      bool
	nested   *pyRegex // the value's own regex, for a List value's named groups
}

// rule is one "  ^regex -> Action NewState" line of a state.
type rule struct {
	line     int
	re       *pyRegex
	assign   []int // for each of re.names, the index of its Value, or -1
	lineOp   string
	recordOp string
	newState string
}

// program is a parsed template.
type program struct {
	values []valueDef
	states map[string][]rule
	hasEOF bool // an explicit EOF state suppresses the implicit last Record
}

// compile compiles every regex of the program for regexp2.
func (p *program) compile() error {
	for i := range p.values {
		if v := &p.values[i]; v.nested != nil {
			if err := v.nested.compile(); err != nil {
				return fmt.Errorf("value %s: %w", v.name, err)
			}
		}
	}
	for name, rules := range p.states {
		for i := range rules {
			if err := rules[i].re.compile(); err != nil {
				return fmt.Errorf("state %s, line %d: %w", name, rules[i].line, err)
			}
		}
	}
	return nil
}

// header returns the Value names in template order.
func (p *program) header() []string {
	h := make([]string, len(p.values))
	for i, v := range p.values {
		h[i] = v.name
	}
	return h
}

const maxNameLen = 48

// parseTemplate reads a template with the rules of Python's textfsm: a
// block of Value lines ended by a blank line, then states, each a name
// line and its rules up to a blank line.
func parseTemplate(text string) (*program, error) {
	p := &program{states: map[string][]rule{}}
	lines := templateLines(text)
	n := 0
	valueMap := map[string]string{}
	for ; n < len(lines); n++ {
		line := pyRStrip(lines[n])
		if line == "" {
			n++
			break
		}
		if isComment(line) {
			continue
		}
		if !strings.HasPrefix(line, "Value ") {
			if len(p.values) == 0 {
				return nil, fmt.Errorf("no Value definitions found")
			}
			return nil, fmt.Errorf("expected blank line after last Value entry, line %d", n+1)
		}
		v, err := parseValue(line)
		if err != nil {
			return nil, fmt.Errorf("%w, line %d", err, n+1)
		}
		for _, o := range p.values {
			if o.name == v.name {
				return nil, fmt.Errorf("duplicate declarations for Value %q, line %d", v.name, n+1)
			}
		}
		p.values = append(p.values, v)
		valueMap[v.name] = "(?P<" + v.name + ">" + v.regex[1:]
	}
	for n < len(lines) {
		name, next, err := p.parseState(lines, n, valueMap)
		if err != nil {
			return nil, err
		}
		if name == "" {
			break
		}
		n = next
	}
	return p, p.validate()
}

// templateLines splits a template as Python reads a text file: universal
// newlines, one line per "\n".
func templateLines(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func isComment(line string) bool {
	return strings.HasPrefix(strings.TrimLeftFunc(line, isPySpace), "#")
}

// parseValue reads a Value line. Python splits it on single spaces, so
// the spaces inside the regex are kept as written.
func parseValue(line string) (valueDef, error) {
	f := strings.Split(line, " ")
	if len(f) < 3 {
		return valueDef{}, fmt.Errorf("expect at least 3 tokens on line")
	}
	var v valueDef
	if strings.HasPrefix(f[2], "(") {
		v.name, v.regex = f[1], strings.Join(f[2:], " ")
	} else {
		for _, name := range strings.Split(f[1], ",") {
			o, ok := optionNames[name]
			if !ok {
				return valueDef{}, fmt.Errorf("unknown option %q", name)
			}
			for _, have := range v.options {
				if have == o {
					return valueDef{}, fmt.Errorf("duplicate option %q", name)
				}
			}
			v.options = append(v.options, o)
			v.filldown = v.filldown || o == optFilldown
			v.list = v.list || o == optList
			v.key = v.key || o == optKey
		}
		v.name, v.regex = f[2], strings.Join(f[3:], " ")
	}
	if utf8.RuneCountInString(v.name) > maxNameLen {
		return valueDef{}, fmt.Errorf("invalid Value name %q or name too long", v.name)
	}
	r := v.regex
	if len(r) < 2 || r[0] != '(' || r[len(r)-1] != ')' || r[len(r)-2] == '\\' {
		return valueDef{}, fmt.Errorf("value %q must be contained within a '()' pair", r)
	}
	re, err := translateRegex(r)
	if err != nil {
		return valueDef{}, fmt.Errorf("value %s: %w", v.name, err)
	}
	if v.list {
		v.nested = re
	}
	return v, nil
}

var lineOps = map[string]bool{"Continue": true, "Next": true, "Error": true}
var recordOps = map[string]bool{"Clear": true, "Clearall": true, "Record": true, "NoRecord": true}

// parseState reads one state from lines[n:]: it returns the state's name
// ("" when only blank lines and comments remain) and where the next one
// starts.
func (p *program) parseState(lines []string, n int, valueMap map[string]string) (string, int, error) {
	name := ""
	for ; n < len(lines); n++ {
		line := pyRStrip(lines[n])
		if line == "" || isComment(line) {
			continue
		}
		if !isPyWordString(line) || utf8.RuneCountInString(line) > maxNameLen || lineOps[line] || recordOps[line] {
			return "", 0, fmt.Errorf("invalid state name %q, line %d", line, n+1)
		}
		if _, dup := p.states[line]; dup {
			return "", 0, fmt.Errorf("duplicate state name %q, line %d", line, n+1)
		}
		name = line
		p.states[name] = nil
		n++
		break
	}
	if name == "" {
		return "", n, nil
	}
	for ; n < len(lines); n++ {
		line := pyRStrip(lines[n])
		if line == "" {
			return name, n + 1, nil
		}
		if isComment(line) {
			continue
		}
		if !strings.HasPrefix(line, " ^") && !strings.HasPrefix(line, "  ^") && !strings.HasPrefix(line, "\t^") {
			return "", 0, fmt.Errorf("missing white space or carat ('^') before rule, line %d", n+1)
		}
		r, err := p.parseRule(line, n+1, valueMap)
		if err != nil {
			return "", 0, err
		}
		p.states[name] = append(p.states[name], r)
	}
	return name, n, nil
}

// The action part of a rule, right of "->", in Python's three forms;
// \s and \w are spelt out with Python's Unicode meaning.
const (
	actSpace    = `[\t-\r\x1c-\x20\x85\xa0\p{Z}]`
	actNewState = `(?:` + actSpace + `+(?P<new_state>[\p{L}\p{N}_]+|".*"))?$`
	actRecord   = `(?P<rec_op>Clear|Clearall|Record|NoRecord)`
)

var (
	actionRE  = regexp.MustCompile(`^` + actSpace + `+(?P<ln_op>Continue|Next|Error)(?:\.` + actRecord + `)?` + actNewState)
	action2RE = regexp.MustCompile(`^` + actSpace + `+` + actRecord + actNewState)
	action3RE = regexp.MustCompile(`^` + actNewState)
)

func (p *program) parseRule(line string, num int, valueMap map[string]string) (rule, error) {
	line = strings.TrimFunc(line, isPySpace)
	r := rule{line: num}
	match, action, hasAction := splitAction(line)
	regex, err := substitute(match, valueMap)
	if err != nil {
		return rule{}, fmt.Errorf("duplicate or invalid variable substitution %q, line %d", match, num)
	}
	if r.re, err = translateRegex(regex); err != nil {
		return rule{}, fmt.Errorf("invalid regular expression %q, line %d: %w", regex, num, err)
	}
	r.assign = make([]int, len(r.re.names))
	for i, g := range r.re.names {
		r.assign[i] = p.valueIndex(g)
	}
	if !hasAction {
		return r, nil
	}
	m := findNamed(actionRE, action)
	if m == nil {
		m = findNamed(action2RE, action)
	}
	if m == nil {
		m = findNamed(action3RE, action)
	}
	if m == nil {
		return rule{}, fmt.Errorf("badly formatted rule %q, line %d", line, num)
	}
	r.lineOp, r.recordOp, r.newState = m["ln_op"], m["rec_op"], m["new_state"]
	if r.lineOp == "Continue" && r.newState != "" {
		return rule{}, fmt.Errorf("action %q with new state %s specified, line %d", r.lineOp, r.newState, num)
	}
	if r.lineOp != "Error" && r.newState != "" && !isPyWord(firstRune(r.newState)) {
		return rule{}, fmt.Errorf("alphanumeric characters only in state names, line %d", num)
	}
	return r, nil
}

func (p *program) valueIndex(name string) int {
	for i, v := range p.values {
		if v.name == name {
			return i
		}
	}
	return -1
}

// splitAction splits a rule at its last white space followed by "->",
// as Python's greedy "(.*)(\s->(.*))" does.
func splitAction(line string) (match, action string, ok bool) {
	for i := len(line) - 1; i >= 0; i-- {
		if !strings.HasPrefix(line[i:], "->") || i == 0 {
			continue
		}
		r, size := utf8.DecodeLastRuneInString(line[:i])
		if isPySpace(r) {
			return line[:i-size], line[i+2:], true
		}
	}
	return line, "", false
}

func findNamed(re *regexp.Regexp, s string) map[string]string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for i, n := range re.SubexpNames() {
		if n != "" {
			out[n] = m[i]
		}
	}
	return out
}

// substitute expands $NAME, ${NAME} and $$ as Python's string.Template
// does: a name is ASCII letters, digits and '_' not starting with a digit,
// and an unknown name or a lone '$' is an error.
func substitute(s string, vars map[string]string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		rest := s[i+1:]
		switch {
		case strings.HasPrefix(rest, "$"):
			b.WriteByte('$')
			i += 2
		case strings.HasPrefix(rest, "{"):
			n := identLen(rest[1:])
			if n == 0 || !strings.HasPrefix(rest[1+n:], "}") {
				return "", fmt.Errorf("invalid placeholder")
			}
			v, ok := vars[rest[1:1+n]]
			if !ok {
				return "", fmt.Errorf("unknown name %s", rest[1:1+n])
			}
			b.WriteString(v)
			i += 3 + n
		default:
			n := identLen(rest)
			if n == 0 {
				return "", fmt.Errorf("invalid placeholder")
			}
			v, ok := vars[rest[:n]]
			if !ok {
				return "", fmt.Errorf("unknown name %s", rest[:n])
			}
			b.WriteString(v)
			i += 1 + n
		}
	}
	return b.String(), nil
}

func identLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || n > 0 && c >= '0' && c <= '9' {
			n++
			continue
		}
		break
	}
	return n
}

// validate checks what Python checks once every state is read.
func (p *program) validate() error {
	if _, ok := p.states["Start"]; !ok {
		return fmt.Errorf("missing state 'Start'")
	}
	if len(p.states["End"]) > 0 {
		return fmt.Errorf("non-empty 'End' state")
	}
	if len(p.states["EOF"]) > 0 {
		return fmt.Errorf("non-empty 'EOF' state")
	}
	delete(p.states, "End")
	_, p.hasEOF = p.states["EOF"]
	for name, rules := range p.states {
		for _, r := range rules {
			if r.lineOp == "Error" || r.newState == "" || r.newState == "End" || r.newState == "EOF" {
				continue
			}
			if _, ok := p.states[r.newState]; !ok {
				return fmt.Errorf("state %q not found, referenced in state %q", r.newState, name)
			}
		}
	}
	return nil
}

// isPySpace is Python's str.isspace for one character.
func isPySpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r >= 0x1c && r <= 0x20, r == 0x85, r == 0xa0, r == 0x1680,
		r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

func pyRStrip(s string) string { return strings.TrimRightFunc(s, isPySpace) }

// isPyWord is Python's \w for one character.
func isPyWord(r rune) bool {
	return r == '_' || isLetterOrNumber(r)
}

func isLetterOrNumber(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

func isPyWordString(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isPyWord(r) {
			return false
		}
	}
	return true
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}
