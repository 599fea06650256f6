package textfsm

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"sync"
)

// builtinFS holds FieldKit's own templates and their index, in the same
// layout as an ntc-templates directory so one loader serves both.
//
//go:embed templates
var builtinFS embed.FS

// template is one compiled TextFSM template. It is immutable: every parse
// runs on a machine of its own, so one template serves many goroutines.
type template struct {
	name    string
	prog    *program
	columns []string // lower-cased Value names in template order
	keys    []string // names of the Key values, as written

	once sync.Once // compiles prog's regexes at first use
	err  error     // why they do not compile
}

// parseTemplateFile parses a template's text and checks every regex with
// Python's rules; ready compiles them.
func parseTemplateFile(name, text string) (*template, error) {
	p, err := parseTemplate(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t := &template{name: name, prog: p}
	t.columns, _ = table{header: p.header()}.records()
	for _, v := range p.values {
		if v.key {
			t.keys = append(t.keys, v.name)
		}
	}
	return t, nil
}

// compileTemplate parses and compiles a template at once.
func compileTemplate(name, text string) (*template, error) {
	t, err := parseTemplateFile(name, text)
	if err != nil {
		return nil, err
	}
	return t, t.ready()
}

// ready compiles the template's regexes once; every later call returns the
// same answer.
func (t *template) ready() error {
	t.once.Do(func() {
		if err := t.prog.compile(); err != nil {
			t.err = fmt.Errorf("%s: %w", t.name, err)
		}
	})
	return t.err
}

// templateSet is one loaded directory: its index and every *.textfsm file
// in it, compiled or rejected.
type templateSet struct {
	idx      *index
	tmpls    map[string]*template
	rejected map[string]error
}

func loadBuiltin() (*templateSet, []error) {
	sub, err := fs.Sub(builtinFS, "templates")
	if err != nil {
		return emptySet(SourceBuiltin), []error{fmt.Errorf("builtin: %w", err)}
	}
	return loadSet(sub, SourceBuiltin)
}

func loadDir(dir string) (*templateSet, []error) {
	if st, err := os.Stat(dir); err != nil {
		return emptySet(dir), []error{fmt.Errorf("templates_dir: %w", err)}
	} else if !st.IsDir() {
		return emptySet(dir), []error{fmt.Errorf("templates_dir %s: not a directory", dir)}
	}
	return loadSet(os.DirFS(dir), dir)
}

func emptySet(source string) *templateSet {
	return &templateSet{idx: &index{source: source}, tmpls: map[string]*template{}, rejected: map[string]error{}}
}

// loadSet reads the index and compiles every *.textfsm file of fsys, not
// only those the index names, so a broken template is reported at
// start-up even before a row points at it.
func loadSet(fsys fs.FS, source string) (*templateSet, []error) {
	s := emptySet(source)
	var errs []error
	text, err := fs.ReadFile(fsys, "index")
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: index: %w", source, err))
	} else {
		var ierrs []error
		s.idx, ierrs = parseIndex(string(text), source)
		errs = append(errs, ierrs...)
	}
	names, err := fs.Glob(fsys, "*.textfsm")
	if err != nil {
		return s, append(errs, fmt.Errorf("%s: %w", source, err))
	}
	for i, res := range compileAll(fsys, names) {
		if res.err != nil {
			s.rejected[names[i]] = res.err
			errs = append(errs, fmt.Errorf("%s: template %w", source, res.err))
			continue
		}
		s.tmpls[names[i]] = res.tmpl
	}
	return s, append(errs, s.checkRows()...)
}

type compiled struct {
	tmpl *template
	err  error
}

// compileAll parses the named files on as many goroutines as there are
// CPUs. Their regexes are checked now and compiled at first use: a
// thousand templates hold some twenty thousand of them.
func compileAll(fsys fs.FS, names []string) []compiled {
	out := make([]compiled, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				out[i] = compileFile(fsys, names[i])
			}
		})
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

func compileFile(fsys fs.FS, name string) compiled {
	text, err := fs.ReadFile(fsys, name)
	if err != nil {
		return compiled{err: err}
	}
	t, err := parseTemplateFile(name, string(text))
	return compiled{tmpl: t, err: err}
}

// checkRows reports index rows naming a file that does not exist. The
// rows stay: selecting one gives a clear template error instead of
// silently falling through to a broader row.
func (s *templateSet) checkRows() []error {
	var errs []error
	for _, r := range s.idx.rows {
		for _, f := range r.files {
			if _, ok := s.tmpls[f]; ok {
				continue
			}
			if _, ok := s.rejected[f]; ok {
				continue
			}
			errs = append(errs, fmt.Errorf("%s: index line %d: template %s: %w", s.idx.source, r.line, f, fs.ErrNotExist))
		}
	}
	return errs
}

// resolve returns the compiled templates of a row, or why it cannot run.
func (s *templateSet) resolve(r *indexRow) ([]*template, error) {
	out := make([]*template, 0, len(r.files))
	for _, f := range r.files {
		if t, ok := s.tmpls[f]; ok {
			if err := t.ready(); err != nil {
				return nil, fmt.Errorf("%s: %w", s.idx.source, err)
			}
			out = append(out, t)
			continue
		}
		if err, ok := s.rejected[f]; ok {
			return nil, fmt.Errorf("%s: rejected at load: %w", s.idx.source, err)
		}
		return nil, fmt.Errorf("%s: %s: %w", s.idx.source, f, fs.ErrNotExist)
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
