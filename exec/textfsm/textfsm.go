// Package textfsm turns the text a network device prints for a show
// command into records, with TextFSM templates interpreted as Python's
// textfsm interprets them and selected as ntc-templates' clitable selects
// them.
//
// A Library holds two template sets, each an ntc-templates style directory
// (an index file plus *.textfsm files): an optional directory named in the
// configuration, and the built-in set embedded in the binary. A lookup
// tries an ordered list of ntc platform names (see Platforms); for each
// one the directory comes first, then the built-ins. Templates are
// compiled once at load and are immutable: every parse runs on a state
// machine of its own.
package textfsm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// SourceBuiltin is the Source of the templates embedded in the binary.
const SourceBuiltin = "builtin"

// ErrNoTemplate is wrapped by a lookup that finds no index row.
var ErrNoTemplate = errors.New("no template")

// Library selects and runs templates. It is immutable after Load and safe
// for concurrent use.
type Library struct {
	sets []*templateSet // the directory first, then the built-ins
	// found remembers lookup's answers: the index is fixed once loaded, and matching a
	// command against its rows' expressions cost more than parsing a short output.
	found   sync.Map // platforms and command → lookupResult
	foundMu sync.Mutex
	foundN  int
}

// foundMax bounds the remembered lookups: commands with variables make new texts.
const foundMax = 4096

type lookupResult struct {
	tmpls []*template
	m     Match
	err   error
}

// Parsed is the parsed_output of an execution.
//
// Success means a template was selected and ran without error. A template
// that runs cleanly but finds no record — including on empty output — is
// still a success with Data [] (never null): the device answered and the
// answer held nothing to report, e.g. an empty ARP table.
type Parsed struct {
	Success bool    `json:"success"`
	Method  *string `json:"method"` // "textfsm", or null when nothing ran
	// Template names the file that parsed: "builtin/<file>" for a built-in
	// template, the file's name alone for one of the templates directory
	// (never the server's path to it); files of a multi-template row are
	// joined by ':'; null when nothing ran.
	Template *string `json:"template"`
	// Data holds one map per record, keyed by the lower-cased Value names,
	// exactly as ntc-templates' parse_output returns it: a value is a
	// string, or for a List value a []any of strings — or of
	// map[string]any (string or nil values) when the List's regex has
	// named groups. A List item is nil where Python's is None.
	Data []map[string]any `json:"data"`
	// Columns lists Data's keys in the order of the template's Value lines.
	Columns []string `json:"columns,omitempty"`
	// Error says why Success is false: "no template for platform X and
	// command Y" or "template error: ...".
	Error string `json:"error,omitempty"`
}

// Match is the index row a lookup selected.
type Match struct {
	Template string // the row's Template column: a file, or several joined by ':'
	Source   string // SourceBuiltin or the templates directory
	Platform string // the platform candidate that selected the row
	Line     int    // the row's line in its index file
}

// Name is the template as Parsed.Template shows it: a built-in's file prefixed
// with "builtin/", a file of the templates directory by its name alone, so that
// no answer shows where the server keeps its files.
func (m Match) Name() string {
	if m.Source == SourceBuiltin {
		return SourceBuiltin + "/" + m.Template
	}
	return m.Template
}

// TemplateInfo describes one index row a Library can select.
type TemplateInfo struct {
	Name     string `json:"name"`            // template file, or files joined by ':'
	Platform string `json:"platform"`        // Platform column (a regex, an ntc platform name in practice)
	Command  string `json:"command"`         // Command column, with [[ ]] abbreviations
	Source   string `json:"source"`          // "builtin" or the templates directory
	Line     int    `json:"line"`            // line in the index file
	Error    string `json:"error,omitempty"` // why the row cannot be used, if it cannot
}

// Load builds a Library from the embedded built-in templates and, when
// templatesDir is not empty, the ntc-templates style directory there.
// Every problem — an unreadable index, a bad row, a template that does
// not compile — is returned as one error naming the file and the reason;
// only that piece is unusable, and a lookup that reaches it reports the
// reason instead of falling through to another row. Load never fails as a
// whole and the Library it returns is always usable.
func Load(templatesDir string, logger *slog.Logger) (*Library, []error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Library{}
	var errs []error
	add := func(s *templateSet, serrs []error, took time.Duration) {
		errs = append(errs, serrs...)
		l.sets = append(l.sets, s)
		logger.Info("textfsm templates loaded", "source", s.idx.source, "rows", len(s.idx.rows),
			"templates", len(s.tmpls), "rejected", len(s.rejected), "ms", took.Milliseconds())
	}
	if templatesDir != "" {
		start := time.Now()
		s, serrs := loadDir(templatesDir)
		add(s, serrs, time.Since(start))
	}
	start := time.Now()
	s, serrs := loadBuiltin()
	add(s, serrs, time.Since(start))
	return l, errs
}

// Lookup finds the index row for command on the first platform candidate
// that has one; on each candidate the templates directory is searched
// before the built-ins, and the first matching row of an index wins.
// Commands may be abbreviated as the index allows ("sh ip int br"); runs
// of white space count as one space. A row whose template could not be
// loaded is an error naming the reason — never a reason to try another
// row. No row at all is an error wrapping ErrNoTemplate.
func (l *Library) Lookup(platforms []string, command string) (Match, error) {
	_, m, err := l.lookup(platforms, command)
	return m, err
}

func (l *Library) lookup(platforms []string, command string) ([]*template, Match, error) {
	key := strings.Join(platforms, "\x00") + "\x01" + command
	if v, ok := l.found.Load(key); ok {
		r := v.(lookupResult)
		return r.tmpls, r.m, r.err
	}
	tmpls, m, err := l.match(platforms, command)
	l.foundMu.Lock()
	if l.foundN < foundMax {
		if _, loaded := l.found.LoadOrStore(key, lookupResult{tmpls, m, err}); !loaded {
			l.foundN++
		}
	}
	l.foundMu.Unlock()
	return tmpls, m, err
}

// match finds the index row of the first platform that has one for command.
func (l *Library) match(platforms []string, command string) ([]*template, Match, error) {
	cmd := normalizeCommand(command)
	for _, p := range platforms {
		for _, s := range l.sets {
			row, err := s.idx.match(p, cmd)
			if err != nil {
				return nil, Match{}, err
			}
			if row == nil {
				continue
			}
			m := Match{Template: row.templates, Source: s.idx.source, Platform: p, Line: row.line}
			tmpls, err := s.resolve(row)
			return tmpls, m, err
		}
	}
	names := strings.Join(platforms, " or ")
	if names == "" {
		names = "none"
	}
	return nil, Match{}, fmt.Errorf("%w for platform %s and command %s", ErrNoTemplate, names, command)
}

// Parse selects the template for the platform candidates and command
// (see Lookup) and runs output through it.
func (l *Library) Parse(platforms []string, command, output string) Parsed {
	tmpls, m, err := l.lookup(platforms, command)
	switch {
	case errors.Is(err, ErrNoTemplate):
		return failed(err.Error())
	case err != nil:
		return failed("template error: " + err.Error())
	}
	t, err := runRow(context.Background(), tmpls, output)
	if err != nil {
		return failed("template error: " + err.Error())
	}
	method, name := "textfsm", m.Name()
	columns, data := t.records()
	return Parsed{Success: true, Method: &method, Template: &name, Data: data, Columns: columns}
}

// Templates lists every index row, the templates directory's first, in
// the order they are tried for one platform.
func (l *Library) Templates() []TemplateInfo {
	var out []TemplateInfo
	for _, s := range l.sets {
		for i := range s.idx.rows {
			r := &s.idx.rows[i]
			info := TemplateInfo{Name: r.templates, Platform: r.platform, Command: r.command, Source: s.idx.source, Line: r.line}
			if r.err != nil {
				info.Error = r.err.Error()
			} else if _, err := s.resolve(r); err != nil {
				info.Error = err.Error()
			}
			out = append(out, info)
		}
	}
	return out
}

func failed(msg string) Parsed {
	return Parsed{Data: []map[string]any{}, Error: msg}
}

// Template is a compiled template outside any library, for trying a
// template's text on an output before it is installed.
type Template struct{ t *template }

// Compile parses and compiles a template's text with Python textfsm's
// rules; name appears in error messages.
func Compile(name, text string) (*Template, error) {
	t, err := compileTemplate(name, text)
	if err != nil {
		return nil, err
	}
	return &Template{t: t}, nil
}

// Columns lists the keys of the records, in the order of the Value lines.
func (t *Template) Columns() []string { return t.t.columns }

// Parse runs output through the template. It is safe for concurrent use.
func (t *Template) Parse(output string) ([]map[string]any, error) {
	return t.ParseContext(context.Background(), output)
}

// ParseContext is Parse bounded by ctx: once ctx is done the parse stops
// between two lines with an error wrapping ctx's cause. A template
// someone pastes is parsed so, since its rules may take any time (one
// regex match is bounded on its own, at 5 s).
func (t *Template) ParseContext(ctx context.Context, output string) ([]map[string]any, error) {
	tbl, err := runRow(ctx, []*template{t.t}, output)
	if err != nil {
		return nil, err
	}
	_, data := tbl.records()
	return data, nil
}

// Check compiles every template not compiled yet and returns the problems
// found; Load leaves the final compilation of each template to its first
// use so that start-up stays fast.
func (l *Library) Check() []error {
	var errs []error
	for _, s := range l.sets {
		for _, n := range sortedKeys(s.tmpls) {
			if err := s.tmpls[n].ready(); err != nil {
				errs = append(errs, fmt.Errorf("%s: template %w", s.idx.source, err))
			}
		}
	}
	return errs
}

// Keys names, lower-cased as Parsed.Data's keys are, the Key values of the
// template that Parsed.Template names: what identifies one record, so that two
// parses of the same command can be compared record by record. A name the
// library no longer holds answers false; a template without a Key value
// answers none (compare whole records then). A path that an older version put
// in Parsed.Template is read by its file name.
func (l *Library) Keys(name string) ([]string, bool) {
	files, builtin := strings.CutPrefix(name, SourceBuiltin+"/")
	for _, s := range l.sets {
		if (s.idx.source == SourceBuiltin) != builtin {
			continue
		}
		var keys []string
		for _, f := range strings.Split(files, ":") {
			t := s.tmpls[filepath.Base(f)]
			if t == nil {
				return nil, false
			}
			for _, k := range t.keys {
				if k = strings.ToLower(k); !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
		return keys, true
	}
	return nil, false
}
