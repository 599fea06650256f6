package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"fieldkit/store"
	"fieldkit/web/webtest"
)

// demoRun is what one start of `serve --demo` printed to log in with.
type demoRun struct{ password, token, credToken, out string }

var (
	reDemoPassword = regexp.MustCompile(`web UI:\s+\S+\s+\(admin / (\S+)\)`)
	reDemoToken    = regexp.MustCompile(`API token:\s+(\S+)`)
	reDemoCred     = regexp.MustCompile(`credential token:\s+(\S+)`)
)

// startDemoOnce runs serve with the demo on data until it is ready, stops it, and
// returns what it printed.
func startDemoOnce(t *testing.T, data string, reset bool) demoRun {
	t.Helper()
	cfg, err := loadConfig("", func(string) string { return "" }, nil, map[string]string{"server.data": data, "server.listen": "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	out := &webtest.Buffer{}
	go func() {
		done <- serve(ctx, env{getenv: func(string) string { return "" }, stdout: out, stderr: &webtest.Buffer{}}, cfg,
			serveOptions{demo: true, demoReset: reset, ready: ready})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the demo is not ready after 30 s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := out.String()
	r := demoRun{out: s}
	for re, dst := range map[*regexp.Regexp]*string{reDemoPassword: &r.password, reDemoToken: &r.token, reDemoCred: &r.credToken} {
		if m := re.FindStringSubmatch(s); m != nil {
			*dst = m[1]
		}
	}
	if r.token == "" || r.credToken == "" {
		t.Fatalf("no token printed:\n%s", s)
	}
	return r
}

// openDemoDB opens the demo's database after the server stopped.
func openDemoDB(t *testing.T, data string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func tokenCount(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM tokens`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A restarted demo prints the same admin password, API token and credential token, and
// adds no token; --demo-reset makes new ones and the old ones stop working; a password
// someone changed is left alone.
func TestDemoKeepsItsLoginAcrossRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo four times")
	}
	ctx := context.Background()
	data := t.TempDir()
	first := startDemoOnce(t, data, false)
	if first.password == "" {
		t.Fatalf("no password printed:\n%s", first.out)
	}
	st, err := os.Stat(filepath.Join(data, "demo", demoSecretsFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the demo's credentials file must be 0600: %v %v", st, err)
	}

	again := startDemoOnce(t, data, false)
	if again.password != first.password || again.token != first.token || again.credToken != first.credToken {
		t.Fatalf("a restart changed the login:\nfirst %+v\nagain %+v", first, again)
	}
	db := openDemoDB(t, data)
	if n := tokenCount(t, db); n != 1 {
		t.Errorf("%d API tokens after two starts, want 1", n)
	}
	if _, err := db.CheckPassword(ctx, "admin", first.password); err != nil {
		t.Errorf("the printed password does not log in: %v", err)
	}
	kr, err := loadKeyring(ctx, env{getenv: func(string) string { return "" }}, db, data, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CredentialByToken(ctx, kr, first.credToken); err != nil {
		t.Errorf("the printed credential token is not valid: %v", err)
	}
	db.Close()

	reset := startDemoOnce(t, data, true)
	if reset.password == first.password || reset.token == first.token || reset.credToken == first.credToken {
		t.Fatalf("--demo-reset kept something:\nfirst %+v\nreset %+v", first, reset)
	}
	db = openDemoDB(t, data)
	if n := tokenCount(t, db); n != 1 {
		t.Errorf("%d API tokens after a reset, want 1 (the old one deleted)", n)
	}
	if _, err := db.Authenticate(ctx, first.token); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the old API token still authenticates: %v", err)
	}
	if _, err := db.CheckPassword(ctx, "admin", first.password); !errors.Is(err, store.ErrBadLogin) {
		t.Errorf("the old password still logs in: %v", err)
	}
	if _, err := db.CredentialByToken(ctx, kr, first.credToken); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the old credential token still works: %v", err)
	}

	id, err := db.UserIDByName(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetPassword(ctx, id, "changed-by-a-person"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	changed := startDemoOnce(t, data, false)
	if changed.password != "" || !regexp.MustCompile(`admin's password was changed`).MatchString(changed.out) {
		t.Errorf("a changed password is reported, not replaced:\n%s", changed.out)
	}
	if changed.token != reset.token {
		t.Errorf("the API token changed with the password")
	}
	db = openDemoDB(t, data)
	if _, err := db.CheckPassword(ctx, "admin", "changed-by-a-person"); err != nil {
		t.Errorf("the demo replaced a password someone set: %v", err)
	}
}
