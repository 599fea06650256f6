package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRouterStaticBesideParameter routes static names beside a parameter at the same
// position, which httprouter alone refuses, and keeps every other answer as it was.
func TestRouterStaticBesideParameter(t *testing.T) {
	rt := &Router{Log: slog.New(slog.DiscardHandler)}
	say := func(s string) HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) error {
			_, err := io.WriteString(w, s+" "+Param(r, "id"))
			return err
		}
	}
	rt.Handle("GET", "/logs/", say("list"))
	rt.Handle("GET", "/logs/:id/", say("detail"))
	rt.Handle("GET", "/logs/export/", say("export"))
	rt.Handle("GET", "/logs/statistics/", say("statistics"))
	rt.Handle("DELETE", "/logs/:id/", say("delete"))
	rt.Handle("POST", "/cmds/:id/run/", say("run"))
	rt.Handle("POST", "/cmds/bulk-run/", say("bulk"))
	rt.Fallback("/pages/", "/pages/*path", say("page"))
	h := rt.Handler()
	for _, c := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/logs/", 200, "list "},
		{"GET", "/logs/7/", 200, "detail 7"},
		{"GET", "/logs/export/", 200, "export export"},
		{"GET", "/logs/statistics/", 200, "statistics statistics"},
		{"DELETE", "/logs/export/", 200, "delete export"}, // only GET has the static name
		{"POST", "/cmds/3/run/", 200, "run 3"},
		{"POST", "/cmds/bulk-run/", 200, "bulk bulk-run"},
		{"POST", "/cmds/3/", 404, ""}, // the parameter route exists only to dispatch
		{"PUT", "/logs/7/", 405, ""},
		{"GET", "/logs/export", 301, ""},
		{"GET", "/pages/a/b", 200, "page "},
		{"POST", "/pages/a/b", 404, ""},
		{"GET", "/nothing", 404, ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
		if w.Code != c.status || (c.body != "" && w.Body.String() != c.body) {
			t.Errorf("%s %s: %d %q, want %d %q", c.method, c.path, w.Code, w.Body, c.status, c.body)
		}
	}
	if got := len(rt.Routes()); got != 7 || !rt.Routed("GET", "/logs/export/") {
		t.Errorf("route table: %v", rt.Routes())
	}
}
