package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"fieldkit/store"
)

// env is one test's server: a real SQLite file, the real API over real HTTP.
type env struct {
	t     testing.TB
	db    *store.DB
	api   *API
	srv   *httptest.Server
	admin string // a superuser's token
	logs  *bytes.Buffer

	schemaDoc *apiDocument // the served schema responses are validated against (conformance_test.go)
}

func newEnv(t testing.TB, tune ...func(db *store.DB, o *Options)) *env {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	logs := &bytes.Buffer{}
	o := Options{DB: db, Logger: slog.New(slog.NewTextHandler(logs, nil)), Version: "test"}
	for _, f := range tune {
		f(db, &o)
	}
	api := New(o)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	e := &env{t: t, db: db, api: api, srv: srv, logs: logs}
	e.admin = e.user("admin", true)
	return e
}

// user creates a user (superuser or not) and returns a write-enabled token for it.
func (e *env) user(name string, super bool) string {
	e.t.Helper()
	ctx := context.Background()
	id, err := e.db.CreateUser(ctx, store.UserInput{Username: &name, IsSuperuser: &super}, store.All)
	if err != nil {
		e.t.Fatal(err)
	}
	_, key, err := e.db.CreateToken(ctx, store.TokenInput{UserID: id, WriteEnabled: true}, store.All)
	if err != nil {
		e.t.Fatal(err)
	}
	return key
}

// grant gives user a permission on objectType for actions, with optional constraints.
func (e *env) grant(username, objectType string, actions []string, constraints string) {
	e.t.Helper()
	ctx := context.Background()
	uid, err := e.db.UserIDByName(ctx, username)
	if err != nil {
		e.t.Fatal(err)
	}
	name := username + " " + objectType + " " + strings.Join(actions, ",") + " " + constraints
	in := store.PermissionInput{Name: &name, ObjectTypes: &[]string{objectType}, Actions: &actions, Users: &[]int64{uid}}
	if constraints != "" {
		raw := json.RawMessage(constraints)
		in.Constraints = &raw
	}
	if _, err := e.db.CreatePermission(ctx, in, store.All); err != nil {
		e.t.Fatal(err)
	}
}

// resp is a decoded response.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// do sends a request with a token ("" = none) and an optional JSON body (a string is
// sent as is).
func (e *env) do(method, path, token string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	e.conform(method, path, res.StatusCode, res.Header, raw)
	return resp{status: res.StatusCode, header: res.Header, body: raw}
}

// must checks the status and returns the decoded object body.
func (e *env) must(status int, method, path, token string, body any) map[string]any {
	e.t.Helper()
	r := e.do(method, path, token, body)
	if r.status != status {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	if len(r.body) == 0 {
		return nil
	}
	return r.json(e.t)
}

// ids returns the ids of a list response's results, in order.
func ids(m map[string]any) []int {
	var out []int
	for _, x := range m["results"].([]any) {
		out = append(out, int(x.(map[string]any)["id"].(float64)))
	}
	return out
}

func eqInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
