package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/store"
	"fieldkit/web/webtest"
)

// The finding: any user who may edit a device could clear its pinned host key, which
// is what lets a changed (perhaps impostor) key be trusted on first use again. It takes
// its own action, clear_host_key on dcim.device, or a superuser.
func TestClearHostKeyNeedsItsOwnAction(t *testing.T) {
	e := newEnv(t)
	e.inventory()
	e.must(201, "POST", "/api/dcim/devices/", e.admin, map[string]any{"name": "sw1", "site": 1})
	key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMTmUxJRYwcMzyiGCNJfqfxIsdm4N6J2ymqe6UeB2cDc"
	if err := e.db.SaveHostKey(context.Background(), 1, key); err != nil {
		t.Fatal(err)
	}
	editor := e.user("editor", false)
	e.grant("editor", store.TypeDevice, []string{"view", "add", "change", "delete"}, "")
	r := e.do("DELETE", "/api/dcim/devices/1/host-key/", editor, nil)
	if r.status != 403 {
		t.Fatalf("an editor without clear_host_key: %d %s", r.status, r.body)
	}
	if k, _ := e.db.KnownHostKey(context.Background(), 1); k != key {
		t.Fatalf("the key was cleared: %q", k)
	}
	keeper := e.user("keeper", false)
	e.grant("keeper", store.TypeDevice, []string{"view", "clear_host_key"}, "")
	e.must(204, "DELETE", "/api/dcim/devices/1/host-key/", keeper, nil)
	if k, _ := e.db.KnownHostKey(context.Background(), 1); k != "" {
		t.Fatalf("not cleared: %q", k)
	}
	// Constraints narrow it like any action; without view the device is not there.
	e.user("north", false)
	e.grant("north", store.TypeDevice, []string{"view"}, "")
	e.grant("north", store.TypeDevice, []string{"clear_host_key"}, `{"name": "other"}`)
	e.must(403, "DELETE", "/api/dcim/devices/1/host-key/", e.token("north"), nil)
	e.user("blind", false)
	e.grant("blind", store.TypeDevice, []string{"clear_host_key"}, "")
	e.must(404, "DELETE", "/api/dcim/devices/1/host-key/", e.token("blind"), nil)
	// The action is declared data: it applies to devices only, and the schema and
	// OPTIONS offer it.
	bad := e.do("POST", "/api/users/permissions/", e.admin, map[string]any{"name": "x", "object_types": []string{"dcim.site"},
		"actions": []string{"clear_host_key"}})
	if bad.status != 400 || !strings.Contains(string(bad.body), "dcim.device") {
		t.Errorf("clear_host_key on sites: %d %s", bad.status, bad.body)
	}
	opts := e.must(200, "OPTIONS", "/api/users/permissions/", e.admin, nil)
	if !strings.Contains(fmt.Sprint(opts["actions"]), "clear_host_key") {
		t.Errorf("OPTIONS does not offer clear_host_key: %v", opts["actions"])
	}
}

// slowServer is the API behind a real HTTP server with a short body deadline.
func slowServer(t *testing.T, bodyTimeout time.Duration) (*env, string) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	api := New(Options{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Version: "test", BodyTimeout: bodyTimeout})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	e := &env{t: t, db: db, api: api, srv: srv}
	e.admin = e.user("admin", true)
	return e, srv.Listener.Addr().String()
}

// trickle sends a request whose body of n bytes arrives one byte every step, and
// returns how many body bytes the server let it send before answering or closing.
func trickle(addr, head string, n int, step time.Duration) (sent int, status string) {
	return webtest.Trickle(addr, fmt.Sprintf("%sContent-Length: %d\r\nContent-Type: application/json\r\n\r\n", head, n), " ", n, step)
}

// The finding: 300 slow bodies, unauthenticated, held their connections for 40 s. A
// body has a deadline: a client that sends it too slowly gets an answer (or a closed
// connection) long before it is done, whether or not the request authenticated.
func TestSlowBodiesAreCut(t *testing.T) {
	e, addr := slowServer(t, 300*time.Millisecond)
	heads := []string{
		"POST /api/users/tokens/provision/ HTTP/1.1\r\nHost: x\r\n",                             // public
		"POST /api/dcim/sites/ HTTP/1.1\r\nHost: x\r\n",                                         // no credentials
		"POST /api/dcim/sites/ HTTP/1.1\r\nHost: x\r\nAuthorization: Token " + e.admin + "\r\n", // authenticated
	}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent, status := trickle(addr, heads[i%len(heads)], 200, 50*time.Millisecond)
			if sent >= 100 {
				t.Errorf("%q: the server waited for %d of 200 slow body bytes (then %s)", heads[i%len(heads)], sent, status)
			}
		}()
	}
	wg.Wait()
}

// A body that arrives in time lifts the deadline: a request may then run as long as it
// needs (an execution up to its timeout), and the connection serves the next request.
func TestBodyDeadlineLiftsOnceRead(t *testing.T) {
	x := newXEnv(t, 100, func(o *ExecOptions) {})
	x.api.router.BodyTimeout = 200 * time.Millisecond
	x.ios.SetLatency(150 * time.Millisecond) // login, enable, paging, command: well over the deadline
	cmd := x.command("show version", "show version", "show")
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	for i := range 2 {
		body := fmt.Sprintf(`{"device_id": %d, "credential_token": %q}`, x.iosID, x.token)
		reused := false
		trace := &httptrace.ClientTrace{GotConn: func(c httptrace.GotConnInfo) { reused = c.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
			"POST", x.srv.URL+execPath(cmd), strings.NewReader(body))
		req.Header.Set("Authorization", "Token "+x.admin)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(raw), `"success":true`) {
			t.Fatalf("execute after %v: %d %s", time.Since(start), res.StatusCode, raw)
		}
		if i == 1 && !reused {
			t.Error("the connection did not survive a request longer than the body deadline")
		}
	}
}
