package handlers

import (
	"regexp"
	"strings"
	"testing"
)

var (
	assetRef   = regexp.MustCompile(`(?:src|href)="([^"#]+)"`)
	absoluteRE = regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
)

// TestReadersOffline: both readers answer HTML without a token, every asset they name is
// served from this server, and neither the pages nor our scripts name another host.
func TestReadersOffline(t *testing.T) {
	e := newEnv(t)
	for _, page := range []string{"/api/docs/", "/api/redoc/"} {
		t.Run(page, func(t *testing.T) {
			r := e.do("GET", page, "", nil)
			if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
				t.Fatalf("%d %s", r.status, r.header.Get("Content-Type"))
			}
			if u := absoluteRE.FindString(string(r.body)); u != "" {
				t.Errorf("page names another host: %s", u)
			}
			if !strings.Contains(r.header.Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("no same-origin CSP: %q", r.header.Get("Content-Security-Policy"))
			}
			refs := assetRef.FindAllStringSubmatch(string(r.body), -1)
			if len(refs) < 2 {
				t.Fatalf("page loads no assets: %s", r.body)
			}
			for _, m := range refs {
				u := m[1]
				if !strings.HasPrefix(u, "/api/") {
					t.Errorf("asset %q is not on this server", u)
					continue
				}
				a := e.do("GET", u, "", nil)
				if a.status != 200 || len(a.body) == 0 {
					t.Errorf("asset %s: %d", u, a.status)
				}
				// swagger-ui's bundle holds URLs in licences and examples; it fetches
				// nothing by itself once validatorUrl is off. Our own files hold none.
				if !strings.Contains(u, "swagger-ui") && !strings.Contains(u, "favicon") {
					if x := absoluteRE.FindString(string(a.body)); x != "" {
						t.Errorf("%s names another host: %s", u, x)
					}
				}
			}
		})
	}
	init := e.do("GET", "/api/docs/init.js", "", nil)
	if !strings.Contains(string(init.body), "validatorUrl: null") || !strings.Contains(string(init.body), "/api/schema/") {
		t.Errorf("swagger-ui start-up: %s", init.body)
	}
	for _, missing := range []string{"/api/docs/nope.js", "/api/redoc/nope.css", "/api/redoc/index.html"} {
		if r := e.do("GET", missing, "", nil); r.status != 404 {
			t.Errorf("%s: %d", missing, r.status)
		}
	}
}

// TestSwaggerAssetsGzip: swagger-ui's files go out compressed when the client accepts it
// and plain otherwise.
func TestSwaggerAssetsGzip(t *testing.T) {
	e := newEnv(t)
	// Go's client asks for gzip and decompresses transparently: the body is JavaScript.
	r := e.do("GET", "/api/docs/swagger-ui-bundle.js", "", nil)
	if r.status != 200 || !strings.Contains(string(r.body[:200]), "SwaggerUIBundle") && !strings.Contains(string(r.body[:400]), "function") {
		t.Fatalf("bundle: %d %.100s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("content type %q", ct)
	}
}
