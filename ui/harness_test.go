package ui

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/exec/ratelimit"
	"fieldkit/handlers"
	"fieldkit/store"
	"fieldkit/web/webtest"
)

// env is one test's server, wired as serve.go wires it: a real SQLite file, the API with
// the web interface on the same router, over real HTTP.
type env struct {
	t       *testing.T
	db      *store.DB
	web     *UI
	srv     *httptest.Server
	keyring *store.Keyring
	limiter *ratelimit.Limiter
	clock   *clock
	logs    *webtest.Buffer
}

// clock is a settable clock for the throttle and the store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type envOptions struct {
	tls      bool
	timeZone string
	static   fs.FS
	exec     handlers.ExecOptions
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := &clock{t: time.Now().UTC()}
	db.SetClock(clk.now)
	kr, err := store.NewKeyring(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	logs := &webtest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	limiter := ratelimit.New(3, 5*time.Minute)
	var api *handlers.API
	web := New(Options{DB: db, Keyring: kr, Limiter: limiter, Logger: logger, SessionHours: 2, Static: o.static, Now: clk.now,
		TimeZone: o.timeZone, Execute: func(r *http.Request) (Execution, error) {
			x, err := api.StartExecution(r)
			if err != nil {
				return nil, err
			}
			return x, nil
		}})
	ex := o.exec
	ex.Keyring, ex.Limiter = kr, limiter
	api = handlers.New(handlers.Options{DB: db, Logger: logger, Version: "test",
		Session: web.Session, Login: web.CheckLogin, UI: web.Routes, Exec: ex})
	srv := httptest.NewUnstartedServer(api)
	if o.tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return &env{t: t, db: db, web: web, srv: srv, keyring: kr, limiter: limiter, clock: clk, logs: logs}
}

// user creates a user with a password and returns its id and a write-enabled API token.
func (e *env) user(name, password string, super bool) (int64, string) {
	e.t.Helper()
	ctx := context.Background()
	id, err := e.db.CreateUser(ctx, store.UserInput{Username: &name, Password: &password, IsSuperuser: &super}, store.All)
	if err != nil {
		e.t.Fatal(err)
	}
	_, key, err := e.db.CreateToken(ctx, store.TokenInput{UserID: id, WriteEnabled: true}, store.All)
	if err != nil {
		e.t.Fatal(err)
	}
	return id, key
}

// grant gives a user a permission on objectType for actions.
func (e *env) grant(userID int64, objectType string, actions ...string) {
	e.t.Helper()
	name := objectType + " " + strings.Join(actions, ",")
	in := store.PermissionInput{Name: &name, ObjectTypes: &[]string{objectType}, Actions: &actions, Users: &[]int64{userID}}
	if _, err := e.db.CreatePermission(context.Background(), in, store.All); err != nil {
		e.t.Fatal(err)
	}
}

// exec runs a statement and returns the last insert id (inventory fixtures).
func (e *env) exec(query string, args ...any) int64 {
	e.t.Helper()
	var id int64
	err := e.db.Write(context.Background(), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(context.Background(), query, args...)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
	return id
}

// browser is a client with a cookie jar, as a browser holds a session.
type browser struct {
	e      *env
	client *http.Client
	csrf   string
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	c := *e.srv.Client() // a copy: the server's client is shared, its jar must not be
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{e: e, client: &c}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// do sends a request; body is JSON-encoded (a string is sent as is); hdr are extra
// headers, a "" value removing one the browser would send (X-CSRFToken).
func (b *browser) do(method, path string, body any, hdr ...string) resp {
	b.e.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			b.e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.e.srv.URL+path, rd)
	if err != nil {
		b.e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.csrf != "" {
		req.Header.Set("X-CSRFToken", b.csrf)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: raw}
}

// must checks the status and returns the decoded object body (nil when empty).
func (b *browser) must(status int, method, path string, body any, hdr ...string) map[string]any {
	b.e.t.Helper()
	r := b.do(method, path, body, hdr...)
	if r.status != status {
		b.e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	if len(r.body) == 0 {
		return nil
	}
	return r.json(b.e.t)
}

// login logs in and keeps the CSRF token, as the pages do.
func (b *browser) login(username, password string) map[string]any {
	b.e.t.Helper()
	m := b.must(200, "POST", "/ui/login", map[string]any{"username": username, "password": password})
	b.csrf = m["csrf_token"].(string)
	return m
}

func wantDetail(t *testing.T, r resp, status int, msg string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if got := r.json(t)["detail"]; got != msg {
		t.Fatalf("detail %q, want %q", got, msg)
	}
}
