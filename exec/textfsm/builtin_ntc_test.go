package textfsm

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestBuiltinsAgreeWithNTC runs every ntc fixture whose platform and
// command a built-in template covers through that built-in: it must bear
// the name of the template ntc's index selects and give exactly the
// fixture's records, so that adding the ntc directory later changes
// nothing a user sees.
func TestBuiltinsAgreeWithNTC(t *testing.T) {
	needShared(t, ntcDir)
	builtin := loadBuiltinOnly(t)
	ntc, _ := Load(ntcDir, nil)
	covered := map[string]int{}
	var failures []string
	for _, f := range ntcFixtures(t) {
		m, err := builtin.Lookup([]string{f.platform}, f.command)
		if err != nil {
			continue
		}
		covered[m.Template]++
		want, _ := ntc.Lookup([]string{f.platform}, f.command)
		if err := checkBuiltinFixture(builtin, f, m, want); err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", strings.TrimPrefix(f.raw, fixturesDir+"/"), err))
		}
	}
	// The built-ins' own samples too: where ntc has a template for the
	// command, both must give the same records.
	raws, _ := filepath.Glob(filepath.Join(goldenDir, "*", "*.raw"))
	for _, raw := range raws {
		driver := filepath.Base(filepath.Dir(raw))
		command := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(raw), ".raw"), "_", " ")
		want, err := ntc.Lookup(driverPlatforms(driver), command)
		if err != nil || want.Source != ntcDir {
			continue // ntc has no template for it: the built-in is FieldKit's own
		}
		input, _ := os.ReadFile(raw)
		mine, _ := builtin.Lookup(driverPlatforms(driver), command)
		got := builtin.Parse(driverPlatforms(driver), command, string(input))
		exp := ntc.Parse(driverPlatforms(driver), command, string(input))
		switch {
		case mine.Template != want.Template:
			failures = append(failures, fmt.Sprintf("sample %s: built-in %s, ntc selects %s", raw, mine.Template, want.Template))
		case got.Success != exp.Success || !reflect.DeepEqual(got.Data, exp.Data) || !slices.Equal(got.Columns, exp.Columns):
			failures = append(failures, fmt.Sprintf("sample %s: built-in gives %v %s\nntc gives %v %s", raw, got.Data, got.Error, exp.Data, exp.Error))
		}
	}
	n := 0
	for _, c := range covered {
		n += c
	}
	t.Logf("built-ins: %d templates cover %d ntc fixtures; %d disagreements with ntc (fixtures and samples)", len(covered), n, len(failures))
	for _, info := range builtin.Templates() {
		if covered[info.Name] == 0 {
			t.Logf("built-in %s covers no ntc fixture", info.Name)
		}
	}
	only := os.Getenv("FK_ONLY") // focus on one template while writing it
	for _, f := range failures {
		if strings.Contains(f, only) {
			t.Error(f)
		}
	}
}

func checkBuiltinFixture(lib *Library, f fixture, m, ntcMatch Match) error {
	if m.Template != ntcMatch.Template {
		return fmt.Errorf("built-in %s, ntc selects %s", m.Template, ntcMatch.Template)
	}
	return parseFixture(lib, f, m.Template)
}

// TestBuiltinsAreOurOwn holds the built-ins to the house rule that no
// public code enters the repository: a built-in may share ntc's key names
// and read the same output, but none of its rules may be a line of ntc's
// template of the same name (compared with runs of blanks as one).
func TestBuiltinsAreOurOwn(t *testing.T) {
	needShared(t, ntcDir)
	entries, err := fs.ReadDir(builtinFS, "templates")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".textfsm") {
			continue
		}
		theirs, err := os.ReadFile(filepath.Join(ntcDir, e.Name()))
		if err != nil {
			continue // no ntc counterpart
		}
		ntcRules := map[string]bool{}
		for _, l := range strings.Split(string(theirs), "\n") {
			ntcRules[strings.Join(strings.Fields(l), " ")] = true
		}
		mine, _ := fs.ReadFile(builtinFS, "templates/"+e.Name())
		for i, l := range strings.Split(string(mine), "\n") {
			if l = strings.Join(strings.Fields(l), " "); strings.HasPrefix(l, "^") && l != `^\s*$$` && ntcRules[l] {
				t.Errorf("%s:%d is a line of ntc's template: %s", e.Name(), i+1, l)
			}
		}
	}
}
