package textfsm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestExpandCompletion(t *testing.T) {
	re := regexp.MustCompile(`^(?:` + expandCompletion("sh[[ow]] ip int[[erface]] br[[ief]]") + `)$`)
	for cmd, want := range map[string]bool{
		"sh ip int br":            true,
		"show ip interface brief": true,
		"sho ip inter bri":        true,
		"s ip int br":             false,
		"show ip intx br":         false,
		"show ip interface":       false,
	} {
		if got := re.MatchString(cmd); got != want {
			t.Errorf("%q: match %v, want %v", cmd, got, want)
		}
	}
	// Text inside [[ ]] is literal, not a regex.
	if got := expandCompletion("a[[.+]]"); !regexp.MustCompile(`^`+got+`$`).MatchString("a.+") ||
		regexp.MustCompile(`^`+got+`$`).MatchString("axx") {
		t.Errorf("expandCompletion did not quote the tail: %s", got)
	}
}

func TestParseSelectsBuiltin(t *testing.T) {
	lib := loadBuiltinOnly(t)
	arp := readSample(t, "cisco_ios", "show_ip_arp")
	tests := []struct {
		driver, command, template string
	}{
		{"cisco_ios", "show ip arp", "cisco_ios_show_ip_arp.textfsm"},
		{"cisco_ios", "sh ip arp", "cisco_ios_show_ip_arp.textfsm"},
		{"cisco_ios", "  sh   ip  arp  ", "cisco_ios_show_ip_arp.textfsm"},
		{"cisco_ios", "show ip arp | include Vlan10", "cisco_ios_show_ip_arp.textfsm"},
		{"cisco_ios", "sh ip int br", "cisco_ios_show_ip_interface_brief.textfsm"},
		{"cisco_ios", "sh mac address-table dynamic vlan 10", "cisco_ios_show_mac_address-table.textfsm"},
		{"cisco_iosxr", "sh ver", "cisco_iosxr_show_version.textfsm"},
		{"juniper_junos", "show arp", "juniper_junos_show_arp_no-resolve.textfsm"},
		{"linux", "ip -brief address", "linux_ip_-br_addr.textfsm"},
	}
	for _, tt := range tests {
		p := lib.Parse(tt.driver, tt.command, arp)
		if !p.Success || p.Template == nil || *p.Template != tt.template {
			t.Errorf("%s %q: got %+v, want template %s", tt.driver, tt.command, p, tt.template)
		}
	}
}

func TestParseNoTemplate(t *testing.T) {
	lib := loadBuiltinOnly(t)
	for _, tt := range []struct{ driver, command string }{
		{"cisco_ios", "show running-config"},
		{"cisco_ios", "show cdp neighbors detail"}, // must not fall to the plain neighbors row
		{"cisco_iosxr", "show ip interface brief"}, // an IOS row must not claim IOS XR
		{"generic", "show version"},
	} {
		p := lib.Parse(tt.driver, tt.command, "some output")
		want := "no template for platform " + tt.driver + " and command " + tt.command
		if p.Success || p.Error != want {
			t.Errorf("%s %q: got %+v, want error %q", tt.driver, tt.command, p, want)
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
		p := lib.Parse("cisco_ios", "show mac address-table", out)
		if !p.Success || p.Data == nil || len(p.Data) != 0 || p.Error != "" {
			t.Errorf("output %q: got %+v, want success with data []", out, p)
		}
	}
}

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

const indexHeader = "# test index\nTemplate, Hostname, Platform, Command\n\n"

func TestLoadReportsBadTemplates(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"index": indexHeader +
			"lookahead.textfsm, .*, cisco_ios, sh[[ow]] foo\n" +
			"missing.textfsm, .*, cisco_ios, sh[[ow]] bar\n" +
			"broken row without enough fields\n",
		"lookahead.textfsm": "Value A (\\S+(?=x))\n\nStart\n  ^${A} -> Record\n",
		"endz.textfsm":      "Value A (\\S+)\n\nStart\n  ^${A}\\Z -> Record\n",
		"repeat.textfsm":    "Value A (x{1001})\n\nStart\n  ^${A} -> Record\n",
		"nostart.textfsm":   "Value A (x)\n\nBegin\n  ^${A} -> Record\n",
		"good.textfsm":      "Value A (\\S+)\n\nStart\n  ^${A} -> Record\n",
	})
	lib, errs := Load(dir, nil)
	var all []string
	for _, err := range errs {
		all = append(all, err.Error())
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{
		"lookahead.textfsm: unsupported by Go RE2 (lookaround)",
		"endz.textfsm: unsupported by Go RE2 (\\Z",
		"repeat.textfsm: unsupported by Go RE2 (repeat count over 1000)",
		"nostart.textfsm: Missing state 'Start'",
		"index line 5: template missing.textfsm: file does not exist",
		"index line 6: want 4 fields, got 1",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q:\n%s", want, joined)
		}
	}
	if len(errs) != 6 {
		t.Errorf("got %d errors, want 6:\n%s", len(errs), joined)
	}
	// The rejected template's row reports why instead of parsing.
	p := lib.Parse("cisco_ios", "sh foo", "x")
	if p.Success || !strings.HasPrefix(p.Error, "template error: ") || !strings.Contains(p.Error, "lookaround") {
		t.Errorf("rejected row: got %+v", p)
	}
}

func TestDirectoryTakesPrecedence(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"index": indexHeader +
			"mine_version.textfsm, .*, cisco_ios, sh[[ow]] ver[[sion]]\n" +
			"lookaround_arp.textfsm, .*, cisco_ios, sh[[ow]] ip arp\n",
		"mine_version.textfsm":   "Value Uptime (.+)\n\nStart\n  ^\\S+ uptime is ${Uptime} -> Record\n",
		"lookaround_arp.textfsm": "Value A (\\S+(?!x))\n\nStart\n  ^${A} -> Record\n",
	})
	lib, errs := Load(dir, nil)
	if len(errs) != 1 {
		t.Errorf("want the one lookaround error, got %v", errs)
	}
	p := lib.Parse("cisco_ios", "show version", "r1 uptime is 2 days\n")
	if !p.Success || *p.Template != "mine_version.textfsm" || p.Data[0]["uptime"] != "2 days" {
		t.Errorf("directory row not used: %+v", p)
	}
	// A rejected directory template falls back to the built-in.
	p = lib.Parse("cisco_ios", "show ip arp", readSample(t, "cisco_ios", "show_ip_arp"))
	if !p.Success || *p.Template != "cisco_ios_show_ip_arp.textfsm" {
		t.Errorf("no fallback to the built-in: %+v", p)
	}
	if got := lib.Templates(); got[0].Source != dir || got[1].Error == "" || got[2].Source != "builtin" {
		t.Errorf("Templates() = %+v ...", got[:3])
	}
}

func TestParseTemplateError(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"index":          indexHeader + "strict.textfsm, .*, linux, cat x\n",
		"strict.textfsm": "Value A (\\d+)\n\nStart\n  ^${A} -> Record\n  ^. -> Error \"unexpected\"\n",
	})
	lib, _ := Load(dir, nil)
	p := lib.Parse("linux", "cat x", "1\n2\noops\n")
	if p.Success || !strings.HasPrefix(p.Error, `template error: strict.textfsm: Error: "unexpected"`) || p.Data == nil {
		t.Errorf("got %+v", p)
	}
	if p = lib.Parse("linux", "cat x", "1\n2\n"); !p.Success || len(p.Data) != 2 {
		t.Errorf("the failed parse left state behind: %+v", p)
	}
}

func TestMergeTemplates(t *testing.T) {
	const out = "port a up\nport b down\nspeed b 10G\nspeed a 1G\n"
	state := "Value Key PORT (\\S+)\nValue STATE (\\S+)\n\nStart\n  ^port ${PORT} ${STATE} -> Record\n"
	speed := "Value PORT (\\S+)\nValue SPEED (\\S+)\n\nStart\n  ^speed ${PORT} ${SPEED} -> Record\n"
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
	p := lib.Parse("linux", "keyed", out)
	if !p.Success || p.Data[0]["speed"] != "1G" || p.Data[1]["speed"] != "10G" ||
		strings.Join(p.Columns, ",") != "port,state,speed" || *p.Template != "state.textfsm:speed.textfsm" {
		t.Errorf("keyed merge: %+v", p)
	}
	// Without keys the records are zipped by position.
	p = lib.Parse("linux", "zipped", out)
	if !p.Success || p.Data[0]["speed"] != "10G" || p.Data[1]["speed"] != "1G" {
		t.Errorf("zipped merge: %+v", p)
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

// TestNoStateBetweenParses checks a pooled state machine forgets Filldown
// values: the second output has no VRF title, so no VRF may leak into it.
func TestNoStateBetweenParses(t *testing.T) {
	lib := loadBuiltinOnly(t)
	lib.Parse("cisco_nxos", "show ip arp", readSample(t, "cisco_nxos", "show_ip_arp"))
	p := lib.Parse("cisco_nxos", "show ip arp", "192.0.2.99      00:00:01  0000.5e00.5399  Vlan10\n")
	if len(p.Data) != 1 || p.Data[0]["vrf"] != "" {
		t.Errorf("got %+v, want one record with an empty vrf", p.Data)
	}
}
