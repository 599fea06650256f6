// Package textfsm turns the text a network device prints for a show
// command into records, with TextFSM templates run by gotextfsm.
//
// A Library holds two template sets, each an ntc-templates style directory
// (an index file plus *.textfsm files): the built-in set written for
// FieldKit and embedded in the binary, and an optional directory named in
// the configuration, which takes precedence. Templates are validated once
// at load; each parse runs on a state machine of its own, because gotextfsm
// mutates a compiled template while it parses.
package textfsm

import (
	"fmt"
	"log/slog"
	"slices"
)

// Library selects and runs templates. It is immutable after Load and safe
// for concurrent use.
type Library struct {
	sets   []*templateSet // the directory first, then the built-ins
	logger *slog.Logger
}

// Parsed is the parsed_output of an execution.
//
// Success means a template was selected and ran without error. A template
// that runs cleanly but finds no record — including on empty output — is
// still a success with Data [] (never null): the device answered and the
// answer held nothing to report, e.g. an empty ARP table.
type Parsed struct {
	Success  bool    `json:"success"`
	Method   *string `json:"method"`   // "textfsm", or null when nothing ran
	Template *string `json:"template"` // Template column of the index row, or null
	// Data holds one map per record, keyed by the lower-cased Value names.
	// A value is a string, or []string for a List value; a Value whose
	// regex has nested named groups yields map[string]string (or a list of
	// them), as gotextfsm returns it.
	Data []map[string]any `json:"data"`
	// Columns lists Data's keys in the order of the template's Value lines.
	Columns []string `json:"columns,omitempty"`
	// Error says why Success is false: "no template for platform X and
	// command Y" or "template error: ...".
	Error string `json:"error,omitempty"`
}

// TemplateInfo describes one index row a Library can select.
type TemplateInfo struct {
	Name     string `json:"name"`            // template file, or files joined by ':'
	Platform string `json:"platform"`        // Platform column (a regex; a driver name in practice)
	Command  string `json:"command"`         // Command column, with [[ ]] abbreviations
	Source   string `json:"source"`          // "builtin" or the templates directory
	Error    string `json:"error,omitempty"` // why the row cannot be used, if it cannot
}

// Load builds a Library from the embedded built-in templates and, when
// templatesDir is not empty, the ntc-templates style directory there, whose
// index rows are tried before the built-ins. Every problem — an unreadable
// index, a bad row, a template Go cannot compile (RE2 has no lookarounds,
// no \Z, no repeat counts over 1000) — is returned as one error naming the
// file and the reason, and only that piece is skipped; Load never fails
// as a whole and the Library it returns is always usable.
func Load(templatesDir string, logger *slog.Logger) (*Library, []error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Library{logger: logger}
	var errs []error
	if templatesDir != "" {
		dir, derrs := loadDir(templatesDir)
		errs = append(errs, derrs...)
		l.sets = append(l.sets, dir)
		logger.Info("textfsm templates loaded", "source", templatesDir,
			"rows", len(dir.idx.rows), "templates", len(dir.tmpls), "rejected", len(dir.rejected))
	}
	builtin, berrs := loadBuiltin()
	errs = append(errs, berrs...)
	l.sets = append(l.sets, builtin)
	logger.Info("textfsm templates loaded", "source", "builtin",
		"rows", len(builtin.idx.rows), "templates", len(builtin.tmpls), "rejected", len(builtin.rejected))
	return l, errs
}

// Parse selects the template for driver and command and runs output
// through it. The templates directory is searched first; if its first
// matching row names a template that was rejected at load, the built-ins
// are tried before that rejection is reported as a template error.
// Commands may be abbreviated as the index allows ("sh ip int br").
func (l *Library) Parse(driver, command, output string) Parsed {
	cmd := normalizeCommand(command)
	platforms := platformsFor(driver)
	var rejected error
	for _, s := range l.sets {
		row, ok := s.idx.match(platforms, cmd)
		if !ok {
			continue
		}
		tmpls, err := s.resolve(row)
		if err != nil {
			if rejected == nil {
				rejected = err
			}
			continue
		}
		return run(row.templates, tmpls, output)
	}
	if rejected != nil {
		return failed("template error: " + rejected.Error())
	}
	return failed(fmt.Sprintf("no template for platform %s and command %s", driver, command))
}

// Templates lists every index row, the templates directory's first, in
// the order they are tried.
func (l *Library) Templates() []TemplateInfo {
	var out []TemplateInfo
	for _, s := range l.sets {
		for _, r := range s.idx.rows {
			info := TemplateInfo{Name: r.templates, Platform: r.platform, Command: r.command, Source: s.idx.source}
			if _, err := s.resolve(r); err != nil {
				info.Error = err.Error()
			}
			out = append(out, info)
		}
	}
	return out
}

// run parses output with each template of a row and merges the tables.
func run(name string, tmpls []*template, output string) Parsed {
	tables := make([]table, len(tmpls))
	for i, t := range tmpls {
		rows, err := t.parse(output)
		if err != nil {
			return failed("template error: " + err.Error())
		}
		tables[i] = table{columns: t.columns, rows: rows}
	}
	merged, err := mergeTables(tmpls, tables)
	if err != nil {
		return failed(fmt.Sprintf("template error: %s: %s", name, err))
	}
	method := "textfsm"
	return Parsed{Success: true, Method: &method, Template: &name, Data: merged.rows, Columns: slices.Clone(merged.columns)}
}

func failed(msg string) Parsed {
	return Parsed{Data: []map[string]any{}, Error: msg}
}
