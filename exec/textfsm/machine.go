package textfsm

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// machine is the state of one parse: Python's TextFSM object after
// Reset. It is used by one goroutine and thrown away afterwards.
//
// A value is nil (Python's None), a string, or — in a record — a list
// ([]any of strings, nils and, for a List whose regex has named groups,
// map[string]any).
type machine struct {
	p       *program
	state   []rule
	name    string
	slots   []slot
	records [][]any
}

type slot struct {
	value any
	memo  any   // Filldown: the last value assigned
	list  []any // List: the items of the current record
}

// run parses text and returns the records in Value order. It gives up
// with ctx's error once ctx is done, looking every checkEvery lines.
func (p *program) run(ctx context.Context, text string) ([][]any, error) {
	m := &machine{p: p, state: p.states["Start"], name: "Start", slots: make([]slot, len(p.values))}
	for i, line := range splitLines(text) {
		if i%checkEvery == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("parse stopped at line %d: %w", i+1, context.Cause(ctx))
		}
		if err := m.checkLine(line); err != nil {
			return nil, err
		}
		if m.name == "End" || m.name == "EOF" {
			break
		}
	}
	if m.name != "End" && !p.hasEOF {
		// The implicit EOF state records what is left, unless the template
		// declares an (empty) EOF state to suppress it.
		if err := m.appendRecord(); err != nil {
			return nil, err
		}
	}
	return m.records, nil
}

// checkEvery is how many lines a parse runs between two looks at its
// context: often enough to stop within milliseconds, rarely enough to cost
// nothing.
const checkEvery = 64

// splitLines splits text at the line boundaries of Python's
// str.splitlines(), which include \r, \v, \f, \x1c-\x1e, \x85, U+2028 and
// U+2029 as well as \n and \r\n.
func splitLines(text string) []string {
	var lines []string
	start := 0
	for i, r := range text {
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		case '\r':
			if strings.HasPrefix(text[i+1:], "\n") {
				continue // the \n ends this line
			}
		default:
			continue
		}
		end := i
		if r == '\n' && i > 0 && text[i-1] == '\r' {
			end = i - 1
		}
		lines = append(lines, text[start:end])
		start = i + len(string(r))
	}
	if start < len(text) {
		lines = append(lines, text[start:])
	}
	return lines
}

// checkLine runs one line through the rules of the current state until a
// rule that is not Continue matches.
func (m *machine) checkLine(line string) error {
	var runes []rune
	for i := range m.state {
		r := &m.state[i]
		match, ok, err := r.re.find(line, &runes)
		if err != nil {
			return fmt.Errorf("rule line %d: %w", r.line, err)
		}
		if !ok {
			continue
		}
		for j, v := range r.assign {
			if v < 0 {
				continue
			}
			if err := m.assign(v, match.group(j)); err != nil {
				return err
			}
		}
		next, err := m.operate(r, line)
		if err != nil {
			return err
		}
		if next {
			if r.newState != "" {
				if r.newState != "End" && r.newState != "EOF" {
					m.state = m.p.states[r.newState]
				}
				m.name = r.newState
			}
			return nil
		}
	}
	return nil
}

// assign stores a matched value and runs its options' hooks in the order
// they are written, as Python's TextFSMValue.AssignVar does.
func (m *machine) assign(i int, v any) error {
	def, s := &m.p.values[i], &m.slots[i]
	s.value = v
	for _, o := range def.options {
		switch o {
		case optFilldown:
			s.memo = v
		case optFillup:
			m.fillUp(i, v)
		case optList:
			item, err := listItem(def, v)
			if err != nil {
				return err
			}
			s.list = append(s.list, item)
		}
	}
	return nil
}

// fillUp copies a value into the records above that lack it, up to the
// first record that has one.
func (m *machine) fillUp(i int, v any) {
	if !truthy(v) {
		return
	}
	for j := len(m.records) - 1; j >= 0; j-- {
		if truthy(m.records[j][i]) {
			return
		}
		m.records[j][i] = v
	}
}

// listItem is what a List value appends: the dict of its own regex's
// named groups when it has more than one group and names some, else the
// value itself.
func listItem(def *valueDef, v any) (any, error) {
	if def.nested.groups <= 1 {
		return v, nil
	}
	s, ok := v.(string)
	if !ok {
		// Python fails here too: re.match(None) is a TypeError.
		return nil, fmt.Errorf("value %s: List value with nested groups did not match", def.name)
	}
	var runes []rune
	match, ok, err := def.nested.find(s, &runes)
	if err != nil {
		return nil, fmt.Errorf("value %s: %w", def.name, err)
	}
	if !ok || len(def.nested.names) == 0 {
		return v, nil
	}
	values := make([]any, len(def.nested.names))
	for i := range def.nested.names {
		values[i] = match.group(i)
	}
	// The dict is kept as the text clitable would store it.
	return pyDict(def.nested.names, values), nil
}

// errStateError carries a template's Error action.
var errStateError = errors.New("state error raised")

// operate runs a matched rule's record operation, then its line
// operation; it reports whether to move to the next line.
func (m *machine) operate(r *rule, line string) (bool, error) {
	switch r.recordOp {
	case "Record":
		if err := m.appendRecord(); err != nil {
			return false, err
		}
	case "Clear":
		m.clearRecord()
	case "Clearall":
		m.clearAll()
	}
	switch r.lineOp {
	case "Error":
		if r.newState != "" {
			return false, fmt.Errorf("%w: %s, rule line %d, input line %q", errStateError, r.newState, r.line, line)
		}
		return false, fmt.Errorf("%w: rule line %d, input line %q", errStateError, r.line, line)
	case "Continue":
		return false, nil
	}
	return true, nil
}

// appendRecord adds the current record to the result unless a Required
// value is empty or every value is None or an empty list.
func (m *machine) appendRecord() error {
	if len(m.p.values) == 0 {
		return nil
	}
	rec := make([]any, len(m.slots))
	for i := range m.slots {
		def, s := &m.p.values[i], &m.slots[i]
		for _, o := range def.options {
			switch o {
			case optRequired:
				if !truthy(s.value) {
					m.clearRecord()
					return nil
				}
			case optList:
				s.value = append(make([]any, 0, len(s.list)), s.list...)
			}
		}
		rec[i] = s.value
	}
	empty := true
	for i, v := range rec {
		if l, ok := v.([]any); v != nil && (!ok || len(l) > 0) {
			empty = false
		}
		if v == nil {
			rec[i] = ""
		}
	}
	if empty {
		return nil
	}
	m.records = append(m.records, rec)
	m.clearRecord()
	return nil
}

// clearRecord forgets the values of the current record except Filldown
// ones (and the items of a Filldown List).
func (m *machine) clearRecord() {
	for i := range m.slots {
		def, s := &m.p.values[i], &m.slots[i]
		s.value = nil
		for _, o := range def.options {
			switch o {
			case optFilldown:
				s.value = s.memo
			case optList:
				if !def.filldown {
					s.list = nil
				}
			}
		}
	}
}

// clearAll forgets every value, Filldown memory included.
func (m *machine) clearAll() {
	for i := range m.slots {
		m.slots[i] = slot{}
	}
}

// truthy is Python's truth value of a record entry.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	}
	return true
}
