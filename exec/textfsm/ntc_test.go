package textfsm

import (
	"strings"
	"testing"

	"fieldkit/exec"
	"fieldkit/exec/platform"
)

// TestNTCTemplatesLoad loads the whole ntc-templates directory and
// compiles every template: each must load, as each loads in Python.
func TestNTCTemplatesLoad(t *testing.T) {
	needShared(t, ntcDir)
	lib, errs := Load(ntcDir, nil)
	errs = append(errs, lib.Check()...)
	dir := lib.sets[0]
	files := len(dir.tmpls) + len(dir.rejected)
	t.Logf("ntc-templates: %d/%d templates load, %d index rows", len(dir.tmpls)-len(errs), files, len(dir.idx.rows))
	var re2, backtracking int
	for _, tm := range dir.tmpls {
		for _, rules := range tm.prog.states {
			for _, r := range rules {
				if r.re.goRE != nil {
					re2++
				} else {
					backtracking++
				}
			}
		}
	}
	t.Logf("rule regexes: %d on Go's regexp, %d on regexp2", re2, backtracking)
	for _, err := range errs {
		t.Error(err)
	}
	if files < 900 || len(dir.idx.rows) < 900 {
		t.Errorf("only %d templates and %d index rows found", files, len(dir.idx.rows))
	}
}

// TestNTCEveryRowReachable checks that every row of ntc's index is
// selected by some lookup with its platform's name: by a fixture, looked
// up with its folder as the platform, or else by the row's own command
// written out, alone or with an argument (ntc's own index shadows
// "display vlan" on huawei_vrp with a two-template row, so that row only
// answers "display vlan 10").
func TestNTCEveryRowReachable(t *testing.T) {
	needShared(t, ntcDir)
	lib, _ := Load(ntcDir, nil)
	hit := map[int]bool{}
	for _, f := range ntcFixtures(t) {
		if m, err := lib.Lookup([]string{f.platform}, f.command); err == nil && m.Source == ntcDir {
			hit[m.Line] = true
		}
	}
	rows := lib.sets[0].idx.rows
	t.Logf("ntc index: %d/%d rows selected by a fixture", len(hit), len(rows))
	for _, r := range rows {
		full := strings.NewReplacer("[[", "", "]]", "").Replace(r.command)
		for _, cmd := range []string{full, full + " 10"} {
			if m, err := lib.Lookup([]string{r.platform}, cmd); err == nil && m.Line == r.line {
				hit[r.line] = true
			}
		}
		if !hit[r.line] {
			t.Errorf("index line %d (%s, %s, %s) is selected by no fixture", r.line, r.templates, r.platform, r.command)
		}
	}
}

// TestNTCKnowsEveryPlatform checks the names package platform resolves
// to against ntc's index: every platform an alias leads to and every
// driver's platform selects some row, but dell_os10, netmiko's name for
// OS10, which ntc has no templates for.
func TestNTCKnowsEveryPlatform(t *testing.T) {
	needShared(t, ntcDir)
	lib, _ := Load(ntcDir, nil)
	names := map[string]string{}
	for alias, name := range platform.Aliases() {
		names[name] = "alias " + alias
	}
	for _, d := range exec.Drivers() {
		if p := platform.NTC(d); p != "" {
			names[p] = "driver " + d
		}
	}
	for name, from := range names {
		rows := 0
		for _, r := range lib.sets[0].idx.rows {
			if r.platRE == nil {
				continue
			}
			if ok, _ := r.platRE.matchString(name); ok {
				rows++
			}
		}
		if (rows == 0) != (name == "dell_os10") {
			t.Errorf("%s (%s): %d rows of ntc's index", name, from, rows)
		}
	}
}
