package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldkit/netbox/fakenetbox"
	"fieldkit/store"
)

// TestImportCommand: `fieldkit import` previews with --dry-run, imports all or nothing,
// reads stdin with "-", and names each problem's row and column on stderr (exit 1).
func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	data := initData(t, filepath.Join(dir, "data"))
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

// TestInventorySyncCommand: `fieldkit inventory sync` brings the NetBox of the settings
// in, with progress on stderr and what changed on stdout; a refusal exits non-zero
// with NetBox's reason and never the token.
func TestInventorySyncCommand(t *testing.T) {
	nb := fakenetbox.Start(t, "testdata/netbox", false)
	data := initData(t, t.TempDir())
	env := map[string]string{"FIELDKIT_DATA": data, "FIELDKIT_INVENTORY_NETBOX_URL": nb.URL,
		"FIELDKIT_INVENTORY_NETBOX_TOKEN": fakenetbox.Token, "FIELDKIT_INVENTORY_NETBOX_FILTER": "site=paris-1&tag=managed"}
	out, stderr, err := cli(t, env, "", "inventory", "sync")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "devices:          2 fetched, 2 created") || !strings.Contains(stderr, "devices: page 1") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, stderr)
	}
	env["FIELDKIT_INVENTORY_NETBOX_TOKEN"] = "feedfacefeedfacefeedfacefeedfacefeedface"
	_, stderr, err = cli(t, env, "", "inventory", "sync")
	if err == nil || !strings.Contains(err.Error(), "Invalid token") || strings.Contains(err.Error()+stderr, "feedface") {
		t.Errorf("wrong token: %v\n%s", err, stderr)
	}
	if exitStatus(err, io.Discard) != 1 {
		t.Errorf("exit status %d", exitStatus(err, io.Discard))
	}
	delete(env, "FIELDKIT_INVENTORY_NETBOX_URL")
	delete(env, "FIELDKIT_INVENTORY_NETBOX_TOKEN")
	if _, _, err := cli(t, env, "", "inventory", "sync"); err == nil || !strings.Contains(err.Error(), "inventory.netbox_url") {
		t.Errorf("not configured: %v", err)
	}
}

// TestInventorySettings: the sync's settings are checked at start-up, naming the key;
// the token is never part of a message.
func TestInventorySettings(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"FIELDKIT_INVENTORY_NETBOX_URL": "netbox.example.net"}, "inventory.netbox_url"},
		{map[string]string{"FIELDKIT_INVENTORY_NETBOX_URL": "https://netbox.example.net"}, "inventory.netbox_token: needed"},
		{map[string]string{"FIELDKIT_INVENTORY_NETBOX_SCHEDULE": "hourly"}, "inventory.netbox_schedule: needs inventory.netbox_url"},
		{map[string]string{"FIELDKIT_INVENTORY_NETBOX_URL": "https://nb", "FIELDKIT_INVENTORY_NETBOX_TOKEN": "s3cr3t-token",
			"FIELDKIT_INVENTORY_NETBOX_SCHEDULE": "10s"}, "inventory.netbox_schedule"},
		{map[string]string{"FIELDKIT_INVENTORY_NETBOX_URL": "https://nb", "FIELDKIT_INVENTORY_NETBOX_TOKEN": "s3cr3t-token",
			"FIELDKIT_INVENTORY_NETBOX_SCHEDULE": "weekly"}, "inventory.netbox_schedule"},
		{map[string]string{"FIELDKIT_INVENTORY_NETBOX_FILTER": "limit=5"}, "inventory.netbox_filter"},
		{map[string]string{"FIELDKIT_INVENTORY_NETBOX_CA_FILE": "/nonexistent/ca.pem"}, "inventory.netbox_ca_file"},
	} {
		var environ []string
		for k, v := range c.env {
			environ = append(environ, k+"="+v)
		}
		_, err := loadConfig("", func(k string) string { return c.env[k] }, environ, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%v: %v", c.env, err)
		}
	}
	for in, want := range map[string]string{"": "", "hourly": "hourly", "daily 02:30": "daily 02:30", "15m": "every 15m", "2h": "every 2h"} {
		if got, err := syncSchedule(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
}
