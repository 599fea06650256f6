package textfsm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeDir creates an ntc-style templates directory from name → text.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const indexHeader = "# test index\nTemplate, Hostname, Platform, Command  # the columns\n\n"

const oneValue = "Value A (\\S+)\n\nStart\n  ^${A} -> Record\n"

func TestPlatforms(t *testing.T) {
	tests := []struct {
		slug, name, driver string
		want               []string
	}{
		{"hp_procurve", "HP ProCurve", "generic", []string{"hp_procurve"}},
		{"cisco-ios", "Cisco IOS", "cisco_ios", []string{"cisco_ios"}},
		{"ios-xe", "", "cisco_ios", []string{"cisco_ios"}},
		{"asa", "Cisco ASA", "cisco_ios", []string{"cisco_asa", "cisco_ios"}},
		{"xr", "Cisco IOS-XR", "cisco_iosxr", []string{"xr", "cisco_xr"}},
		{"", "", "generic", nil},
		{"huawei", "", "", []string{"huawei_vrp"}},
		{"ruckus-fastiron", "Ruckus ICX", "brocade_fastiron", []string{"ruckus_fastiron", "brocade_fastiron"}},
		{"aruba-os-switch", "", "hp_procurve", []string{"hp_procurve"}},
		{"comware", "HPE Comware", "generic", []string{"hp_comware", "hpe_comware"}},
	}
	for _, tt := range tests {
		if got := Platforms(tt.slug, tt.name, tt.driver); !slices.Equal(got, tt.want) {
			t.Errorf("Platforms(%q, %q, %q) = %q, want %q", tt.slug, tt.name, tt.driver, got, tt.want)
		}
	}
}

func TestLookupSelectsBuiltin(t *testing.T) {
	lib := loadBuiltinOnly(t)
	tests := []struct {
		platforms        []string
		command, builtin string
	}{
		{[]string{"cisco_ios"}, "show ip arp", "cisco_ios_show_ip_arp.textfsm"},
		{[]string{"cisco_ios"}, "sh ip arp", "cisco_ios_show_ip_arp.textfsm"},
		{[]string{"cisco_ios"}, "  sh   ip  arp  ", "cisco_ios_show_ip_arp.textfsm"},
		{[]string{"cisco_ios"}, "show ip arp | include Vlan10", "cisco_ios_show_ip_arp.textfsm"},
		{[]string{"cisco_ios"}, "sh ip int br", "cisco_ios_show_ip_interface_brief.textfsm"},
		{[]string{"cisco_xr"}, "sh ver", "cisco_xr_show_version.textfsm"},
		{[]string{"cisco_ios"}, "show mac-address-table", "cisco_ios_show_mac-address-table.textfsm"},
		{[]string{"cisco_ios"}, "show vlan brief", "cisco_ios_show_vlan.textfsm"},
		// The slug names no platform the built-ins know; the driver's does.
		{[]string{"cisco_asa", "cisco_ios"}, "show version", "cisco_ios_show_version.textfsm"},
		// Prefix matching, as clitable does it.
		{[]string{"cisco_ios_telnet"}, "show version", "cisco_ios_show_version.textfsm"},
		{[]string{"linux"}, "ip -brief address", "linux_ip_-br_addr.textfsm"},
	}
	for _, tt := range tests {
		m, err := lib.Lookup(tt.platforms, tt.command)
		if err != nil || m.Name() != "builtin/"+tt.builtin {
			t.Errorf("%q %q: got %+v %v, want template builtin/%s", tt.platforms, tt.command, m, err, tt.builtin)
		}
	}
}

func TestParseNoTemplate(t *testing.T) {
	lib := loadBuiltinOnly(t)
	for _, tt := range []struct {
		platforms []string
		command   string
		want      string
	}{
		{[]string{"cisco_ios"}, "show running-config", "no template for platform cisco_ios and command show running-config"},
		{[]string{"hp_procurve"}, "show system", "no template for platform hp_procurve and command show system"},
		{[]string{"a", "b"}, "show x", "no template for platform a or b and command show x"},
		{nil, "show version", "no template for platform none and command show version"},
	} {
		p := lib.Parse(tt.platforms, tt.command, "some output")
		if p.Success || p.Error != tt.want {
			t.Errorf("%q %q: got %+v, want error %q", tt.platforms, tt.command, p, tt.want)
		}
		if _, err := lib.Lookup(tt.platforms, tt.command); !errors.Is(err, ErrNoTemplate) {
			t.Errorf("Lookup error %v does not wrap ErrNoTemplate", err)
		}
		b, _ := json.Marshal(p)
		if !strings.Contains(string(b), `"success":false,"method":null,"template":null,"data":[]`) {
			t.Errorf("json = %s", b)
		}
	}
}

func TestParseEmptyResultIsSuccess(t *testing.T) {
	lib := loadBuiltinOnly(t)
	for _, out := range []string{"", "Total Mac Addresses for this criterion: 0\n"} {
		p := lib.Parse(iosPlatforms, "show mac address-table", out)
		if !p.Success || p.Data == nil || len(p.Data) != 0 || p.Error != "" {
			t.Errorf("output %q: got %+v, want success with data []", out, p)
		}
	}
}

// TestLookupOrder checks that platform candidates are tried in order, and
// for each the directory before the built-ins.
func TestLookupOrder(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"index": indexHeader +
			"mine_version.textfsm, .*, cisco_ios, sh[[ow]] ver[[sion]]\n" +
			"asa_version.textfsm, .*, cisco_(asa|ftd), sh[[ow]] ver[[sion]]\n",
		"mine_version.textfsm": "Value Uptime (.+)\n\nStart\n  ^\\S+ uptime is ${Uptime} -> Record\n",
		"asa_version.textfsm":  oneValue,
	})
	lib, errs := Load(dir, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p := lib.Parse([]string{"cisco_ios"}, "show version", "r1 uptime is 2 days\n")
	if !p.Success || *p.Template != "mine_version.textfsm" || p.Data[0]["uptime"] != "2 days" {
		t.Errorf("directory row not used: %+v", p)
	}
	m, err := lib.Lookup([]string{"cisco_ftd", "cisco_ios"}, "sh ver")
	if err != nil || m.Template != "asa_version.textfsm" || m.Platform != "cisco_ftd" || m.Source != dir || m.Line != 5 {
		t.Errorf("first candidate not preferred: %+v %v", m, err)
	}
	// The built-ins still answer what the directory lacks.
	if m, err := lib.Lookup([]string{"cisco_ios"}, "show ip arp"); err != nil || m.Source != SourceBuiltin {
		t.Errorf("built-in not used: %+v %v", m, err)
	}
	if got := lib.Templates(); got[0].Source != dir || got[2].Source != SourceBuiltin {
		t.Errorf("Templates() = %+v ...", got[:3])
	}
}

func TestLoadReportsBadTemplates(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"index": indexHeader +
			"nostart.textfsm, .*, cisco_ios, sh[[ow]] foo\n" +
			"missing.textfsm, .*, cisco_ios, sh[[ow]] bar\n" +
			"good.textfsm, .*, cisco_ios, sh[[ow]] x{1,2}\n" +
			"  # not a comment: clitable only skips a '#' in the first column\n" +
			"broken.textfsm, .*, cisco_ios, sh[[ow]] (baz\n" +
			"good.textfsm, .*, cisco_ios, sh[[ow]]\n",
		"nostart.textfsm": "Value A (x)\n\nBegin\n  ^${A} -> Record\n",
		"option.textfsm":  "Value Bogus A (x)\n\nStart\n  ^${A} -> Record\n",
		"good.textfsm":    oneValue,
		"broken.textfsm":  oneValue,
	})
	lib, errs := Load(dir, nil)
	var all []string
	for _, err := range errs {
		all = append(all, err.Error())
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{
		"nostart.textfsm: missing state 'Start'",
		`option.textfsm: unknown option "Bogus"`,
		"index line 5: template missing.textfsm: file does not exist",
		"index line 6: 5 fields where the header has 4",
		"index line 7: 1 fields where the header has 4",
		"index line 8: column Command",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q:\n%s", want, joined)
		}
	}
	if len(errs) != 6 {
		t.Errorf("got %d errors, want 6:\n%s", len(errs), joined)
	}
	// A rejected template's row reports why; a broader row never answers
	// in its place.
	p := lib.Parse([]string{"cisco_ios"}, "sh foo", "x")
	if p.Success || !strings.HasPrefix(p.Error, "template error: ") || !strings.Contains(p.Error, "missing state 'Start'") {
		t.Errorf("rejected row: got %+v", p)
	}
	// A row whose regex cannot be evaluated stops the search too.
	p = lib.Parse([]string{"cisco_ios"}, "show qux", "x")
	if p.Success || !strings.Contains(p.Error, "index line 8 cannot be evaluated") {
		t.Errorf("broken row: got %+v", p)
	}
	if m, err := lib.Lookup([]string{"juniper_junos"}, "show version"); err != nil || m.Source != SourceBuiltin {
		t.Errorf("a broken row for another platform must not matter: %+v %v", m, err)
	}
}

// TestIndexSemantics checks clitable's reading of an index: the Command's
// [[ ]] completion is not escaped, and both columns match at the start.
func TestIndexSemantics(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"index": indexHeader +
			"dot.textfsm, .*, plat, a[[.c]]\n" +
			"any.textfsm, .*, pl, show\n",
		"dot.textfsm": oneValue,
		"any.textfsm": oneValue,
	})
	lib, errs := Load(dir, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tt := range []struct{ platform, command, want string }{
		{"plat", "axc", "dot.textfsm"},              // '.' inside [[ ]] is a regex
		{"plat", "a", "dot.textfsm"},                // the tail is optional
		{"platform", "abc whatever", "dot.textfsm"}, // both columns match a prefix
		{"pl", "show version", "any.textfsm"},
	} {
		m, err := lib.Lookup([]string{tt.platform}, tt.command)
		if err != nil || m.Template != tt.want {
			t.Errorf("%s %q: got %+v %v, want %s", tt.platform, tt.command, m, err, tt.want)
		}
	}
}

func TestMergeTemplates(t *testing.T) {
	const out = "port a up\nport b down\nport c up\nspeed b 10G\nspeed a 1G\n"
	state := "Value Key PORT (\\S+)\nValue STATE (\\S+)\n\nStart\n  ^port ${PORT} ${STATE} -> Record\n"
	speed := "Value PORT (\\S+)\nValue List SPEED (\\S+)\n\nStart\n  ^speed ${PORT} ${SPEED} -> Record\n"
	dir := writeDir(t, map[string]string{
		"index": indexHeader +
			"state.textfsm:speed.textfsm, .*, linux, keyed\n" +
			"nokey.textfsm:speed.textfsm, .*, linux, zipped\n",
		"state.textfsm": state,
		"nokey.textfsm": strings.Replace(state, "Key ", "", 1),
		"speed.textfsm": speed,
	})
	lib, errs := Load(dir, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p := lib.Parse([]string{"linux"}, "keyed", out)
	if !p.Success || !slices.Equal(p.Data[0]["speed"].([]string), []string{"1G"}) || !slices.Equal(p.Data[1]["speed"].([]string), []string{"10G"}) ||
		p.Data[2]["speed"] != "" || strings.Join(p.Columns, ",") != "port,state,speed" ||
		*p.Template != "state.textfsm:speed.textfsm" {
		t.Errorf("keyed merge: %+v", p)
	}
	// The Key values of the template a parse names, for comparing two parses.
	if keys, ok := lib.Keys(*p.Template); !ok || !slices.Equal(keys, []string{"port"}) {
		t.Errorf("keys of %s: %v %v", *p.Template, keys, ok)
	}
	if keys, ok := lib.Keys(filepath.Join("/srv/old-path", "state.textfsm")); !ok || !slices.Equal(keys, []string{"port"}) {
		t.Errorf("keys of a path an older version stored: %v %v", keys, ok)
	}
	if keys, ok := lib.Keys("builtin/cisco_ios_show_vlan.textfsm"); !ok || len(keys) != 0 {
		t.Errorf("keys of a built-in without a Key value: %v %v", keys, ok)
	}
	if _, ok := lib.Keys("gone.textfsm"); ok {
		t.Error("keys of a template the library does not hold")
	}
	// Without keys the records are zipped by position.
	p = lib.Parse([]string{"linux"}, "zipped", out)
	if !p.Success || !slices.Equal(p.Data[0]["speed"].([]string), []string{"10G"}) || p.Data[2]["speed"] != "" {
		t.Errorf("zipped merge: %+v", p)
	}
}

// TestNoStateBetweenParses checks that a parse starts from nothing: the
// second output has no VRF title, so no VRF may leak into it from the
// first, whose Filldown VRF was set.
func TestNoStateBetweenParses(t *testing.T) {
	lib := loadBuiltinOnly(t)
	eos := []string{"arista_eos"}
	first := lib.Parse(eos, "show ip arp", "VRF: red\nAddress Age (sec) Hardware Addr Interface\n192.0.2.1 0:00:01 0000.5e00.5301 Vlan10\n")
	if len(first.Data) != 1 || first.Data[0]["vrf"] != "red" {
		t.Fatalf("first parse: %+v", first)
	}
	p := lib.Parse(eos, "show ip arp", "Address Age (sec) Hardware Addr Interface\n192.0.2.99 0:00:01 0000.5e00.5399 Vlan10\n")
	if len(p.Data) != 1 || p.Data[0]["vrf"] != "" {
		t.Errorf("got %+v, want one record with an empty vrf", p.Data)
	}
}

// TestTemplateParseContext: a parse runs to the end on a live context and
// stops, with the context's error, on a done one — what bounds a template
// pasted into the parse endpoint.
func TestTemplateParseContext(t *testing.T) {
	tm, err := Compile("trial", "Value A (\\S+)\n\nStart\n  ^${A} -> Record\n")
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Repeat("word\n", 10000)
	data, err := tm.ParseContext(context.Background(), out)
	if err != nil || len(data) != 10000 {
		t.Fatalf("live context: %d records, %v", len(data), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if data, err := tm.ParseContext(ctx, out); !errors.Is(err, context.Canceled) || data != nil {
		t.Fatalf("done context: %d records, %v", len(data), err)
	}
}
