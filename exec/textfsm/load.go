package textfsm

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"sort"
	"sync"
)

// builtinFS holds FieldKit's own templates and their index, in the same
// layout as an ntc-templates directory so one loader serves both.
//
//go:embed templates
var builtinFS embed.FS

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
		return emptySet("builtin"), []error{fmt.Errorf("builtin: %w", err)}
	}
	return loadSet(sub, "builtin")
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
// only those the index names, so a broken template is reported even
// before a row points at it.
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

// compileAll compiles the named files on as many goroutines as there are
// CPUs: gotextfsm builds several regexes per rule, and a thousand
// templates take seconds on one core.
func compileAll(fsys fs.FS, names []string) []compiled {
	out := make([]compiled, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = compileFile(fsys, names[i])
			}
		}()
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
	t, err := compileTemplate(name, string(text))
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
func (s *templateSet) resolve(r indexRow) ([]*template, error) {
	out := make([]*template, 0, len(r.files))
	for _, f := range r.files {
		if t, ok := s.tmpls[f]; ok {
			out = append(out, t)
			continue
		}
		if err, ok := s.rejected[f]; ok {
			return nil, fmt.Errorf("%s: rejected at load: %w", s.idx.source, err)
		}
		return nil, fmt.Errorf("%s: %w", path.Join(s.idx.source, f), fs.ErrNotExist)
	}
	return out, nil
}

// counts reports how many template files compiled and how many were
// rejected, for logs and tests.
func (s *templateSet) counts() (loaded, rejected int) {
	return len(s.tmpls), len(s.rejected)
}

// rejectedNames lists the rejected files in name order.
func (s *templateSet) rejectedNames() []string {
	names := make([]string, 0, len(s.rejected))
	for n := range s.rejected {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
