package exec

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/exec")

// loadTranscript reads a hand-written transcript: what a device sends after
// a command is typed (echo, output, prompt). Files use LF and spell escape
// backspace and a lone carriage return as <ESC>, <BS> and <CR>; the device
// would send CRLF.
func loadTranscript(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "exec", name))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	s = strings.ReplaceAll(s, "\n", "\r\n")
	s = strings.ReplaceAll(s, "<ESC>", "\x1b")
	s = strings.ReplaceAll(s, "<CR>", "\r")
	return strings.ReplaceAll(s, "<BS>", "\b")
}

// checkGolden compares got with name.golden, rewriting it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "testdata", "exec", strings.TrimSuffix(name, ".txt")+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestTranscripts(t *testing.T) {
	tests := []struct {
		file, driver string
		typ, line    string // expected syntax error; "" for none
		base         string // host name known before the read, for a prompt glued to the output
	}{
		{"cisco_ios_show_version.txt", "cisco_ios", "", "", ""},
		{"cisco_ios_invalid.txt", "cisco_ios", InvalidInput, "% Invalid input detected at '^' marker.", ""},
		{"cisco_ios_incomplete.txt", "cisco_ios", IncompleteCommand, "% Incomplete command.", ""},
		{"cisco_ios_ambiguous.txt", "cisco_ios", AmbiguousCommand, `% Ambiguous command:  "sh i"`, ""},
		{"cisco_ios_unknown.txt", "cisco_ios", UnknownCommand, "% Unknown command or computer name, or unable to find computer address", ""},
		{"cisco_ios_authorization.txt", "cisco_ios", PermissionDenied, "Command authorization failed.", ""},
		{"cisco_ios_ansi_pager.txt", "cisco_ios", "", "", ""},
		{"cisco_ios_frr_show_interface_brief.txt", "cisco_ios", "", "", ""},
		{"cisco_ios_frr_unknown.txt", "cisco_ios", UnknownCommand, "% Unknown command: show bogus", ""},
		{"cisco_ios_frr_incomplete.txt", "cisco_ios", IncompleteCommand, "% Command incomplete: show", ""},
		{"cisco_nxos_invalid.txt", "cisco_nxos", InvalidInput, "% Invalid command at '^' marker.", ""},
		{"cisco_nxos_incomplete.txt", "cisco_nxos", IncompleteCommand, "% Incomplete command at '^' marker.", ""},
		{"cisco_nxos_ambiguous.txt", "cisco_nxos", AmbiguousCommand, "% Ambiguous command at '^' marker.", ""},
		{"cisco_nxos_permission.txt", "cisco_nxos", PermissionDenied, "% Permission denied for the role", ""},
		{"cisco_iosxr_show_clock.txt", "cisco_iosxr", "", "", ""},
		{"cisco_iosxr_invalid.txt", "cisco_iosxr", InvalidInput, "% Invalid input detected at '^' marker.", ""},
		{"cisco_iosxr_commit_failed.txt", "cisco_iosxr", ConfigRejected, "% Failed to commit one or more configuration items during a pseudo-atomic operation. All changes made have been reverted. Please issue 'show configuration failed [inheritance]' from this session to view the errors", ""},
		{"arista_eos_invalid.txt", "arista_eos", InvalidInput, "% Invalid input (at token 2: 'statuss')", ""},
		{"arista_eos_incomplete.txt", "arista_eos", IncompleteCommand, "% Incomplete command", ""},
		{"arista_eos_ambiguous.txt", "arista_eos", AmbiguousCommand, "% Ambiguous command", ""},
		{"arista_eos_unrecognized.txt", "arista_eos", UnknownCommand, "% Unrecognized command", ""},
		{"arista_eos_authorization.txt", "arista_eos", PermissionDenied, "% Authorization denied for command 'configure terminal'", ""},
		{"arista_eos_pagination_glued.txt", "arista_eos", "", "", "lab-eos1"},
		{"juniper_junos_show_version.txt", "juniper_junos", "", "", ""},
		{"juniper_junos_syntax.txt", "juniper_junos", InvalidInput, "syntax error, expecting <command>.", ""},
		{"juniper_junos_unknown.txt", "juniper_junos", UnknownCommand, "unknown command.", ""},
		{"juniper_junos_ambiguous.txt", "juniper_junos", AmbiguousCommand, "'i' is ambiguous.", ""},
		{"juniper_junos_missing_argument.txt", "juniper_junos", IncompleteCommand, "missing argument.", ""},
		{"juniper_junos_commit_failed.txt", "juniper_junos", ConfigRejected, "error: configuration check-out failed", ""},
		{"cisco_asa_invalid.txt", "cisco_asa", InvalidInput, "ERROR: % Invalid input detected at '^' marker.", ""},
		{"cisco_asa_incomplete.txt", "cisco_asa", IncompleteCommand, "ERROR: % Incomplete command", ""},
		{"hp_procurve_invalid.txt", "hp_procurve", InvalidInput, "Invalid input: interfce", ""},
		{"hp_procurve_incomplete.txt", "hp_procurve", IncompleteCommand, "Incomplete input: priority", ""},
		{"aruba_aoscx_invalid.txt", "aruba_aoscx", InvalidInput, "Invalid input: interfce", ""},
		{"aruba_aoscx_incomplete.txt", "aruba_aoscx", IncompleteCommand, "% Command incomplete.", ""},
		{"dell_os10_unrecognized.txt", "dell_os10", UnknownCommand, "% Error: Unrecognized command.", ""},
		{"brocade_fastiron_invalid.txt", "brocade_fastiron", InvalidInput, "Invalid input -> interfce", ""},
		{"huawei_vrp_unrecognized.txt", "huawei_vrp", InvalidInput, "Error: Unrecognized command found at '^' position.", ""},
		{"huawei_vrp_pager.txt", "huawei_vrp", "", "", ""},
		{"huawei_vrp_two_stage.txt", "huawei_vrp", "", "", ""},
		{"extreme_exos_invalid.txt", "extreme_exos", InvalidInput, "%% Invalid input detected at '^' marker.", ""},
		{"extreme_exos_incomplete.txt", "extreme_exos", IncompleteCommand, "%% Incomplete command", ""},
		{"fortinet_parse_error.txt", "fortinet", InvalidInput, "command parse error before 'statuz'", ""},
		{"fortinet_unknown_action.txt", "fortinet", UnknownCommand, "Unknown action 0", ""},
		{"fortinet_entry_prompt.txt", "fortinet", "", "", ""},
		{"paloalto_panos_unknown.txt", "paloalto_panos", UnknownCommand, "Unknown command: sho", ""},
		{"paloalto_panos_invalid_syntax.txt", "paloalto_panos", InvalidInput, "Invalid syntax.", ""},
		{"paloalto_panos_commit.txt", "paloalto_panos", "", "", ""},
		{"mikrotik_routeros_bad_command.txt", "mikrotik_routeros", UnknownCommand, "bad command name prnt (line 1 column 18)", ""},
		{"mikrotik_routeros_print.txt", "mikrotik_routeros", "", "", ""},
		{"generic_plain.txt", "generic", "", "", ""},
		{"generic_not_found.txt", "generic", UnknownCommand, "bash: frobnicate: command not found", ""},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".txt"), func(t *testing.T) {
			d := drivers[tt.driver]
			raw := loadTranscript(t, tt.file)
			text := normalize(raw)
			prompt := lastLine(text)
			if i := d.gluedPrompt(prompt, tt.base); i > 0 {
				prompt = prompt[i:]
			}
			if !d.prompt.MatchString(prompt) {
				t.Errorf("prompt not recognised at the end of %q", lastLine(text))
			}
			command := strings.TrimSpace(firstLineOf(text))
			out := d.cleanOutput(text, command, prompt)
			checkGolden(t, tt.file, out)
			if strings.Contains(out, "\x1b") || strings.Contains(out, "\r") || strings.Contains(out, "More") {
				t.Errorf("escape, CR or pager left in output %q", out)
			}
			se := d.detectSyntax(out)
			if se.Detected != (tt.typ != "") || se.Type != tt.typ || se.Line != tt.line {
				t.Errorf("syntax = %+v, want type %q line %q", se, tt.typ, tt.line)
			}
			if se.Detected && (se.Vendor != tt.driver || se.Guidance == "") {
				t.Errorf("syntax vendor/guidance = %q / %q", se.Vendor, se.Guidance)
			}
		})
	}
}
