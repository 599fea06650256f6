package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// TestPynetbox runs testdata/pynetbox/check.py, a script using Debian's
// python3-pynetbox, against the built binary's `serve`: a real client over
// real HTTP, with the user and token made by the binary's own CLI.
func TestPynetbox(t *testing.T) {
	python := pynetboxPython(t)
	if testing.Short() {
		t.Skip("builds the binary and runs a Python client: not in -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fieldkit")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	runBin(t, bin, "admin-Pa55word\n", "user", "create", "admin", "--superuser", "--password-stdin", "--init", "--data", data)
	token := strings.TrimSpace(runBin(t, bin, "", "token", "create", "admin", "--data", data))
	if len(token) != 40 {
		t.Fatalf("token create printed %q, want the key alone", token)
	}
	seedLogs(t, filepath.Join(data, "fieldkit.db"))
	base := startServe(t, bin, data)

	script := exec.Command(python, filepath.Join("testdata", "pynetbox", "check.py"), base, token, "admin-Pa55word")
	script.Env = serverEnv()
	out, err := script.CombinedOutput()
	if err != nil {
		t.Fatalf("check.py: %v\n%s", err, out)
	}
	t.Logf("check.py:\n%s", out)
}

// pynetboxPython is the python3 with pynetbox that FIELDKIT_TEST_PYTHON names; without
// it a test fails under CI=true, and skips otherwise.
func pynetboxPython(t *testing.T) string {
	t.Helper()
	python := os.Getenv("FIELDKIT_TEST_PYTHON")
	if python == "" {
		msg := "FIELDKIT_TEST_PYTHON is not set (a python3 with pynetbox); start the peers with: bash .ci/peers.sh start; source <(bash .ci/peers.sh env)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return python
}

// serverEnv is the environment without FIELDKIT_ settings, so that the
// developer's own do not change the server under test.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FIELDKIT_") {
			env = append(env, kv)
		}
	}
	return env
}

// runBin runs the built binary to completion and returns its stdout.
func runBin(t *testing.T, bin, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = serverEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fieldkit %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// seedLogs writes the command logs check.py expects (its SEEDED_* constants)
// straight into the store, on two devices of a site of their own: 7 logs, 2
// failed (one error message a spreadsheet would take for a formula), 6 of
// them created now and one three days ago.
func seedLogs(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	site, err := db.Create(ctx, store.Sites, store.Values{"name": "Seed site", "slug": "seed-site"}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	var devs [2]int64
	for i, n := range []string{"seed-1", "seed-2"} {
		if devs[i], err = db.Create(ctx, store.Devices, store.Values{"name": n, "site": site}, store.All); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	log := func(dev int, cmd string, errMsg string, age time.Duration) store.Values {
		at := now.Add(-age)
		return store.Values{"command_name": cmd, "command_type": "show", "device": devs[dev], "device_name": []string{"seed-1", "seed-2"}[dev],
			"username": "admin", "output": "output of " + cmd, "success": errMsg == "", "error_message": errMsg,
			"execution_duration": 0.25, "execution_time": at, "created": at}
	}
	logs := []store.Values{
		log(0, "show version", "", time.Millisecond),
		log(0, "show version", "", 2*time.Millisecond),
		log(1, "show version", "", 3*time.Millisecond),
		log(1, "show ip route", "", 4*time.Millisecond),
		log(0, "show ip route", `=HYPERLINK("http://example.invalid")`, 5*time.Millisecond),
		log(1, "show ip route", "Timed out after 30 s", 6*time.Millisecond),
		log(1, "show version", "", 72*time.Hour),
	}
	if err := db.InsertLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
}

// startServe starts `fieldkit serve` on a free port and waits until it
// answers; it is interrupted and awaited when the test ends.
func startServe(t *testing.T, bin, data string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", addr)
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("serve log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, err := http.Get(base + "/api/status/")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve exited: %v\n%s", err, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready at %s:\n%s", base, logs.String())
		}
	}
}
