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
	templates string // the Template column as written, "a.textfsm:b.textfsm"
	files     []string
	platform  string // Platform column as written
	command   string // Command column as written, with [[ ]]
	platRE    *regexp.Regexp
	cmdRE     *regexp.Regexp
}

// index is a parsed index file. Rows keep file order: the first row that
// matches wins, so the file lists longer commands before their prefixes.
type index struct {
	source string // "builtin" or the directory
	rows   []indexRow
}

// parseIndex reads an index file: '#' comments and blank lines are
// ignored, the first other line is the header naming the columns
// (Template, Hostname, Platform, Command), the rest are rows with
// comma-separated fields. The last column takes the rest of the line, so
// a Command regex may contain commas. Hostname is not matched: FieldKit
// selects templates by driver and command only. A bad row is reported and
// skipped.
func parseIndex(text, source string) (*index, []error) {
	idx := &index{source: source}
	var errs []error
	var header []string
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := splitFields(line, len(header))
		if header == nil {
			header = fields
			if col(header, "Template") < 0 || col(header, "Command") < 0 {
				return idx, []error{fmt.Errorf("%s: index line %d: header must name Template and Command columns", source, n+1)}
			}
			continue
		}
		row, err := newIndexRow(header, fields, n+1)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: index line %d: %w", source, n+1, err))
			continue
		}
		idx.rows = append(idx.rows, row)
	}
	if header == nil {
		errs = append(errs, fmt.Errorf("%s: index has no header row", source))
	}
	return idx, errs
}

// splitFields splits a row on commas into at most n trimmed fields; n of 0
// (the header) splits on every comma.
func splitFields(line string, n int) []string {
	if n == 0 {
		n = -1
	}
	fields := strings.SplitN(line, ",", n)
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return fields
}

func col(header []string, name string) int {
	for i, h := range header {
		if strings.EqualFold(h, name) {
			return i
		}
	}
	return -1
}

func newIndexRow(header, fields []string, line int) (indexRow, error) {
	if len(fields) != len(header) {
		return indexRow{}, fmt.Errorf("want %d fields, got %d", len(header), len(fields))
	}
	r := indexRow{line: line, templates: fields[col(header, "Template")], command: fields[col(header, "Command")]}
	r.files = strings.Split(r.templates, ":")
	var err error
	if r.cmdRE, err = regexp.Compile(`^(?:` + expandCompletion(r.command) + `)`); err != nil {
		return indexRow{}, fmt.Errorf("command %q: %s", r.command, explain(err))
	}
	if p := col(header, "Platform"); p >= 0 && fields[p] != "" {
		r.platform = fields[p]
		// Anchored at both ends, unlike clitable, so a cisco_ios row can
		// never claim the cisco_iosxr driver.
		if r.platRE, err = regexp.Compile(`^(?:` + r.platform + `)$`); err != nil {
			return indexRow{}, fmt.Errorf("platform %q: %s", r.platform, explain(err))
		}
	}
	return r, nil
}

// completionRE finds the [[...]] optional tails of an index command.
var completionRE = regexp.MustCompile(`\[\[(.+?)\]\]`)

// expandCompletion turns each "[[tail]]" into nested optional groups, one
// per character, so "sh[[ow]]" accepts "sh", "sho" and "show" — the
// abbreviation rule of ntc-templates' clitable. The text inside the
// brackets is literal.
func expandCompletion(cmd string) string {
	return completionRE.ReplaceAllStringFunc(cmd, func(m string) string {
		tail := m[2 : len(m)-2]
		var b strings.Builder
		n := 0
		for _, r := range tail {
			b.WriteString("(?:" + regexp.QuoteMeta(string(r)))
			n++
		}
		b.WriteString(strings.Repeat(")?", n))
		return b.String()
	})
}

// match returns the first row for one of the platforms whose command
// regex matches the start of command.
func (x *index) match(platforms []string, command string) (indexRow, bool) {
	for _, r := range x.rows {
		if !r.cmdRE.MatchString(command) {
			continue
		}
		if r.platRE == nil {
			return r, true
		}
		for _, p := range platforms {
			if r.platRE.MatchString(p) {
				return r, true
			}
		}
	}
	return indexRow{}, false
}

// platformAliases maps a FieldKit driver to the platform names an index
// may use for it: ntc-templates calls IOS-XR "cisco_xr", as netmiko does.
var platformAliases = map[string][]string{
	"cisco_iosxr": {"cisco_iosxr", "cisco_xr"},
}

func platformsFor(driver string) []string {
	if p, ok := platformAliases[driver]; ok {
		return p
	}
	return []string{driver}
}

// normalizeCommand collapses runs of white space, as a device's parser
// does, so "show  ip int br" finds the same row as "show ip int br".
func normalizeCommand(cmd string) string {
	return strings.Join(strings.Fields(cmd), " ")
}
