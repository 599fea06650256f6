package textfsm

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// ntcDir is a checkout of networktocode/ntc-templates' templates folder,
// shared between workspaces and never copied into this repository.
const ntcDir = "../../../shared/ntc-templates"

func loadNTC(t testing.TB) *Library {
	t.Helper()
	if _, err := os.Stat(ntcDir + "/index"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ntc-templates directory missing in CI: %v", err)
		}
		t.Skipf("ntc-templates not found at %s (%v); skipping the real-directory test", ntcDir, err)
	}
	lib, errs := Load(ntcDir, nil)
	t.Cleanup(func() { reportNTC(t, lib, errs) })
	return lib
}

// reportNTC logs how many templates loaded and why the others did not,
// grouped by the reason's first words.
func reportNTC(t testing.TB, lib *Library, errs []error) {
	dir := lib.sets[0]
	loaded, rejected := dir.counts()
	reasons := map[string]int{}
	for _, n := range dir.rejectedNames() {
		msg := strings.TrimPrefix(dir.rejected[n].Error(), n+": ")
		if i := strings.Index(msg, ": "); i > 0 {
			msg = msg[:i]
		}
		reasons[msg]++
	}
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("ntc-templates: %d templates loaded, %d rejected, %d index rows, %d load errors in all",
		loaded, rejected, len(dir.idx.rows), len(errs))
	for _, k := range keys {
		t.Logf("  rejected %3d: %s", reasons[k], k)
	}
	for _, n := range dir.rejectedNames() {
		t.Logf("  %s", dir.rejected[n])
	}
}

func TestNTCTemplatesLoad(t *testing.T) {
	lib := loadNTC(t)
	dir := lib.sets[0]
	loaded, rejected := dir.counts()
	if loaded < 900 || len(dir.idx.rows) < 900 {
		t.Errorf("only %d templates and %d index rows loaded", loaded, len(dir.idx.rows))
	}
	for _, n := range dir.rejectedNames() {
		if !strings.Contains(dir.rejected[n].Error(), n) {
			t.Errorf("rejection does not name its file: %v", dir.rejected[n])
		}
	}
	if rejected == 0 {
		t.Error("no template rejected: the RE2 checks did not run")
	}
	for _, n := range dir.rejectedNames() {
		if !strings.Contains(dir.rejected[n].Error(), "Go RE2") {
			t.Errorf("%s rejected for a reason other than RE2: %v", n, dir.rejected[n])
		}
	}
}

// TestNTCRejectedFallsBack checks that a command whose ntc template Go
// cannot compile (ntc's cisco_ios_show_lldp_neighbors uses a lookbehind)
// is still parsed, by the built-in.
func TestNTCRejectedFallsBack(t *testing.T) {
	lib := loadNTC(t)
	if _, ok := lib.sets[0].rejected["cisco_ios_show_lldp_neighbors.textfsm"]; !ok {
		t.Skip("this ntc-templates version compiles under RE2; nothing to fall back from")
	}
	p := lib.Parse("cisco_ios", "show lldp neighbors", readSample(t, "cisco_ios", "show_lldp_neighbors"))
	if !p.Success || *p.Template != "cisco_ios_show_lldp_neighbors.textfsm" || len(p.Data) != 4 {
		t.Errorf("got %+v", p)
	}
	if p := lib.Parse("cisco_ios", "show ip bgp", "x"); p.Success || !strings.Contains(p.Error, "lookaround") {
		t.Errorf("show ip bgp: got %+v, want the rejection reason", p)
	}
}

// TestNTCTemplatesParse runs hand-written outputs through rows chosen by
// the real index, including a command abbreviation and the cisco_xr name.
func TestNTCTemplatesParse(t *testing.T) {
	lib := loadNTC(t)
	tests := []struct {
		driver, command, output, column, want string
	}{
		{"cisco_ios", "sh ip int br", readSample(t, "cisco_ios", "show_ip_interface_brief"), "interface", "Vlan1"},
		{"arista_eos", "show version", readSample(t, "arista_eos", "show_version"), "serial_number", "JPE00000001"},
		{"cisco_nxos", "show ip arp", readSample(t, "cisco_nxos", "show_ip_arp"), "mac_address", "0000.5e00.5301"},
		{"cisco_iosxr", "show arp", readSample(t, "cisco_iosxr", "show_arp"), "ip_address", "203.0.113.1"},
		{"juniper_junos", "show arp no-resolve", readSample(t, "juniper_junos", "show_arp_no-resolve"), "ip_address", "192.0.2.2"},
	}
	for _, tt := range tests {
		t.Run(tt.driver+"/"+tt.command, func(t *testing.T) {
			p := lib.Parse(tt.driver, tt.command, tt.output)
			if !p.Success || len(p.Data) == 0 {
				t.Fatalf("got %+v", p)
			}
			if p.Template == nil || strings.Contains(*p.Template, "/") {
				t.Errorf("template %v", p.Template)
			}
			if got := p.Data[0][tt.column]; got != tt.want {
				t.Errorf("template %s: first record %s = %v, want %q (columns %v)", *p.Template, tt.column, got, tt.want, p.Columns)
			}
		})
	}
}
