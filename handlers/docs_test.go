package handlers

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
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
	// Go's transport would ask for gzip and decompress on its own, hiding whether the
	// server compressed: ask by hand, with that off.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(acceptEncoding string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/docs/swagger-ui-bundle.js", nil)
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, body
	}
	res, gz := get("gzip, deflate")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Content-Type"), "javascript") {
		t.Fatalf("with gzip: %d %v", res.StatusCode, res.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatalf("the body is not gzip: %v", err)
	}
	js, err := io.ReadAll(zr)
	if err != nil || !bytes.Contains(js, []byte("SwaggerUIBundle")) {
		t.Fatalf("decompressed: %v %.100s", err, js)
	}
	res, plain := get("")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || !bytes.Equal(plain, js) {
		t.Fatalf("without gzip: %d %v, %d bytes, want the %d decompressed ones", res.StatusCode, res.Header, len(plain), len(js))
	}
}
