package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldkit/store"
)

// TestImportCommand: `fieldkit import` previews with --dry-run, imports all or nothing,
// reads stdin with "-", and names each problem's row and column on stderr (exit 1).
func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	env := map[string]string{"FIELDKIT_DATA": data}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sites := write("sites.csv", "name,description\nParis 1,first floor\n")
	devices := write("paris-devices.csv", "name,site,mgmt_ip,ssh_port,role\nr1,Paris 1,192.0.2.1/24,2222,router\nr2,paris-1,192.0.2.2/24,,switch\n")

	out, _, err := cli(t, env, "", "import", sites, "--dry-run")
	if err != nil || !strings.Contains(out, "sites        row 2     create    Paris 1") || !strings.Contains(out, "dry run: nothing was written") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if out, _, err = cli(t, env, "", "import", sites); err != nil || !strings.Contains(out, "sites: 1 created, 0 updated, 0 unchanged") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	out, _, err = cli(t, env, "", "import", devices)
	if err != nil || !strings.Contains(out, "devices: 2 created") || !strings.Contains(out, "ignored: role") {
		t.Fatalf("devices: %v\n%s", err, out)
	}
	bad := write("more.csv", "name,site\nr3,Lyon\nr4,Paris 1\n")
	_, stderr, err := cli(t, env, "", "import", bad, "--type", "devices")
	if err == nil || !strings.Contains(stderr, "devices row 2, column site: no site named or with slug \"Lyon\"") {
		t.Fatalf("a bad file: %v\n%s", err, stderr)
	}
	if out, _, err = cli(t, env, "- name: r5\n  site: paris-1\n", "import", "-", "--type", "devices", "--format", "yaml"); err != nil ||
		!strings.Contains(out, "devices: 1 created") {
		t.Fatalf("stdin: %v\n%s", err, out)
	}
	db, err := store.Open(context.Background(), filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var names []string
	rows, _ := db.Reader().Query(`SELECT name FROM devices ORDER BY name`)
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	if strings.Join(names, ",") != "r1,r2,r5" {
		t.Errorf("devices: %v (r4 must not be there: the file with r3 was refused whole)", names)
	}
	tgt, err := db.DeviceTarget(context.Background(), 1)
	if err != nil || tgt.Port != 2222 {
		t.Errorf("r1's target: %+v %v", tgt, err)
	}
}
