//go:build !windows

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestCLIChangesReachTheRunningServer: the server caches what an execute's checks look
// up (the device's address and port among them); `fieldkit import` run against the
// live data directory, in another process's connections, changes the device, and the
// server's very next execute goes where the database now says.
func TestCLIChangesReachTheRunningServer(t *testing.T) {
	if testing.Short() {
		t.Skip("real process: not in -short")
	}
	l := newLab(t, 0)
	s := startServer(t, l, nil)
	execute := func(want bool) map[string]any {
		t.Helper()
		st, body, err := s.execute(l)
		if err != nil || st != 200 || body["success"] != want {
			t.Fatalf("execute: %d %v %v, want success %v", st, body, err, want)
		}
		return body
	}
	execute(true)
	execute(true) // checked from the cache
	importPort := func(port int) {
		t.Helper()
		file := filepath.Join(t.TempDir(), "devices.csv")
		if err := os.WriteFile(file, []byte(fmt.Sprintf("name,site,ssh_port\nslow-1,lab,%d\n", port)), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"FIELDKIT_DATA": l.data, "FIELDKIT_SECRET_KEY": l.key}
		if out, stderr, err := cli(t, env, "", "import", file, "--type", "devices"); err != nil {
			t.Fatalf("import: %v\n%s%s", err, out, stderr)
		}
	}
	closed := freePort(t)
	importPort(closed)
	body := execute(false)
	if f, _ := body["failure"].(map[string]any); f == nil || f["port"] != float64(closed) {
		t.Fatalf("after the import the execute did not go to port %d: %v", closed, body)
	}
	importPort(l.dev.Port())
	execute(true)
}

// freePort is a port of 127.0.0.1 nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	var port int
	if _, err := fmt.Sscanf(freeAddr(t), "127.0.0.1:%d", &port); err != nil {
		t.Fatal(err)
	}
	return port
}
