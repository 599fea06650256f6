package observe

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestQueryNames(t *testing.T) {
	cases := map[string]string{
		"":                                  "",
		"token=abc&limit=5":                 "limit,token",
		"password=x&password=y":             "password",
		"credential_token=fkc_1&=bare&flag": "credential_token,flag",
		"q=%3Dsecret%26token%3Dx&offset=10": "offset,q",
		"a=1;b=2":                           "a",
		"name__ic=core&ordering=-name&brief=true": "brief,name__ic,ordering",
	}
	for raw, want := range cases {
		if got := QueryNames(raw); got != want {
			t.Errorf("QueryNames(%q) = %q, want %q", raw, got, want)
		}
		for _, secret := range []string{"abc", "fkc_1", "secret", "core"} {
			if strings.Contains(QueryNames(raw), secret) {
				t.Errorf("QueryNames(%q) shows the value %q", raw, secret)
			}
		}
	}
}

func TestPattern(t *testing.T) {
	cases := map[string]string{
		"/api/dcim/devices/:id/": "/api/dcim/devices/{id}/",
		"/ui/*path":              "/ui/{path...}",
		"/api/status/":           "/api/status/",
		"/api/plugins/toolkit/commands/:id/execute/": "/api/plugins/toolkit/commands/{id}/execute/",
	}
	for in, want := range cases {
		if got := Pattern(in); got != want {
			t.Errorf("Pattern(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAccessReasons: the security event carries what the client was told, from the
// body of a 401/403/429, and a streamed response still flushes through the recorder.
func TestAccessReasons(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	cases := []struct {
		status int
		body   string
		want   string
		noAuth bool // the request presented no credentials
	}{
		{401, `{"detail":"Token expired"}`, `event=unauthorized reason="Token expired"`, false},
		{401, `{"detail":"Authentication credentials were not provided."}`, ``, true},
		{429, `{"error":"Rate limit exceeded","details":{"reason":"Device rate limit exceeded: 10/10"}}`, `event=rate_limited reason="Device rate limit exceeded: 10/10"`, false},
		{403, `not json`, `event=forbidden reason=-`, false},
		{200, `{"detail":"fine"}`, ``, false},
	}
	for _, c := range cases {
		logs.Reset()
		h := Access(Route("/api/x/:id/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			SetUser(r, "alice")
			w.WriteHeader(c.status)
			w.Write([]byte(c.body))
			http.NewResponseController(w).Flush()
		})), log, nil)
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/x/7/?token=t0p", nil)
		if !c.noAuth {
			req.Header.Set("Authorization", "Token 0123")
		}
		h.ServeHTTP(rec, req)
		out := logs.String()
		if !strings.Contains(out, `route=/api/x/{id}/`) || !strings.Contains(out, "user=alice") || strings.Contains(out, "t0p") || !rec.Flushed {
			t.Errorf("%d: %s (flushed %v)", c.status, out, rec.Flushed)
		}
		if c.want == "" && strings.Contains(out, "security event") || c.want != "" && !strings.Contains(out, c.want) {
			t.Errorf("%d: want %q in\n%s", c.status, c.want, out)
		}
	}
}

// BenchmarkAccess is the cost the access log and the request metrics add to a request.
func BenchmarkAccess(b *testing.B) {
	ok := Route("/api/dcim/devices/:id/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id":1}`))
	}))
	req := httptest.NewRequest("GET", "/api/dcim/devices/1/?brief=true", nil)
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", ok},
		{"access+metrics", Access(ok, slog.New(slog.NewJSONHandler(discard{}, nil)), NewMetrics("bench", Files{}))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				bc.h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
