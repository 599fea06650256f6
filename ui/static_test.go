package ui

import (
	"strings"
	"testing"
	"testing/fstest"
)

var testStatic = fstest.MapFS{
	"index.html":    {Data: []byte("<!doctype html><title>FieldKit</title>")},
	"js/app.js":     {Data: []byte("console.log('fieldkit')")},
	"css/style.css": {Data: []byte("body{}")},
	"img/logo.svg":  {Data: []byte("<svg/>")},
	"fonts/x.woff2": {Data: []byte("wOF2")},
}

func TestPagesAndAssets(t *testing.T) {
	e := newEnv(t, envOptions{static: testStatic})
	b := e.browser()
	r := b.do("GET", "/", nil)
	if r.status != 302 || r.header.Get("Location") != "/ui/" {
		t.Errorf("/: %d %q", r.status, r.header.Get("Location"))
	}
	if r := b.do("GET", "/ui", nil); r.status != 301 || r.header.Get("Location") != "/ui/" {
		t.Errorf("/ui: %d %q", r.status, r.header.Get("Location"))
	}
	for _, path := range []string{"/ui/", "/ui/devices/5", "/ui/login", "/ui/commands/new/", "/ui/statistics"} {
		r := b.do("GET", path, nil)
		if r.status != 200 || string(r.body) != string(testStatic["index.html"].Data) {
			t.Errorf("%s: %d %s", path, r.status, r.body)
			continue
		}
		if r.header.Get("Content-Type") != "text/html; charset=utf-8" || r.header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s headers: %v", path, r.header)
		}
		wantSecurityHeaders(t, path, r)
	}
	for path, ct := range map[string]string{
		"/ui/static/js/app.js":     "text/javascript; charset=utf-8",
		"/ui/static/css/style.css": "text/css; charset=utf-8",
		"/ui/static/img/logo.svg":  "image/svg+xml",
		"/ui/static/fonts/x.woff2": "font/woff2",
	} {
		r := b.do("GET", path, nil)
		if r.status != 200 || r.header.Get("Content-Type") != ct || r.header.Get("ETag") == "" ||
			r.header.Get("Cache-Control") != "public, no-cache" {
			t.Errorf("%s: %d %v", path, r.status, r.header)
		}
		wantSecurityHeaders(t, path, r)
		if r2 := b.do("GET", path, nil, "If-None-Match", r.header.Get("ETag")); r2.status != 304 {
			t.Errorf("%s revalidation: %d", path, r2.status)
		}
	}
	if r := b.do("GET", "/ui/static", nil); r.status != 301 || r.header.Get("Location") != "/ui/static/" {
		t.Errorf("/ui/static: %d %q", r.status, r.header.Get("Location"))
	}
	// A missing asset is a 404, not the index page (a broken script tag must show).
	for _, path := range []string{"/ui/static/js/missing.js", "/ui/static/js/", "/ui/static/", "/ui/static/../index.html"} {
		if r := b.do("GET", path, nil); r.status != 404 {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
	if r := b.do("HEAD", "/ui/devices/", nil); r.status != 200 {
		t.Errorf("HEAD page: %d", r.status)
	}
	// JSON paths under /ui/api/ never fall back to the page.
	if r := b.do("GET", "/ui/api/nothing/", nil); r.status != 404 || !strings.Contains(string(r.body), "Not found.") {
		t.Errorf("unknown /ui/api/ path: %d %s", r.status, r.body)
	}
	if r := b.do("POST", "/ui/session", nil); r.status != 405 {
		t.Errorf("POST /ui/session: %d %s", r.status, r.body)
	}
	// The API's own responses are unaffected.
	if r := b.do("GET", "/api/", nil); r.status != 401 && r.status != 200 {
		t.Errorf("/api/: %d", r.status)
	}
}

func TestEmbeddedIndex(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := e.browser().do("GET", "/ui/", nil)
	if r.status != 200 || !strings.Contains(strings.ToLower(string(r.body)), "<html") {
		t.Errorf("embedded index.html: %d %s", r.status, r.body)
	}
}

func wantSecurityHeaders(t *testing.T, path string, r resp) {
	t.Helper()
	want := map[string]string{
		"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "same-origin",
		"X-Content-Type-Options":  "nosniff",
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", path, k, got, v)
		}
	}
}
