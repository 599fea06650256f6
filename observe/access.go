// Package observe makes the server visible to operators: one access-log line per
// request, security events at warn with their reason, and the Prometheus metrics served
// at /metrics. The router names the route pattern of a request (Route) and the
// authentication its user (SetUser); everything else is read from the response.
package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// note is what the handlers tell about a request while serving it.
type note struct {
	route string // the route pattern, "/api/dcim/devices/{id}/"
	user  string // the authenticated username
}

type ctxKey struct{}

func noteOf(r *http.Request) *note {
	n, _ := r.Context().Value(ctxKey{}).(*note)
	return n
}

// SetUser records the authenticated username of the request.
func SetUser(r *http.Request, username string) {
	if n := noteOf(r); n != nil {
		n.user = username
	}
}

// Route wraps a handler so that requests it serves carry its route pattern.
func Route(pattern string, h http.Handler) http.Handler {
	p := Pattern(pattern)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := noteOf(r); n != nil {
			n.route = p
		}
		h.ServeHTTP(w, r)
	})
}

// Pattern writes httprouter's parameters (":id", "*path") as "{id}", "{path...}".
func Pattern(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		switch {
		case strings.HasPrefix(s, ":"):
			parts[i] = "{" + s[1:] + "}"
		case strings.HasPrefix(s, "*"):
			parts[i] = "{" + s[1:] + "...}"
		}
	}
	return strings.Join(parts, "/")
}

// Unmatched is the route label of a request no route answered.
const Unmatched = "unmatched"

// Access wraps the whole server: after each request it writes one access-log line,
// a warn line for a security event (401, 403, 429) with the reason the client was
// given, and counts the request in m (nil: no metrics).
func Access(next http.Handler, log *slog.Logger, m *Metrics) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		n := &note{}
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), ctxKey{}, n)))
		d := time.Since(start)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		route := n.route
		if route == "" {
			route = Unmatched
		}
		user, id := n.user, w.Header().Get("X-Request-ID")
		if user == "" {
			user = "-"
		}
		if id == "" {
			id = "-" // a request that never reached the router
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("query", QueryNames(r.URL.RawQuery)), slog.Int("status", status),
			slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.Int64("bytes", rec.bytes),
			slog.String("user", user), slog.String("request_id", id),
			slog.String("client", clientAddr(r)), slog.String("route", route),
		}
		log.LogAttrs(r.Context(), slog.LevelInfo, "http request", attrs...)
		if kind := securityKind(status, route, r.Header.Get("Authorization") != ""); kind != "" {
			log.LogAttrs(r.Context(), slog.LevelWarn, "security event", append([]slog.Attr{
				slog.String("event", kind), slog.String("reason", reason(rec.body.Bytes()))}, attrs...)...)
			m.securityEvent(kind)
		}
		m.request(r.Method, route, status, d)
	})
}

// QueryNames is the access log's rule for query strings: parameter names only, sorted,
// never their values, which may be secrets (a token, a credential token, a password).
func QueryNames(raw string) string {
	if raw == "" {
		return ""
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(raw, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if k != "" {
			seen[k] = true
		}
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// LoginRoute is the web UI's login; a 401 there is a failed login.
const LoginRoute = "/ui/login"

// securityKind is the kind of security event a response is, or "" for none. A 401
// is one only when credentials were refused: a wrong password at the login, or a
// token (an Authorization header) invalid or expired. A request that presented none —
// the login page asking whether a session exists, a web session that ended, a client
// that sent no token — is an ordinary 401: logging each as a security event buried the
// few that matter under page views.
func securityKind(status int, route string, presented bool) string {
	switch {
	case status == http.StatusUnauthorized && route == LoginRoute:
		return "login_failed"
	case status == http.StatusUnauthorized && presented:
		return "unauthorized"
	case status == http.StatusUnauthorized:
		return ""
	case status == http.StatusForbidden:
		return "forbidden"
	case status == http.StatusTooManyRequests:
		return "rate_limited"
	}
	return ""
}

// reason is what the client was told: the body's "detail", or a rate limit's reason.
func reason(body []byte) string {
	var b struct {
		Detail  string `json:"detail"`
		Error   string `json:"error"`
		Details struct {
			Reason string `json:"reason"`
		} `json:"details"`
	}
	if json.Unmarshal(body, &b) != nil {
		return "-"
	}
	switch {
	case b.Details.Reason != "":
		return b.Details.Reason
	case b.Detail != "":
		return b.Detail
	case b.Error != "":
		return b.Error
	}
	return "-"
}

// clientAddr is the peer's address; X-Forwarded-For is not trusted.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// recorder keeps the status and size of a response, and the start of the body of a
// security event's response (its reason).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	body   bytes.Buffer
}

const reasonBytes = 2048

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if securityKind(r.status, "", true) != "" && r.body.Len() < reasonBytes {
		r.body.Write(p[:min(len(p), reasonBytes-r.body.Len())])
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

// Flush lets streamed responses (exports) through.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the real writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// statusLabel is a status code as a label.
func statusLabel(code int) string { return strconv.Itoa(code) }
