package textfsm

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .golden files from the current parser output")

// goldenDir holds one hand-written sample per built-in template:
// <driver>/<command with spaces as _>.raw, and the expected result in .golden.
const goldenDir = "../../testdata/textfsm"

func loadBuiltinOnly(t testing.TB) *Library {
	t.Helper()
	lib, errs := Load("", nil)
	errs = append(errs, lib.Check()...)
	for _, err := range errs {
		t.Errorf("built-in template: %v", err)
	}
	return lib
}

// driverPlatforms is what a device with a platform of that driver's name
// tries.
func driverPlatforms(driver string) []string { return Platforms("", "", driver) }

// goldenView is what a golden file records: the JSON a client receives
// plus the column order a UI would use.
type goldenView struct {
	Columns []string `json:"columns"`
	Parsed
}

func TestBuiltinGolden(t *testing.T) {
	lib := loadBuiltinOnly(t)
	raws, err := filepath.Glob(filepath.Join(goldenDir, "*", "*.raw"))
	if err != nil || len(raws) == 0 {
		t.Fatalf("no samples under %s: %v", goldenDir, err)
	}
	// beyond_ntc holds real outputs that ntc-templates' template of the
	// same name refuses (an Error rule meets a line it does not list)
	// and the built-in reads; they are not compared with ntc.
	beyond, _ := filepath.Glob(filepath.Join(goldenDir, "beyond_ntc", "*", "*.raw"))
	for _, raw := range append(raws, beyond...) {
		driver := filepath.Base(filepath.Dir(raw))
		command := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(raw), ".raw"), "_", " ")
		t.Run(driver+"/"+command, func(t *testing.T) {
			input, err := os.ReadFile(raw)
			if err != nil {
				t.Fatal(err)
			}
			p := lib.Parse(driverPlatforms(driver), command, string(input))
			if !p.Success || len(p.Data) == 0 {
				t.Fatalf("parse failed or found nothing: %+v", p)
			}
			checkColumns(t, p)
			got, err := json.MarshalIndent(goldenView{Columns: p.Columns, Parsed: p}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(raw, ".raw") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the parser output:\n%s", golden, got)
			}
		})
	}
}

// checkColumns asserts that every record has exactly the template's
// columns, all lower case.
func checkColumns(t *testing.T, p Parsed) {
	t.Helper()
	for i, row := range p.Data {
		if len(row) != len(p.Columns) {
			t.Errorf("record %d has %d keys, want the %d columns %v", i, len(row), len(p.Columns), p.Columns)
		}
		for _, c := range p.Columns {
			if _, ok := row[c]; !ok || c != strings.ToLower(c) {
				t.Errorf("record %d: column %q missing or not lower case", i, c)
			}
		}
	}
}

func readSample(t testing.TB, driver, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, driver, name+".raw"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBuiltinCoverage makes sure every built-in template is selected by
// one of the golden samples, so none ships untested.
func TestBuiltinCoverage(t *testing.T) {
	lib := loadBuiltinOnly(t)
	used := map[string]bool{}
	raws, _ := filepath.Glob(filepath.Join(goldenDir, "*", "*.raw"))
	for _, raw := range raws {
		driver := filepath.Base(filepath.Dir(raw))
		command := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(raw), ".raw"), "_", " ")
		if m, err := lib.Lookup(driverPlatforms(driver), command); err == nil {
			used[m.Template] = true
		}
	}
	for _, info := range lib.Templates() {
		if !used[info.Name] {
			t.Errorf("built-in %s has no sample under %s", info.Name, goldenDir)
		}
	}
}
