//go:build !windows

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// TestAccessLogAndSecurityEvents drives a real server and reads its JSON log: one
// access line per request with the route, the user, the request id and the client; no
// query value ever (tokens, credential tokens, passwords); every refusal (401, 403,
// 429) once more at warn with the reason the client got.
func TestAccessLogAndSecurityEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("real process: not in -short")
	}
	l := newLab(t, 0)
	ro, expired := extraTokens(t, l)
	s := startServer(t, l, []string{"FIELDKIT_METRICS_TOKEN=scrape-secret"})
	type call struct {
		method, path, token, body string
		status                    int
		route, user, event, why   string
	}
	calls := []call{
		// unknown parameters are a 400 naming them; the log names them too, never their values
		{"GET", "/api/dcim/devices/?limit=5&token=s3cr3t-value&credential_token=fkc_leak", l.token, "", 400,
			"/api/dcim/devices/", "admin", "", ""},
		{"GET", "/api/dcim/devices/999999/", l.token, "", 404, "/api/dcim/devices/{id}/", "admin", "", ""},
		{"GET", "/api/dcim/sites/", strings.Repeat("0", 40), "", 401, "/api/dcim/sites/", "-", "unauthorized", "Invalid token"},
		{"GET", "/api/dcim/sites/", expired, "", 401, "/api/dcim/sites/", "-", "unauthorized", "Token expired"},
		{"POST", "/api/dcim/sites/", ro, `{"name": "x", "slug": "x"}`, 403, "/api/dcim/sites/", "reader", "forbidden",
			"This token does not have write permission."},
		{"GET", "/no/such/path?password=hunter2", "", "", 404, "unmatched", "-", "", ""},
		// The login page asks whether a session exists, and a client without a token is
		// turned away: page views and ordinary 401s, not security events.
		{"GET", "/ui/session", "", "", 401, "/ui/session", "-", "", ""},
		{"GET", "/ui/first-run", "", "", 200, "/ui/first-run", "-", "", ""},
		{"GET", "/api/dcim/sites/", "", "", 401, "/api/dcim/sites/", "-", "", ""},
	}
	for i := 0; i < 5; i++ {
		calls = append(calls, call{"POST", "/ui/login", "", `{"username": "admin", "password": "wrong-password"}`, 401,
			"/ui/login", "-", "login_failed", "Invalid username or password."})
	}
	calls = append(calls, call{"POST", "/ui/login", "", `{"username": "admin", "password": "wrong-password"}`, 429,
		"/ui/login", "-", "rate_limited", "Too many failed logins"})
	sessionID := sessionRequest(t, s.base) // before the failed logins throttle admin
	ids := make([]string, len(calls))
	for i, c := range calls {
		req, _ := http.NewRequest(c.method, s.base+c.path, strings.NewReader(c.body))
		if c.token != "" {
			req.Header.Set("Authorization", "Token "+c.token)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Fatalf("%s %s: status %d, want %d", c.method, c.path, res.StatusCode, c.status)
		}
		ids[i] = res.Header.Get("X-Request-ID")
	}
	time.Sleep(100 * time.Millisecond) // the line is written after the response
	lines := logLines(t, s.logs.String())
	for i, c := range calls {
		var access, event map[string]any
		for _, ln := range lines {
			if ln["request_id"] != ids[i] {
				continue
			}
			switch ln["msg"] {
			case "http request":
				access = ln
			case "security event":
				event = ln
			}
		}
		path, _, _ := strings.Cut(c.path, "?")
		if access == nil || access["method"] != c.method || access["path"] != path || access["status"] != float64(c.status) ||
			access["route"] != c.route || access["user"] != c.user || access["client"] != "127.0.0.1" || access["duration_ms"] == nil {
			t.Errorf("%s %s: access line %v", c.method, c.path, access)
		}
		switch {
		case c.event == "" && event != nil:
			t.Errorf("%s %s: unexpected security event %v", c.method, c.path, event)
		case c.event != "" && (event == nil || event["level"] != "WARN" || event["event"] != c.event ||
			!strings.HasPrefix(fmt.Sprint(event["reason"]), c.why)):
			t.Errorf("%s %s: security event %v, want %s: %s", c.method, c.path, event, c.event, c.why)
		}
	}
	if ln := lineOf(t, lines, sessionID); ln["user"] != "admin" || ln["route"] != "/api/dcim/sites/" || ln["status"] != float64(200) {
		t.Errorf("a request in a web session: %v", ln)
	}
	if q := lineOf(t, lines, ids[0])["query"]; q != "credential_token,limit,token" {
		t.Errorf("query names: %v", q)
	}
	all := s.logs.String()
	for _, secret := range []string{"s3cr3t-value", "fkc_leak", "hunter2", "wrong-password", l.token, ro, l.credToken, "scrape-secret"} {
		if strings.Contains(all, secret) {
			t.Errorf("the log contains the secret %q", secret)
		}
	}
	checkMetrics(t, s)
}

// lineOf is the access line of a request id.
func lineOf(t *testing.T, lines []map[string]any, id string) map[string]any {
	t.Helper()
	for _, ln := range lines {
		if ln["request_id"] == id && ln["msg"] == "http request" {
			return ln
		}
	}
	t.Fatalf("no access line for request %s", id)
	return nil
}

// extraTokens adds a read-only token of a user "reader" and an expired token of admin.
func extraTokens(t *testing.T, l *lab) (ro, expired string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(l.data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	uid, err := db.CreateUser(ctx, store.UserInput{Username: ptr("reader"), IsSuperuser: ptr(true)}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	if _, ro, err = db.CreateToken(ctx, store.TokenInput{UserID: uid}, store.All); err != nil {
		t.Fatal(err)
	}
	admin, _ := db.UserIDByName(ctx, "admin")
	if _, expired, err = db.CreateToken(ctx, store.TokenInput{UserID: admin, WriteEnabled: true, Expires: time.Now().Add(-time.Hour)}, store.All); err != nil {
		t.Fatal(err)
	}
	return ro, expired
}

// checkMetrics reads /metrics as Prometheus would: refused without the token; with it,
// the requests above by route pattern (never a raw id), the security events, the
// database's size and the build.
func checkMetrics(t *testing.T, s *server) {
	t.Helper()
	res, err := http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("/metrics without the token: %d", res.StatusCode)
	}
	req, _ := http.NewRequest("GET", s.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer scrape-secret")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	text := string(body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`fieldkit_http_requests_total{method="GET",route="/api/dcim/devices/{id}/",status="404"} 1`,
		`fieldkit_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`fieldkit_http_requests_total{method="GET",route="/api/dcim/devices/",status="400"} 1`,
		`fieldkit_http_request_duration_seconds_bucket{method="GET",route="/api/dcim/devices/",le="+Inf"} 1`,
		`fieldkit_security_events_total{kind="login_failed"} 5`,
		`fieldkit_security_events_total{kind="unauthorized"} 2`, // two tokens; neither the scrape nor the request without one
		`fieldkit_security_events_total{kind="forbidden"} 1`,
		`fieldkit_security_events_total{kind="rate_limited"} 1`,
		`fieldkit_build_info{goversion="go`,
		`fieldkit_bulk_pending_executions 0`,
		`go_goroutines `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if m := regexp.MustCompile(`(?m)^fieldkit_database_size_bytes (\d+)`).FindStringSubmatch(text); m == nil || m[1] == "0" {
		t.Errorf("database size: %v", m)
	}
	for _, route := range regexp.MustCompile(`route="([^"]*)"`).FindAllStringSubmatch(text, -1) {
		if strings.Contains(route[1], "999999") || strings.Contains(route[1], "/no/such") {
			t.Errorf("a raw path became a label: %s", route[0])
		}
	}
}

// TestMetricsOffAndHealth: metrics.enabled=false leaves no /metrics; /api/status/
// reports the database and the schedules.
func TestMetricsOffAndHealth(t *testing.T) {
	if testing.Short() {
		t.Skip("real process: not in -short")
	}
	l := newLab(t, 0)
	s := startServer(t, l, []string{"FIELDKIT_METRICS_ENABLED=false", "FIELDKIT_EXPORT_SCHEDULE=daily 02:00"})
	res, err := http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Fatalf("/metrics with metrics off: %d", res.StatusCode)
	}
	st := getJSON(t, s.base+"/api/status/", "")
	db, _ := st["database"].(map[string]any)
	sched, _ := st["scheduler"].(map[string]any)
	if db["status"] != "ok" || db["size_bytes"].(float64) <= 0 || sched["status"] != "ok" {
		t.Fatalf("status: database %v, scheduler %v", db, sched)
	}
	jobs := fmt.Sprint(sched["jobs"])
	for _, want := range []string{"session_cleanup", "log_retention", "state:off", "log_export", "daily 02:00", "every 1h"} {
		if !strings.Contains(jobs, want) {
			t.Errorf("scheduler jobs lack %q: %s", want, jobs)
		}
	}
}

// sessionRequest logs in to the web UI and reads the site list with the session cookie;
// it returns the request id of that read.
func sessionRequest(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Post(base+"/ui/login", "application/json", strings.NewReader(`{"username": "admin", "password": "admin-Pa55word"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || len(res.Cookies()) == 0 {
		t.Fatalf("login: %d", res.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"/api/dcim/sites/", nil)
	for _, c := range res.Cookies() {
		req.AddCookie(c)
	}
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("sites with the session: %d", res.StatusCode)
	}
	return res.Header.Get("X-Request-ID")
}
