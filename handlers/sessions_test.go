package handlers

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"fieldkit/exec"
	"fieldkit/store"
	"fieldkit/web"
)

// withPool gives the API a session pool that keeps sessions a minute, perDevice per
// device, closed when the test ends.
func withPool(t *testing.T, perDevice int) func(*ExecOptions) {
	return func(o *ExecOptions) {
		o.Pool = exec.NewPool(exec.PoolConfig{Idle: time.Minute, PerDevice: perDevice})
		t.Cleanup(o.Pool.Close)
	}
}

// A kept session serves only requests presenting its credential set: another user's
// own set on the same device (same device login even) logs in anew, and another
// user's token is refused before any session is looked at.
func TestKeptSessionOnlyForItsSet(t *testing.T) {
	x := newXEnv(t, 100, withPool(t, 2))
	cmd := x.command("Version", "show version", "show")
	run := func(token, credToken string, status int) {
		t.Helper()
		x.must(status, "POST", execPath(cmd), token, map[string]any{"device_id": x.iosID, "credential_token": credToken})
	}
	run(x.admin, x.token, 200)
	run(x.admin, x.token, 200)
	if n := x.ios.Logins(); n != 1 {
		t.Fatalf("%d logins for two executions with one set, want 1", n)
	}
	bob := x.user("bob", false)
	x.grant("bob", store.TypeCommand, []string{"view", "execute_show"}, "")
	x.grant("bob", store.TypeDevice, []string{"view"}, "")
	bobTok, _ := x.credSet("bob", "bob's", nil)
	run(bob, x.token, 400)
	if n := x.ios.Logins(); n != 1 {
		t.Fatalf("another user's token reached the device: %d logins", n)
	}
	run(bob, bobTok, 200)
	run(bob, bobTok, 200)
	if n := x.ios.Logins(); n != 2 {
		t.Fatalf("%d logins, want 2: bob's set gets a session of its own, once", n)
	}
	run(x.admin, x.token, 200)
	if st := x.api.Exec.Pool.Stats(); x.ios.Logins() != 2 || st.Open != 2 || st.Reuses != 3 {
		t.Errorf("logins %d, pool %+v", x.ios.Logins(), st)
	}
}

// Single and bulk executions share kept sessions: a bulk group on a device runs on the
// session a single execution left, and leaves it for the next one; the first command on
// a session counts getting it in its execution_time, single or bulk.
func TestBulkAndSingleShareSessions(t *testing.T) {
	x := newXEnv(t, 100, withPool(t, 1))
	cmd := x.command("Version", "show version", "show")
	single := map[string]any{"device_id": x.iosID, "credential_token": x.token}
	x.must(200, "POST", execPath(cmd), x.admin, single)
	execs := []any{}
	for range 3 {
		execs = append(execs, map[string]any{"command_id": cmd, "device_id": x.iosID, "credential_token": x.token})
	}
	m := x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": execs})
	if s := m["summary"].(map[string]any); s["successful"] != float64(3) {
		t.Fatalf("bulk: %v", m)
	}
	x.must(200, "POST", execPath(cmd), x.admin, single)
	if n := x.ios.Logins(); n != 1 {
		t.Errorf("%d logins for a single, a bulk group of 3 and a single, want 1", n)
	}
	if st := x.api.Exec.Pool.Stats(); st.Reuses != 2 {
		t.Errorf("pool %+v", st)
	}
}

// A request whose client went away is not a server failure: whatever it was waiting on
// fails with the cancellation, and the log says so at info, never at error (which
// pages whoever alerts on errors). The server cancels a request's context when its
// connection closes; here it is cancelled before the request is served.
func TestClientGoneIsNotAnError(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/api/dcim/devices/", "/api/plugins/toolkit/command-logs/statistics/"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req := httptest.NewRequest("GET", path, nil).WithContext(ctx)
		req.Header.Set("Authorization", "Token "+e.admin)
		rec := httptest.NewRecorder()
		e.api.ServeHTTP(rec, req)
		if rec.Code != web.StatusClientClosed {
			t.Errorf("%s: status %d, want %d: %s", path, rec.Code, web.StatusClientClosed, rec.Body)
		}
	}
	logs := e.logs.String()
	if strings.Contains(logs, "level=ERROR") || strings.Count(logs, `level=INFO msg="request abandoned by the client"`) != 2 {
		t.Errorf("log:\n%s", logs)
	}
}
