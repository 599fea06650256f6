package exec

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/exec/devsim"
	"fieldkit/web/webtest"
)

// Test credentials; every test checks they never leak.
const (
	testUser   = "ops"
	testPass   = "pw-Alpha-9"
	testEnable = "en-Bravo-7"
)

// memKeys is a HostKeyStore in memory.
type memKeys struct {
	mu sync.Mutex
	m  map[int64]string
}

func (k *memKeys) KnownHostKey(_ context.Context, id int64) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.m[id], nil
}

func (k *memKeys) SaveHostKey(_ context.Context, id int64, key string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[int64]string{}
	}
	k.m[id] = key
	return nil
}

// rig is one simulated device and everything needed to talk to it.
type rig struct {
	dev  *devsim.Device
	tg   Target
	cred Credentials
	opt  Options
	keys *memKeys
	logs *webtest.Buffer
}

// newRig starts a device of the vendor with an enable secret where the
// platform has one, and checks for leaked secrets when the test ends.
func newRig(t testing.TB, vendor string, mod func(*devsim.Config)) *rig {
	t.Helper()
	cfg := devsim.Config{Vendor: vendor, Username: testUser, Password: testPass, EnableSecret: testEnable}
	if mod != nil {
		mod(&cfg)
	}
	dev, err := devsim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	r := &rig{dev: dev, keys: &memKeys{}, logs: &webtest.Buffer{}}
	r.tg = Target{DeviceID: 7, Name: "lab-" + vendor, Host: "127.0.0.1", Port: dev.Port(), Driver: vendor}
	r.cred = Credentials{Username: testUser, Password: testPass, EnableSecret: testEnable}
	logger := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.opt = Options{HostKeys: r.keys, Logger: logger, Timeout: 10 * time.Second}
	t.Cleanup(func() { assertNoSecret(t, "log", r.logs.String()) })
	return r
}

// exec runs commands with Execute and checks the results for secrets.
func (r *rig) exec(t testing.TB, cmds ...Command) []Result {
	t.Helper()
	res := Execute(context.Background(), r.tg, r.cred, r.opt, cmds)
	assertNoSecretResults(t, res)
	return res
}

// open opens a session for tests that drive Run themselves.
func (r *rig) open(t testing.TB) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Open(ctx, r.tg, r.cred, r.opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run runs one command on s within timeout.
func run(t testing.TB, s *Session, timeout time.Duration, cmd Command) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res := s.Run(ctx, cmd)
	assertNoSecretResults(t, []Result{res})
	return res
}

func assertNoSecretResults(t testing.TB, res []Result) {
	t.Helper()
	for _, r := range res {
		assertNoSecret(t, "output", r.Output)
		assertNoSecret(t, "error message", r.ErrorMessage)
		assertNoSecret(t, "syntax line", r.Syntax.Line)
		if r.Failure != nil {
			assertNoSecret(t, "failure message", r.Failure.Message("set"))
			assertNoSecret(t, "failure cause", r.Failure.Cause)
		}
	}
}

func assertNoSecret(t testing.TB, where, text string) {
	t.Helper()
	for _, s := range []string{testPass, testEnable} {
		if strings.Contains(text, s) {
			t.Errorf("secret in %s: %q", where, text)
		}
	}
}

func show(text string) Command   { return Command{Type: TypeShow, Text: text} }
func config(text string) Command { return Command{Type: TypeConfig, Text: text} }

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, l := range list {
		if strings.TrimSpace(l) == s {
			return true
		}
	}
	return false
}
