package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
	"fieldkit/web"
)

func TestLogin(t *testing.T) {
	e := newEnv(t, envOptions{})
	aliceID, _ := e.user("alice", "correct horse", false)
	e.grant(aliceID, store.TypeUser, "view")
	bobID, _ := e.user("bob", "battery staple", false)
	inactive := false
	if err := e.db.UpdateUser(context.Background(), bobID, store.UserInput{IsActive: &inactive}, store.All); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, username, password string }{
		{"wrong password", "alice", "wrong"},
		{"unknown user", "mallory", "correct horse"},
		{"inactive user", "bob", "battery staple"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.browser()
			r := b.do("POST", "/ui/login", map[string]any{"username": tc.username, "password": tc.password})
			wantDetail(t, r, 401, "Invalid username or password.")
			if len(r.header.Values("Set-Cookie")) != 0 {
				t.Errorf("a failed login set a cookie: %v", r.header.Values("Set-Cookie"))
			}
		})
	}

	b := e.browser()
	m := b.login("alice", "correct horse")
	user := m["user"].(map[string]any)
	if user["username"] != "alice" || user["is_superuser"] != false || int64(user["id"].(float64)) != aliceID {
		t.Errorf("login user: %v", user)
	}
	if len(b.csrf) < 40 {
		t.Errorf("csrf token %q", b.csrf)
	}
	users, err := e.db.Rows(context.Background(), store.Users, []int64{aliceID})
	if err != nil || users[0]["last_login"] == nil {
		t.Errorf("last_login not set: %v %v", users, err)
	}
	s := b.must(200, "GET", "/ui/session", nil)
	if s["csrf_token"] != b.csrf || s["user"].(map[string]any)["username"] != "alice" {
		t.Errorf("session: %v", s)
	}
	// The session works on the JSON API too.
	b.must(200, "GET", "/api/users/users/", nil)
}

func TestLoginBadRequests(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("alice", "pw", false)
	b := e.browser()
	// A cross-site form posts text/plain or a form encoding: refused before any check.
	r := b.do("POST", "/ui/login", `{"username": "alice", "password": "pw"}`, "Content-Type", "text/plain")
	if r.status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain login: %d %s", r.status, r.body)
	}
	r = b.do("POST", "/ui/login", map[string]any{"username": "alice"})
	if r.status != 400 || !strings.Contains(string(r.body), `"password":["This field is required."]`) {
		t.Errorf("missing password: %d %s", r.status, r.body)
	}
	r = b.do("POST", "/ui/login", `[1]`)
	if r.status != 400 {
		t.Errorf("non-object body: %d %s", r.status, r.body)
	}
}

func TestSessionCookieFlags(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run("tls="+strconv.FormatBool(tls), func(t *testing.T) {
			e := newEnv(t, envOptions{tls: tls})
			e.user("alice", "pw", false)
			r := e.browser().do("POST", "/ui/login", map[string]any{"username": "alice", "password": "pw"})
			if r.status != 200 {
				t.Fatalf("login: %d %s", r.status, r.body)
			}
			cookies := (&http.Response{Header: r.header}).Cookies()
			if len(cookies) != 1 || cookies[0].Name != "fieldkit_session" {
				t.Fatalf("cookies: %v", r.header.Values("Set-Cookie"))
			}
			c := cookies[0]
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != tls || c.MaxAge != 2*3600 {
				t.Errorf("cookie flags: %s", r.header.Get("Set-Cookie"))
			}
			// Only the hash is stored.
			var n int
			if err := e.db.Reader().QueryRow(`SELECT count(*) FROM sessions WHERE id_hash = ?`, store.HashKey(c.Value)).Scan(&n); err != nil || n != 1 {
				t.Errorf("session row by hash: %d %v", n, err)
			}
			if err := e.db.Reader().QueryRow(`SELECT count(*) FROM sessions WHERE id_hash = ?`, c.Value).Scan(&n); err != nil || n != 0 {
				t.Errorf("session id stored in clear: %d %v", n, err)
			}
		})
	}
}

func TestLoginThrottle(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("alice", "pw", false)
	e.user("carol", "pw", false)
	b := e.browser()
	for i := 0; i < 5; i++ {
		wantDetail(t, b.do("POST", "/ui/login", map[string]any{"username": "alice", "password": "nope"}), 401, "Invalid username or password.")
	}
	// The right password is refused too while throttled: the throttle is not a hint.
	r := b.do("POST", "/ui/login", map[string]any{"username": "alice", "password": "pw"})
	wantDetail(t, r, 429, "Too many failed logins; try again in 900 s.")
	if r.header.Get("Retry-After") != "900" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// Another username from the same address is not affected.
	b.login("carol", "pw")

	e.clock.advance(10 * time.Minute)
	r = b.do("POST", "/ui/login", map[string]any{"username": "ALICE", "password": "pw"})
	if r.status != 429 || r.header.Get("Retry-After") != "300" {
		t.Errorf("throttle ignores the username's case: %d %q", r.status, r.header.Get("Retry-After"))
	}
	e.clock.advance(5*time.Minute + time.Second)
	b.login("alice", "pw")

	// A success resets the count: four more failures do not throttle.
	for i := 0; i < 4; i++ {
		b.do("POST", "/ui/login", map[string]any{"username": "alice", "password": "nope"})
	}
	b.login("alice", "pw")
}

// One address guessing a few passwords at many accounts is throttled as a whole, and a
// successful login of its own does not clear the count.
func TestLoginThrottlePerAddress(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("dave", "pw", false)
	b := e.browser()
	for i := 0; i < 19; i++ {
		wantDetail(t, b.do("POST", "/ui/login", map[string]any{"username": fmt.Sprintf("user%d", i), "password": "guess"}), 401, "Invalid username or password.")
	}
	b.login("dave", "pw") // no reset of the address's count
	wantDetail(t, b.do("POST", "/ui/login", map[string]any{"username": "user99", "password": "guess"}), 401, "Invalid username or password.")
	r := b.do("POST", "/ui/login", map[string]any{"username": "dave", "password": "pw"})
	wantDetail(t, r, 429, "Too many failed logins; try again in 900 s.")
	e.clock.advance(15*time.Minute + time.Second)
	b.login("dave", "pw")
}

func TestCSRF(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("admin", "pw", true)
	plat := e.exec(`INSERT INTO platforms (name, slug, created, last_updated) VALUES ('IOS', 'ios', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')`)
	b := e.browser()
	b.login("admin", "pw")
	cmd := func(name string) map[string]any {
		return map[string]any{"name": name, "command": "show version", "platforms": []any{plat}}
	}
	const path = "/api/plugins/toolkit/commands/"
	wantDetail(t, b.do("POST", path, cmd("a"), "X-CSRFToken", ""), 403, "CSRF Failed: CSRF token missing or incorrect.")
	wantDetail(t, b.do("POST", path, cmd("a"), "X-CSRFToken", b.csrf+"x"), 403, "CSRF Failed: CSRF token missing or incorrect.")
	b.must(201, "POST", path, cmd("a"))
	// Safe methods need no token.
	b.must(200, "GET", path, nil, "X-CSRFToken", "")
	// Another session's token does not do.
	other := e.browser()
	other.login("admin", "pw")
	wantDetail(t, b.do("POST", path, cmd("b"), "X-CSRFToken", other.csrf), 403, "CSRF Failed: CSRF token missing or incorrect.")
	if r := b.do("GET", path+"?name=b", nil); strings.Contains(string(r.body), `"name":"b"`) {
		t.Errorf("a refused POST created the command: %s", r.body)
	}
}

func TestLogout(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("alice", "pw", false)
	b := e.browser()
	b.login("alice", "pw")
	wantDetail(t, b.do("POST", "/ui/logout", nil, "X-CSRFToken", ""), 403, "CSRF Failed: CSRF token missing or incorrect.")
	b.must(200, "GET", "/ui/session", nil)

	// Keep the cookie, as a stolen copy would be kept, and check it is dead server-side.
	u := e.srv.URL + "/"
	req, _ := http.NewRequest("GET", u, nil)
	cookies := b.client.Jar.Cookies(req.URL)
	r := b.do("POST", "/ui/logout", nil)
	if r.status != 204 {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	wantDetail(t, b.do("GET", "/ui/session", nil), 401, "Authentication credentials were not provided.")
	b.client.Jar.SetCookies(req.URL, cookies)
	wantDetail(t, b.do("GET", "/ui/session", nil), 401, "Authentication credentials were not provided.")
	wantDetail(t, b.do("GET", "/api/users/users/", nil), 401, "Authentication credentials were not provided.")
	var n int
	if err := e.db.Reader().QueryRow(`SELECT count(*) FROM sessions`).Scan(&n); err != nil || n != 0 {
		t.Errorf("sessions left after logout: %d %v", n, err)
	}
	// Logging out with no session is harmless.
	if r := e.browser().do("POST", "/ui/logout", nil); r.status != 204 {
		t.Errorf("logout without a session: %d", r.status)
	}
}

func TestSessionExpiryAndDeactivation(t *testing.T) {
	e := newEnv(t, envOptions{})
	id, _ := e.user("alice", "pw", false)
	e.grant(id, store.TypeUser, "view")
	b := e.browser()
	b.login("alice", "pw")
	b.must(200, "GET", "/api/users/users/", nil)
	e.clock.advance(time.Hour)
	b.must(200, "GET", "/ui/session", nil)
	var seen string
	if err := e.db.Reader().QueryRow(`SELECT last_seen FROM sessions`).Scan(&seen); err != nil || !store.ParseStamp(seen).Equal(e.clock.now().Truncate(time.Microsecond)) {
		t.Errorf("last_seen %s, want %s (%v)", seen, e.clock.now(), err)
	}
	e.clock.advance(time.Hour) // two hours in all: SessionHours is 2
	wantDetail(t, b.do("GET", "/ui/session", nil), 401, "Authentication credentials were not provided.")
	wantDetail(t, b.do("GET", "/api/users/users/", nil), 401, "Authentication credentials were not provided.")
	if n, err := e.db.DeleteExpiredSessions(context.Background()); n != 1 || err != nil {
		t.Errorf("DeleteExpiredSessions: %d %v", n, err)
	}

	b.login("alice", "pw")
	off := false
	if err := e.db.UpdateUser(context.Background(), id, store.UserInput{IsActive: &off}, store.All); err != nil {
		t.Fatal(err)
	}
	// Deactivating ended the session itself.
	wantDetail(t, b.do("GET", "/api/users/users/", nil), 401, "Authentication credentials were not provided.")
	wantDetail(t, b.do("GET", "/ui/session", nil), 401, "Authentication credentials were not provided.")
}

func TestSessionPermissions(t *testing.T) {
	e := newEnv(t, envOptions{})
	id, _ := e.user("alice", "pw", false)
	e.user("admin", "pw", true)
	e.grant(id, store.TypeCommand, "view", "execute_show")
	e.grant(id, store.TypeDevice, "view")
	b := e.browser()
	perms := b.login("alice", "pw")["permissions"].(map[string]any)
	if got := perms[store.TypeCommand].([]any); len(got) != 2 || got[0] != "view" || got[1] != "execute_show" {
		t.Errorf("command permissions: %v", got)
	}
	if got := perms[store.TypeUser].([]any); len(got) != 0 {
		t.Errorf("user permissions: %v", got)
	}
	admin := e.browser()
	perms = admin.login("admin", "pw")["permissions"].(map[string]any)
	if got := perms[store.TypeCommand].([]any); len(got) != 6 {
		t.Errorf("superuser command permissions: %v", got)
	}
	if len(perms) != len(store.ObjectTypes()) {
		t.Errorf("permission types: %v", perms)
	}
}

// The API's token provisioning (pynetbox's create_token) checks passwords through the
// same throttle as the web login: failures on either count against both.
func TestProvisionSharesLoginThrottle(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("erin", "pw", false)
	b := e.browser()
	for i := 0; i < 3; i++ {
		wantDetail(t, b.do("POST", "/api/users/tokens/provision/", map[string]any{"username": "erin", "password": "nope"}), 401, "Invalid username/password")
	}
	for i := 0; i < 2; i++ {
		wantDetail(t, b.do("POST", "/ui/login", map[string]any{"username": "erin", "password": "nope"}), 401, "Invalid username or password.")
	}
	r := b.do("POST", "/api/users/tokens/provision/", map[string]any{"username": "erin", "password": "pw"})
	wantDetail(t, r, 429, "Too many failed logins; try again in 900 s.")
	e.clock.advance(15*time.Minute + time.Second)
	r = b.do("POST", "/api/users/tokens/provision/", map[string]any{"username": "erin", "password": "pw"})
	if r.status != 201 {
		t.Fatalf("provision after the window: %d %s", r.status, r.body)
	}
}

// A web request whose browser went away (a closed tab, a page left mid-load) is logged
// at info, never as a failed request at error.
func TestClientGoneIsNotAnError(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("alice", "correct horse", false)
	b := e.browser()
	b.login("alice", "correct horse")
	u, _ := url.Parse(e.srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("GET", "/ui/api/credential-sets/", nil).WithContext(ctx)
	for _, c := range b.client.Jar.Cookies(u) {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	e.srv.Config.Handler.ServeHTTP(rec, req)
	if rec.Code != web.StatusClientClosed {
		t.Errorf("status %d, want %d: %s", rec.Code, web.StatusClientClosed, rec.Body)
	}
	if logs := e.logs.String(); strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, `level=INFO msg="request abandoned by the client"`) {
		t.Errorf("log:\n%s", logs)
	}
}

// An empty install's login page can say how to make the first user; once one exists the
// answer says only that.
func TestFirstRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	b := e.browser()
	if m := b.must(200, "GET", "/ui/first-run", nil); m["needs_first_user"] != true {
		t.Fatalf("empty install: %v", m)
	}
	e.user("root", "pw", true)
	if m := b.must(200, "GET", "/ui/first-run", nil); m["needs_first_user"] != false || len(m) != 1 {
		t.Fatalf("after the first user: %v", m)
	}
}

// The session names the server's time zone and whom to ask for permissions: the active
// superusers, never an inactive one or a plain user.
func TestSessionNamesZoneAndAdministrators(t *testing.T) {
	e := newEnv(t, envOptions{timeZone: "Europe/Paris"})
	ctx := context.Background()
	rootID, _ := e.user("root", "pw", true)
	first, last, mail := "Ada", "Admin", "ada@example.net"
	if err := e.db.UpdateUser(ctx, rootID, store.UserInput{FirstName: &first, LastName: &last, Email: &mail}, store.All); err != nil {
		t.Fatal(err)
	}
	oldID, _ := e.user("old", "pw", true)
	inactive := false
	if err := e.db.UpdateUser(ctx, oldID, store.UserInput{IsActive: &inactive}, store.All); err != nil {
		t.Fatal(err)
	}
	e.user("alice", "pw", false)
	b := e.browser()
	b.login("alice", "pw")
	s := b.must(200, "GET", "/ui/session", nil)
	if s["time_zone"] != "Europe/Paris" {
		t.Errorf("time_zone %v", s["time_zone"])
	}
	got := fmt.Sprint(s["administrators"])
	if got != "[map[email:ada@example.net name:Ada Admin username:root]]" {
		t.Errorf("administrators %s", got)
	}
	for _, p := range s["permissions"].(map[string]any) {
		if len(p.([]any)) != 0 {
			t.Errorf("alice holds nothing, the hint says %v", s["permissions"])
		}
	}
}
