package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"time"

	"fieldkit/observe"
	"fieldkit/store"
)

type ctxKey int

const (
	ctxRequestID ctxKey = iota
	ctxUser
)

// WithRequestID gives every request an id: the client's X-Request-ID when it is
// printable ASCII of at most 200 characters, else a new random one. The response
// carries it, and RequestID reads it.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-ID", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxRequestID, id)))
	})
}

// RequestID is the request's id (see WithRequestID), "" outside it.
func RequestID(r *http.Request) string {
	id, _ := r.Context().Value(ctxRequestID).(string)
	return id
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 200 {
		return false
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Scheme is the request's scheme as the client used it: https behind TLS, or when a
// proxy in front says so (X-Forwarded-Proto).
func Scheme(r *http.Request) string {
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		return "https"
	}
	return "http"
}

// URL is the absolute URL of path (which starts with /) on this server, as the client
// reached it: its scheme and Host.
func URL(r *http.Request, path string) string {
	return Scheme(r) + "://" + r.Host + path
}

// WithUser records the request's authenticated user: the access log and the metrics
// name it from now on (also when the request is then refused), and the returned request
// carries it for User.
func WithUser(r *http.Request, p store.Principal) *http.Request {
	observe.SetUser(r, p.Username)
	return r.WithContext(context.WithValue(r.Context(), ctxUser, p))
}

// ContextWithUser is ctx carrying p for User: work done for a user outside a request
// (an import run from the command line goes through the API's checks as that user).
func ContextWithUser(ctx context.Context, p store.Principal) context.Context {
	return context.WithValue(ctx, ctxUser, p)
}

// User is the authenticated user of a request's context (see WithUser), the zero
// Principal before authentication.
func User(ctx context.Context) store.Principal {
	p, _ := ctx.Value(ctxUser).(store.Principal)
	return p
}

// ClientAddr is the address the request came from (the peer's IP, without its port).
// X-Forwarded-For is not trusted: anyone could send it.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// SafeMethod reports whether a method only reads (GET, HEAD, OPTIONS): one a read-only
// token may send, and one that needs no CSRF token.
func SafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// Stamp formats a time as the API shows it: RFC 3339, UTC, microseconds; zero is null.
func Stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(store.TimeFormat)
}
