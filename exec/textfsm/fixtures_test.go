package textfsm

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// ntcDir and fixturesDir are checkouts of networktocode/ntc-templates'
// templates and tests folders, shared between workspaces and never copied
// into this repository.
const (
	ntcDir      = "../../../shared/ntc-templates"
	fixturesDir = "../../../shared/ntc-fixtures"
)

// needShared skips (or, in CI, fails) a test when a shared folder is
// missing.
func needShared(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s missing in CI: %v", path, err)
		}
		t.Skipf("%s not found (%v): check out ntc-templates beside the repository as shared/ to run this test", path, err)
	}
}

// fixture is one ntc test case: tests/<platform>/<command_words>/<name>.raw
// with its expected parse in <name>.yml.
type fixture struct {
	raw, platform, command string
}

// ntcFixtures lists the cases as ntc's test collects them: every *.raw two
// folders below the tests folder; the platform is the first folder, the
// command the second with '_' read as a space.
func ntcFixtures(t testing.TB) []fixture {
	needShared(t, fixturesDir)
	raws, err := filepath.Glob(filepath.Join(fixturesDir, "*", "*", "*.raw"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fixture
	for _, raw := range raws {
		rel, _ := filepath.Rel(fixturesDir, raw)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[1], ".") || strings.HasPrefix(parts[2], ".") {
			continue // Python's glob skips hidden names
		}
		out = append(out, fixture{raw: raw, platform: parts[0], command: strings.ReplaceAll(parts[1], "_", " ")})
	}
	return out
}

// readRaw reads a .raw file as Python's open(..., "r") does: universal
// newlines turn "\r\n" and "\r" into "\n".
func readRaw(path string) (string, error) {
	b, err := os.ReadFile(path)
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n"), err
}

// loadExpected reads a .yml's parsed_sample with PyYAML's safe_load
// typing (YAML 1.1): an unquoted yes, 10 or 2020-01-01 is not a string,
// and so never equals what a parser returns.
func loadExpected(path string) ([]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty document", path)
	}
	top, ok := pyYAML(doc.Content[0]).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a mapping", path)
	}
	sample, ok := top["parsed_sample"]
	if !ok {
		return nil, fmt.Errorf("%s: no parsed_sample", path)
	}
	list, _ := sample.([]any)
	if sample != nil && list == nil {
		return nil, fmt.Errorf("%s: parsed_sample is not a list", path)
	}
	return list, nil
}

// yamlOther is a scalar PyYAML would load as something else than a string.
type yamlOther struct{ tag, text string }

var (
	yaml11Null  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	yaml11Bool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	yaml11Int   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yaml11Float = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yaml11Time  = regexp.MustCompile(`^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$`)
)

func pyYAML(n *yaml.Node) any {
	switch n.Kind {
	case yaml.AliasNode:
		return pyYAML(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = pyYAML(c)
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i].Value] = pyYAML(n.Content[i+1])
		}
		return out
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || n.Tag == "!!str" && n.Style&yaml.TaggedStyle != 0 {
		return n.Value
	}
	switch {
	case yaml11Null.MatchString(n.Value):
		return nil
	case yaml11Bool.MatchString(n.Value):
		return yamlOther{"bool", n.Value}
	case yaml11Int.MatchString(n.Value):
		return yamlOther{"int", n.Value}
	case yaml11Float.MatchString(n.Value):
		return yamlOther{"float", n.Value}
	case yaml11Time.MatchString(n.Value):
		return yamlOther{"timestamp", n.Value}
	}
	return n.Value
}

// compareNTC makes the three checks of ntc's own test: the same number of
// records, the same keys in each, and equal values for every key.
func compareNTC(got []map[string]any, want []any) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		wm, ok := w.(map[string]any)
		if !ok {
			return fmt.Errorf("record %d: expected record is not a mapping", i)
		}
		if a, b := sortedKeys(got[i]), sortedKeys(wm); !reflect.DeepEqual(a, b) {
			return fmt.Errorf("record %d: keys %v, want %v", i, a, b)
		}
		for k, wv := range wm {
			if !pyEqual(got[i][k], wv) {
				return fmt.Errorf("record %d key %s: %#v, want %#v", i, k, got[i][k], wv)
			}
		}
	}
	return nil
}

// pyEqual is Python's == between a parsed value and a loaded YAML value.
func pyEqual(got, want any) bool {
	switch g := got.(type) {
	case nil:
		return want == nil
	case string:
		w, ok := want.(string)
		return ok && g == w
	case []string:
		w, ok := want.([]any)
		if !ok || len(w) != len(g) {
			return false
		}
		for i := range g {
			if !pyEqual(g[i], w[i]) {
				return false
			}
		}
		return true
	case []any:
		w, ok := want.([]any)
		if !ok || len(w) != len(g) {
			return false
		}
		for i := range g {
			if !pyEqual(g[i], w[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok || len(w) != len(g) {
			return false
		}
		for k, v := range g {
			wv, ok := w[k]
			if !ok || !pyEqual(v, wv) {
				return false
			}
		}
		return true
	}
	return false
}

// TestNTCFixtures parses every ntc-templates test fixture with ntc's
// templates, selected through ntc's index by the fixture's platform and
// command, and compares the records with the fixture's parsed_sample the
// way ntc's own test does.
func TestNTCFixtures(t *testing.T) {
	testNTCFixtures(t)
}

// TestNTCFixturesBacktracking runs the corpus again with every regex on
// regexp2, the engine that serves what RE2 cannot say: both engines must
// give Python's answer on every pattern RE2 can say too.
func TestNTCFixturesBacktracking(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus once is enough in -short mode")
	}
	// Patterns that run on RE2 in production run here on regexp2, and a few
	// of them take seconds on it when other builds load the machine: the
	// comparison of answers must not turn into a race with the clock.
	useBacktracking, matchTimeout = true, time.Minute
	defer func() { useBacktracking, matchTimeout = false, 5*time.Second }()
	testNTCFixtures(t)
}

func testNTCFixtures(t *testing.T) {
	needShared(t, ntcDir)
	fixtures := ntcFixtures(t)
	lib, errs := Load(ntcDir, nil)
	for _, err := range errs {
		t.Errorf("load: %v", err)
	}
	// The full run checks every fixture; -short (the race run) every fourth, which
	// still reaches every engine path the corpus exercises at a quarter of the time.
	if testing.Short() {
		var some []fixture
		for i := 0; i < len(fixtures); i += 4 {
			some = append(some, fixtures[i])
		}
		fixtures = some
	}
	var failures []string
	for _, f := range fixtures {
		if err := checkFixture(lib, f); err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", strings.TrimPrefix(f.raw, fixturesDir+"/"), err))
		}
	}
	t.Logf("ntc fixtures: %d/%d match", len(fixtures)-len(failures), len(fixtures))
	if len(fixtures) == 0 {
		t.Fatal("no fixtures found")
	}
	for i, f := range failures {
		if i == 40 {
			t.Errorf("... and %d more", len(failures)-i)
			break
		}
		t.Error(f)
	}
}

func checkFixture(lib *Library, f fixture) error {
	m, err := lib.Lookup([]string{f.platform}, f.command)
	if err != nil {
		return err
	}
	if m.Source != ntcDir {
		return fmt.Errorf("selected %s, not a template of %s", m.Name(), ntcDir)
	}
	return parseFixture(lib, f, m.Template)
}

// parseFixture parses a fixture through lib and compares the records with
// its parsed_sample.
func parseFixture(lib *Library, f fixture, template string) error {
	want, err := loadExpected(strings.TrimSuffix(f.raw, ".raw") + ".yml")
	if err != nil {
		return err
	}
	raw, err := readRaw(f.raw)
	if err != nil {
		return err
	}
	p := lib.Parse([]string{f.platform}, f.command, raw)
	if !p.Success {
		return fmt.Errorf("%s: %s", template, p.Error)
	}
	if err := compareNTC(p.Data, want); err != nil {
		return fmt.Errorf("%s: %w", template, err)
	}
	return nil
}
