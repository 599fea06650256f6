package textfsm

import (
	"fmt"
	"strings"
	"sync"

	"github.com/sirikothe/gotextfsm"
)

// template is one validated TextFSM template. The source text is kept so a
// fresh state machine can be compiled whenever the pool is empty: gotextfsm
// mutates a compiled TextFSM while parsing, so one is never shared between
// goroutines or used by two parses at once.
type template struct {
	name    string
	text    string
	header  []string // Value names in template order, as written
	columns []string // header lower-cased
	keys    []string // lower-cased names of the Key values
	lists   map[string]bool
	pool    sync.Pool // *gotextfsm.TextFSM, each owned by one parse at a time
}

// compileTemplate validates text as a TextFSM template and keeps the
// compiled machine it built for the first parse.
func compileTemplate(name, text string) (*template, error) {
	fsm, err := compileFSM(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, explain(err))
	}
	t := &template{name: name, text: text, lists: map[string]bool{}}
	t.readValues()
	t.pool.Put(fsm)
	return t, nil
}

func compileFSM(text string) (fsm *gotextfsm.TextFSM, err error) {
	// gotextfsm panics on a few malformed inputs (a bad group name reaching
	// MustCompile); a user's template must never take the process down.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid template: %v", r)
		}
	}()
	fsm = &gotextfsm.TextFSM{}
	if err := fsm.ParseString(text); err != nil {
		return nil, err
	}
	return fsm, nil
}

// explain prefixes gotextfsm's error with the reason in plain words when
// the cause is a regular expression Go's RE2 engine cannot compile.
func explain(err error) string {
	msg := err.Error()
	if !strings.Contains(msg, "error parsing regexp") {
		return msg
	}
	switch {
	case containsAny(msg, "`(?=", "`(?!", "`(?<=", "`(?<!"):
		// RE2 reports a lookbehind as an "invalid named capture".
		return "unsupported by Go RE2 (lookaround): " + msg
	case strings.Contains(msg, "invalid escape sequence: `\\Z`"):
		return "unsupported by Go RE2 (\\Z, use $): " + msg
	case strings.Contains(msg, "invalid repeat count"):
		return "unsupported by Go RE2 (repeat count over 1000): " + msg
	}
	return "invalid regular expression for Go RE2: " + msg
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// readValues records the Value lines' order and options: gotextfsm's
// result maps lose the column order a UI wants to show.
func (t *template) readValues() {
	for _, line := range strings.Split(t.text, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" {
			return
		}
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "Value" {
			continue
		}
		name, opts := f[1], ""
		if !strings.HasPrefix(f[2], "(") {
			name, opts = f[2], f[1]
		}
		lower := strings.ToLower(name)
		t.header = append(t.header, name)
		t.columns = append(t.columns, lower)
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "Key":
				t.keys = append(t.keys, lower)
			case "List":
				t.lists[lower] = true
			}
		}
	}
}

// parse runs output through the template and returns its records with
// lower-case keys.
func (t *template) parse(output string) (rows []map[string]any, err error) {
	fsm, _ := t.pool.Get().(*gotextfsm.TextFSM)
	if fsm == nil {
		if fsm, err = compileFSM(t.text); err != nil {
			return nil, err
		}
	}
	defer func() {
		// A panic inside gotextfsm leaves the machine in an unknown state:
		// drop it rather than return it to the pool.
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: parser failure: %v", t.name, r)
			return
		}
		t.pool.Put(fsm)
	}()
	var out gotextfsm.ParserOutput
	out.Reset(*fsm) // clears values and Filldown memory left by the last parse
	if err := out.ParseTextString(output, *fsm, true); err != nil {
		return nil, fmt.Errorf("%s: %s", t.name, err)
	}
	rows = make([]map[string]any, 0, len(out.Dict))
	for _, rec := range out.Dict {
		row := make(map[string]any, len(rec))
		for k, v := range rec {
			row[strings.ToLower(k)] = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// zero is the value a column holds in a merged record that had no match.
func (t *template) zero(column string) any {
	if t.lists[column] {
		return []string{}
	}
	return ""
}
