package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// parsedOf decodes the JSON `fieldkit parse` prints.
func parsedOf(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil || m["parsed_output"] == nil {
		t.Fatalf("stdout is not {\"parsed_output\": ...}: %v: %q", err, out)
	}
	return m["parsed_output"]
}

// golden is the parsed_output a built-in's sample gives (testdata/textfsm).
func golden(t *testing.T, name string) (string, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "textfsm", name+".raw"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.ReadFile(filepath.Join("testdata", "textfsm", name+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(g, &want); err != nil {
		t.Fatal(err)
	}
	return string(raw), want
}

func TestParseCommand(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	out, want := golden(t, "cisco_ios/show_ip_interface_brief")
	file := filepath.Join(t.TempDir(), "brief.txt")
	os.WriteFile(file, []byte(out), 0o600)
	for _, tc := range []struct {
		name, stdin string
		args        []string
	}{
		{"a file", "", []string{"parse", "--data", data, "--platform", "cisco_ios", "--command", "show ip int brief", file}},
		{"stdin", out, []string{"parse", "--data", data, "--platform", "Cisco IOS", "--command", "show ip interface brief"}},
		{"stdin as -", out, []string{"parse", "--data", data, "--platform", "ios", "--command", "sh ip int br", "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := cli(t, nil, tc.stdin, tc.args...)
			if err != nil || stderr != "" {
				t.Fatalf("err %v, stderr %q", err, stderr)
			}
			if got := parsedOf(t, stdout); !reflect.DeepEqual(got, want) {
				t.Fatalf("parsed_output %v\nwant %v", got, want)
			}
		})
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("parse created the data directory: %v", err)
	}
	stdout, _, err := cli(t, nil, "anything", "parse", "--data", data, "--platform", "cisco_ios", "--command", "show running-config")
	if err == nil || !strings.Contains(err.Error(), "no template for platform cisco_ios and command show running-config") {
		t.Fatalf("no template: err %v", err)
	}
	if p := parsedOf(t, stdout); p["success"] != false {
		t.Fatalf("no template: %v", p)
	}
}

// TestParseCommandInventory: a platform of the inventory is found by its slug as the
// API finds it, and textfsm.templates_dir takes precedence as it does for serve.
func TestParseCommandInventory(t *testing.T) {
	data := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	err = db.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO platforms (name, slug, created, last_updated) VALUES ('Cisco IOS', 'catalyst-9300', ?, ?)`, now, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, want := golden(t, "cisco_ios/show_ip_interface_brief")
	stdout, _, err := cli(t, nil, out, "parse", "--data", data, "--platform", "catalyst-9300", "--command", "show ip int brief")
	if err != nil || !reflect.DeepEqual(parsedOf(t, stdout), want) {
		t.Fatalf("inventory platform: %v\n%s", err, stdout)
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index"), []byte("Template, Hostname, Platform, Command\n\nmine.textfsm, .*, cisco_ios, sh[[ow]] ip int[[erface]] br[[ief]]\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "mine.textfsm"), []byte("Value NAME (\\S+)\n\nStart\n  ^${NAME}\\s+\\S+\\s+YES\\s -> Record\n"), 0o600)
	env := map[string]string{"FIELDKIT_TEXTFSM_TEMPLATES_DIR": dir}
	stdout, _, err = cli(t, env, out, "parse", "--data", data, "--platform", "catalyst-9300", "--command", "show ip int brief")
	p := parsedOf(t, stdout)
	if err != nil || p["template"] != "mine.textfsm" || len(p["data"].([]any)) != 7 {
		t.Fatalf("templates_dir: %v %v", err, p)
	}
}

func TestParseCommandTemplate(t *testing.T) {
	data := t.TempDir()
	tmpl := filepath.Join(t.TempDir(), "try.textfsm")
	os.WriteFile(tmpl, []byte("Value PORT (\\S+)\nValue VLAN (\\d+)\n\nStart\n  ^${PORT}\\s+${VLAN}\\s*$$ -> Record\n"), 0o600)
	stdout, _, err := cli(t, nil, "Gi1 10\nGi2 20\n", "parse", "--data", data, "--template", tmpl)
	want := map[string]any{"success": true, "method": "textfsm", "template": tmpl, "columns": []any{"port", "vlan"},
		"data": []any{map[string]any{"port": "Gi1", "vlan": "10"}, map[string]any{"port": "Gi2", "vlan": "20"}}}
	if err != nil || !reflect.DeepEqual(parsedOf(t, stdout), want) {
		t.Fatalf("--template: %v\n%s", err, stdout)
	}
	os.WriteFile(tmpl, []byte("Value PORT (\\S+\n\nStart\n  ^${PORT}\n"), 0o600)
	stdout, _, err = cli(t, nil, "Gi1 10\n", "parse", "--data", data, "--template", tmpl)
	if err == nil || !strings.Contains(err.Error(), tmpl) || stdout != "" {
		t.Fatalf("a broken template: err %v, stdout %q", err, stdout)
	}
}

// TestParseCommandExitStatus runs the binary: parsed output exits 0, no template exits 1
// with the reason on stderr and the parsed_output on stdout.
func TestParseCommandExitStatus(t *testing.T) {
	data := t.TempDir()
	file := filepath.Join("testdata", "textfsm", "cisco_ios", "show_version.raw")
	stdout, stderr, code := runExit(t, "parse", "--data", data, "--platform", "cisco_ios", "--command", "show version", file)
	if code != 0 || stderr != "" || parsedOf(t, stdout)["success"] != true {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	stdout, stderr, code = runExit(t, "parse", "--data", data, "--platform", "cisco_ios", "--command", "show clock", file)
	if code != 1 || !strings.Contains(stderr, "no template for platform cisco_ios and command show clock") || parsedOf(t, stdout)["success"] != false {
		t.Fatalf("no template: exit %d, stderr %q", code, stderr)
	}
}
