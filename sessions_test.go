//go:build !windows

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// webUser is a logged-in web UI session.
type webUser struct {
	base   string
	client *http.Client
	csrf   string
}

func webLogin(t *testing.T, base, username, password string) *webUser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	w := &webUser{base: base, client: &http.Client{Jar: jar}}
	m := w.must(t, 200, "POST", "/ui/login", fmt.Sprintf(`{"username": %q, "password": %q}`, username, password))
	w.csrf = m["csrf_token"].(string)
	return w
}

func (w *webUser) must(t *testing.T, status int, method, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, w.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRFToken", w.csrf)
	res, err := w.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, res.StatusCode, status, raw)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// metric reads one sample of /metrics.
func metric(t *testing.T, base, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(getText(t, base+"/metrics"))
	if m == nil {
		t.Fatalf("/metrics lacks %s", name)
	}
	return m[1]
}

// TestSessionsAcrossTheServer runs the real server against a simulated device: five
// executions wait for one login; editing, deactivating or re-tokening the credential
// set and clearing the device's host key each close the kept session at once (the
// device sees its connection go), the next execution logs in again; a stop closes the
// session too.
func TestSessionsAcrossTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("real process: not in -short")
	}
	l := newLab(t, 0)
	s := startServer(t, l, nil)
	execute := func(logins int) {
		t.Helper()
		st, body, err := s.execute(l)
		if err != nil || st != 200 || body["success"] != true {
			t.Fatalf("execute: %d %v %v", st, body, err)
		}
		if n := l.dev.Logins(); n != logins {
			t.Fatalf("%d logins, want %d", n, logins)
		}
	}
	for range 5 {
		execute(1)
	}
	if open, reuses := metric(t, s.base, "fieldkit_ssh_sessions_open"), metric(t, s.base, "fieldkit_ssh_session_reuses_total"); open != "1" || reuses != "4" {
		t.Errorf("metrics: %s open, %s reuses", open, reuses)
	}
	closed := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for l.dev.Connections() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the device still has %d connections", what, l.dev.Connections())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	web := webLogin(t, s.base, "admin", "admin-Pa55word")
	sets := web.must(t, 200, "GET", "/ui/api/credential-sets/", "")["results"].([]any)
	setPath := fmt.Sprintf("/ui/api/credential-sets/%v/", sets[0].(map[string]any)["id"])
	logins := 1
	for _, change := range []struct{ what, method, path, body string }{
		{"edit", "PATCH", setPath, `{"description": "changed"}`},
		{"deactivate", "PATCH", setPath, `{"is_active": false}`},
		{"regenerate", "POST", setPath + "regenerate/", ``},
	} {
		m := web.must(t, 200, change.method, change.path, change.body)
		closed(change.what)
		if change.what == "deactivate" {
			if st, body, _ := s.execute(l); st != 400 {
				t.Fatalf("execute with a deactivated set: %d %v", st, body)
			}
			web.must(t, 200, "PATCH", setPath, `{"is_active": true}`)
		}
		if tok, ok := m["token"].(string); ok {
			l.credToken = tok
		}
		logins++
		execute(logins)
	}
	req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/dcim/devices/%d/host-key/", s.base, l.deviceID), nil)
	req.Header.Set("Authorization", "Token "+l.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 204 {
		t.Fatalf("clear host key: %v %v", res, err)
	}
	res.Body.Close()
	closed("host key cleared")
	execute(logins + 1)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-s.done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	closed("stop")
}
