package ui_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/netbox/fakenetbox"
)

// chromiumPath is Debian's chromium, the browser the end-to-end tests drive.
const chromiumPath = "/usr/bin/chromium"

// TestBrowserE2E builds the binary, starts `serve --demo` on a free port and runs
// testdata/e2e/run.mjs, which drives chromium through playwright-core: log in, create a
// credential set and a command, run it from a device page, find its log and CSV, see it
// in the statistics, and check that the server (not just the page) refuses what it must.
//
// It needs /usr/bin/chromium (apt-get install -y chromium), node and playwright-core
// installed outside the repository (npm install --prefix /tmp/fk-e2e playwright-core;
// FIELDKIT_TEST_PLAYWRIGHT_DIR overrides the directory). Missing pieces skip the test
// locally and fail it in CI (CI=true). Screenshots go to FIELDKIT_TEST_SCREENSHOTS, or a
// temporary directory.
func TestBrowserE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests are not short")
	}
	node, pwDir := browserDeps(t)
	trackSources(t)
	bin := filepath.Join(t.TempDir(), "fieldkit")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A NetBox for the inventory scenarios' sync button (its Lyon site: no name the demo uses).
	nb := fakenetbox.Start(t, filepath.Join("..", "testdata", "netbox"), false)
	t.Setenv("FIELDKIT_INVENTORY_NETBOX_URL", nb.URL)
	t.Setenv("FIELDKIT_INVENTORY_NETBOX_TOKEN", fakenetbox.Token)
	t.Setenv("FIELDKIT_INVENTORY_NETBOX_FILTER", "site=lyon-2")
	demo := startDemo(t, bin)
	empty := startEmpty(t, bin)
	shots := os.Getenv("FIELDKIT_TEST_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute) // about 2.5 min on a loaded machine; the layout sweep alone took 150 s at load 15
	defer cancel()
	run := exec.CommandContext(ctx, node, filepath.Join("testdata", "e2e", "run.mjs"))
	run.Env = append(os.Environ(),
		"FK_BASE="+demo.base, "FK_EMPTY_BASE="+empty, "FK_ADMIN_PASSWORD="+demo.password, "FK_API_TOKEN="+demo.apiToken,
		"FK_CREDENTIAL_TOKEN="+demo.credToken, "FK_SCREENSHOTS="+shots, "FK_SERVER_ZONE="+demoZone,
		"FK_PLAYWRIGHT_DIR="+pwDir, "FK_CHROMIUM="+chromiumPath, "FK_PROFILE="+t.TempDir())
	out, err := run.CombinedOutput()
	t.Logf("run.mjs:\n%s", out)
	t.Logf("screenshots in %s", shots)
	if err != nil {
		t.Fatalf("browser scenarios failed: %v\nserver log:\n%s", err, demo.log())
	}
}

// trackSources stats every source file of the module, so that `go test` caches this
// test's result only while none of them changes: the binary is built from the whole
// module (not just this package's imports) and run.mjs is read by node, neither of
// which the test cache would otherwise see.
func trackSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != ".." {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".go", ".mjs", ".js", ".css", ".html", ".mod", ".sum", ".sql", ".textfsm", ".yaml":
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// browserDeps finds node and playwright-core, or skips (locally) or fails (in CI).
func browserDeps(t *testing.T) (node, pwDir string) {
	t.Helper()
	missing := func(what, how string) {
		msg := fmt.Sprintf("browser tests need %s: %s", what, how)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		missing(chromiumPath, "apt-get update && apt-get install -y chromium")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node", "apt-get install -y nodejs npm")
	}
	pwDir = os.Getenv("FIELDKIT_TEST_PLAYWRIGHT_DIR")
	if pwDir == "" {
		pwDir = "/tmp/fk-e2e"
	}
	if _, err := os.Stat(filepath.Join(pwDir, "node_modules", "playwright-core", "package.json")); err != nil {
		missing("playwright-core in "+pwDir, "npm install --prefix "+pwDir+" playwright-core (or set FIELDKIT_TEST_PLAYWRIGHT_DIR)")
	}
	return node, pwDir
}

// demoZone is the demo server's time zone: neither UTC nor the browser's, so the pages'
// times show which zone they are in.
const demoZone = "America/New_York"

// demoServer is a running `serve --demo` and what it printed.
type demoServer struct {
	base, password, apiToken, credToken string
	mu                                  sync.Mutex
	out                                 strings.Builder // everything it printed
}

func (d *demoServer) print(line string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.out.WriteString(line + "\n")
}

func (d *demoServer) log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

var (
	reBase      = regexp.MustCompile(`FieldKit demo is ready at (\S+)`)
	rePassword  = regexp.MustCompile(`web UI:\s+\S+\s+\(admin / (\S+)\)`)
	reAPIToken  = regexp.MustCompile(`API token:\s+(\S+)`)
	reCredToken = regexp.MustCompile(`credential token:\s+(\S+)`)
)

// startDemo starts the binary on 127.0.0.1:0 and reads the base URL, admin password and
// tokens from what it prints; the server is stopped when the test ends.
func startDemo(t *testing.T, bin string) *demoServer {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--demo", "--data", t.TempDir(), "--listen", "127.0.0.1:0")
	// A rate limit of 10 a minute (the default is 60), so that the scenario of a refused
	// run meets it in a few runs; a hub too, for its sites' pages; changes.mjs runs as
	// "auditor", exempt from the rate limit.
	cmd.Env = append(os.Environ(), "FIELDKIT_SERVER_TIME_ZONE="+demoZone, "FIELDKIT_RATE_LIMIT_DEVICE_COMMAND_LIMIT=10",
		"FIELDKIT_HUB_SERVE=true", "FIELDKIT_RATE_LIMIT_BYPASS_USERS=auditor")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &demoServer{}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(cmd) })
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			d.print(line)
			for re, dst := range map[*regexp.Regexp]*string{reBase: &d.base, rePassword: &d.password, reAPIToken: &d.apiToken, reCredToken: &d.credToken} {
				if m := re.FindStringSubmatch(line); m != nil && *dst == "" {
					*dst = m[1]
				}
			}
			if !sent && strings.Contains(line, "simulated devices:") {
				sent = true
				ready <- nil
			}
		}
		if !sent {
			ready <- fmt.Errorf("demo exited before it was ready: %v", sc.Err())
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("%v\n%s", err, d.log())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("demo not ready after 60 s:\n%s", d.log())
	}
	if d.base == "" || d.password == "" || d.apiToken == "" || d.credToken == "" {
		t.Fatalf("could not read the demo's base URL, password and tokens from:\n%s", d.log())
	}
	return d
}

var reListening = regexp.MustCompile(`msg="fieldkit listening" url=(\S+)`)

// startEmpty starts the binary without --demo on an empty data directory: an install
// with no user yet. It returns the base URL; the server is stopped when the test ends.
func startEmpty(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(cmd) })
	base := make(chan string, 1)
	go func() {
		// Reading on to the end keeps the server's writes to stderr from blocking.
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := reListening.FindStringSubmatch(sc.Text()); m != nil {
				base <- m[1]
			}
		}
		close(base)
	}()
	select {
	case b, ok := <-base:
		if !ok {
			t.Fatalf("the empty server exited before listening")
		}
		return b
	case <-time.After(60 * time.Second):
		t.Fatalf("the empty server is not listening after 60 s")
	}
	return ""
}

// stop interrupts a server and waits for it, killing it after 10 s.
func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}
