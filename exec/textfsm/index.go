package textfsm

import (
	"fmt"
	"regexp"
	"strings"
)

// indexRow is one line of an ntc-templates style index: which templates
// parse which command on which platform.
type indexRow struct {
	line      int
	templates string   // the Template column as written, "a.textfsm:b.textfsm"
	files     []string // the Template column split on ':'
	platform  string   // Platform column as written
	command   string   // Command column as written, with [[ ]]
	platRE    *pyRegex // nil when the column is empty: any platform
	cmdRE     *pyRegex // nil when the column is empty: any command
	err       error    // a column Python could not compile: the row cannot be evaluated
}

// index is a parsed index file. The first row that matches wins, so the
// file lists longer commands before their prefixes.
type index struct {
	source  string // "builtin" or the directory
	rows    []indexRow
	columns []string
}

// parseIndex reads an index as Python's clitable does. The header is the
// first line with text once a '#' and what follows it are cut off; other
// lines starting with '#' are comments. A row is split on every comma and
// each field trimmed; a row with another number of fields than the header
// is dropped (reported unless blank). The Command column's "[[xyz]]" means
// "(x(y(z)?)?)?". Every column but Template is a Python regex matched at
// the start of the attribute (re.match), so "cisco_ios" also matches a
// platform "cisco_ios_telnet" — as ntc's own parse_output behaves.
func parseIndex(text, source string) (*index, []error) {
	idx := &index{source: source}
	var errs []error
	lines := templateLines(text)
	n := 0
	for ; n < len(lines) && idx.columns == nil; n++ {
		h := strings.TrimFunc(strings.SplitN(lines[n], "#", 2)[0], isPySpace)
		if h == "" {
			continue
		}
		for _, c := range strings.Split(h, ",") {
			idx.columns = append(idx.columns, strings.TrimFunc(c, isPySpace))
		}
	}
	if col(idx.columns, "Template") < 0 {
		return idx, []error{fmt.Errorf("%s: index: no header naming a Template column", source)}
	}
	for ; n < len(lines); n++ {
		if strings.HasPrefix(lines[n], "#") {
			continue
		}
		fields := strings.Split(lines[n], ",")
		for i := range fields {
			fields[i] = strings.TrimFunc(fields[i], isPySpace)
		}
		if len(fields) != len(idx.columns) {
			if strings.TrimFunc(lines[n], isPySpace) != "" {
				errs = append(errs, fmt.Errorf("%s: index line %d: %d fields where the header has %d; the row is skipped, as clitable skips it",
					source, n+1, len(fields), len(idx.columns)))
			}
			continue
		}
		row := idx.newRow(fields, n+1)
		if row.err != nil {
			errs = append(errs, fmt.Errorf("%s: index line %d: %w", source, n+1, row.err))
		}
		idx.rows = append(idx.rows, row)
	}
	return idx, errs
}

func col(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	return -1
}

func (x *index) newRow(fields []string, line int) indexRow {
	r := indexRow{line: line, templates: fields[col(x.columns, "Template")]}
	r.files = strings.Split(r.templates, ":")
	for i, c := range x.columns {
		value := fields[i]
		switch c {
		case "Template":
			continue
		case "Command":
			r.command = value
			value = expandCompletion(value)
		case "Platform":
			r.platform = value
		}
		if value == "" {
			continue
		}
		re, err := compilePy(value)
		if err != nil {
			r.err = fmt.Errorf("column %s %q: %w", c, fields[i], err)
			continue
		}
		switch c {
		case "Command":
			r.cmdRE = re
		case "Platform":
			r.platRE = re
		}
	}
	return r
}

// completionRE finds the [[...]] optional tails of an index command.
var completionRE = regexp.MustCompile(`\[\[.+?\]\]`)

// expandCompletion turns each "[[xyz]]" into "(x(y(z)?)?)?", so "sh[[ow]]"
// accepts "sh", "sho" and "show". As in clitable, the characters are not
// escaped: the index may not put a regex inside the brackets.
func expandCompletion(cmd string) string {
	return completionRE.ReplaceAllStringFunc(cmd, func(m string) string {
		tail := []rune(m[2 : len(m)-2])
		var b strings.Builder
		for i, r := range tail {
			if i > 0 {
				b.WriteByte('(')
			}
			b.WriteRune(r)
		}
		return "(" + b.String() + strings.Repeat(")?", len(tail))
	})
}

// match returns the first row whose Platform matches platform and whose
// Command matches command. A row that cannot be evaluated stops the
// search with its error when its platform matches (or is itself broken):
// it might have been the right row, and a later, broader one must not win
// in its place.
func (x *index) match(platform, command string) (*indexRow, error) {
	for i := range x.rows {
		r := &x.rows[i]
		platOK, err := matches(r.platRE, platform)
		if err != nil {
			return nil, err
		}
		if r.err != nil {
			if platOK || r.platRE == nil {
				return nil, fmt.Errorf("%s: index line %d cannot be evaluated: %w", x.source, r.line, r.err)
			}
			continue
		}
		if !platOK {
			continue
		}
		cmdOK, err := matches(r.cmdRE, command)
		if err != nil {
			return nil, err
		}
		if cmdOK {
			return r, nil
		}
	}
	return nil, nil
}

func matches(re *pyRegex, s string) (bool, error) {
	if re == nil {
		return true, nil
	}
	return re.matchString(s)
}

// normalizeCommand collapses runs of white space, as a device's parser
// does, so "show  ip int br" finds the same row as "show ip int br".
func normalizeCommand(cmd string) string {
	return strings.Join(strings.Fields(cmd), " ")
}
