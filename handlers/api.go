// Package handlers serves FieldKit's HTTP API: NetBox-style REST endpoints for the
// toolkit plugin, the embedded inventory, users and permissions, and the API readers.
package handlers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"

	"fieldkit/handlers/httpjson"
	"fieldkit/observe"
	"fieldkit/store"
)

// APIVersion is sent in the API-Version header, as NetBox does.
const APIVersion = "4.1"

// Options configures the API.
type Options struct {
	DB       *store.DB
	Logger   *slog.Logger
	Version  string         // FieldKit's version, for /api/status/
	Location *time.Location // time zone of export date filters; nil = UTC
	// Session, when set, authenticates a request by the web UI's session cookie. It
	// returns ok=false when the request carries no session; csrfOK tells whether an
	// unsafe request carried a valid CSRF token.
	Session func(r *http.Request) (p store.Principal, ok, csrfOK bool, err error)
	// Login, when set, checks a username and password for the token provisioning
	// endpoint as the web login does (with its throttle): store.ErrBadLogin or
	// store.ErrInactive for a wrong one, an *httpjson.Error (429) when throttled.
	Login func(r *http.Request, username, password string) (store.Principal, error)
	// Exec configures command execution.
	Exec ExecOptions
	// Extra registers routes owned by other packages (the web UI) on the same router.
	Extra func(rt *httprouter.Router)
	// Observer is told of executions, rate-limit refusals and the bulk queue; nil: none.
	Observer Observer
	// Health adds the server's health (database, schedules) to /api/status/; nil: none.
	Health func(ctx context.Context) map[string]any
}

// API is the HTTP handler.
type API struct {
	Options
	router  *httprouter.Router
	started time.Time
	warned  sync.Map  // constraint problems already logged
	lists   listCache // rendered list pages of Cache resources
	// routeList records every (method, path) routed, for the schema's completeness test.
	routeList [][2]string
}

// New builds the API with every route registered.
func New(o Options) *API {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	a := &API{Options: o, started: time.Now()}
	rt := httprouter.New()
	rt.RedirectTrailingSlash = true
	rt.RedirectFixedPath = false
	rt.HandleMethodNotAllowed = true
	rt.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.writeError(w, r, errNotFound()) })
	rt.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.writeError(w, r, errMethod()) })
	rt.PanicHandler = a.recovered
	a.router = rt
	a.routes(rt)
	if o.Extra != nil {
		o.Extra(rt)
	}
	return a
}

// ServeHTTP adds the headers every response carries, then routes.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-ID")
	if !validRequestID(id) {
		id = newRequestID()
	}
	r = r.WithContext(context.WithValue(r.Context(), ctxRequestID, id))
	w.Header().Set("X-Request-ID", id)
	w.Header().Set("API-Version", APIVersion)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := httpjson.CheckQuery(r); err != nil {
		a.writeError(w, r, err)
		return
	}
	a.router.ServeHTTP(w, r)
}

func (a *API) recovered(w http.ResponseWriter, r *http.Request, v any) {
	a.Logger.Error("panic serving request", "request_id", requestID(r), "path", r.URL.Path,
		"panic", v, "stack", string(debug.Stack()))
	httpjson.Write(w, http.StatusInternalServerError, map[string]string{"detail": "Internal server error", "request_id": requestID(r)})
}

type ctxKey int

const (
	ctxRequestID ctxKey = iota
	ctxPrincipal
	ctxSession // the request was authenticated by the web UI's session, not a token
)

func requestID(r *http.Request) string {
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

// viaSession reports whether the request came from the web UI's session.
func viaSession(r *http.Request) bool {
	v, _ := r.Context().Value(ctxSession).(bool)
	return v
}

// principal is the authenticated user of the request.
func principal(r *http.Request) store.Principal {
	p, _ := r.Context().Value(ctxPrincipal).(store.Principal)
	return p
}

// handlerFunc is the one handler shape: an error return is mapped to a response once.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// public adapts a handler that needs no authentication.
func (a *API) public(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.writeError(w, r, err)
		}
	})
}

// authed adapts a handler that needs an authenticated, active user.
func (a *API) authed(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.authenticate(r)
		if p.Username != "" {
			observe.SetUser(r, p.Username) // also when refused: a read-only token's write
		}
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		ctx := context.WithValue(r.Context(), ctxPrincipal, p)
		if r.Header.Get("Authorization") == "" {
			ctx = context.WithValue(ctx, ctxSession, true)
		}
		r = r.WithContext(ctx)
		if err := h(w, r); err != nil {
			a.writeError(w, r, err)
		}
	})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// authenticate reads "Authorization: Token <key>" (or Bearer), else the UI session.
func (a *API) authenticate(r *http.Request) (store.Principal, error) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if h == "" {
		return a.sessionPrincipal(r)
	}
	scheme, key, _ := strings.Cut(h, " ")
	key = strings.TrimSpace(key)
	if (!strings.EqualFold(scheme, "Token") && !strings.EqualFold(scheme, "Bearer")) || key == "" {
		return store.Principal{}, errUnauthorized("Invalid token header.")
	}
	p, err := a.DB.Authenticate(r.Context(), key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return p, errUnauthorized("Invalid token")
	case errors.Is(err, store.ErrTokenExpired):
		return p, errUnauthorized("Token expired")
	case errors.Is(err, store.ErrInactive):
		return p, errUnauthorized("User inactive or deleted.")
	case err != nil:
		return p, err
	}
	if !p.WriteEnabled && !safeMethod(r.Method) {
		return p, errForbidden("This token does not have write permission.")
	}
	return p, nil
}

func (a *API) sessionPrincipal(r *http.Request) (store.Principal, error) {
	if a.Session == nil {
		return store.Principal{}, errUnauthorized("Authentication credentials were not provided.")
	}
	p, ok, csrfOK, err := a.Session(r)
	switch {
	case errors.Is(err, store.ErrInactive):
		return p, errUnauthorized("User inactive or deleted.")
	case err != nil:
		return p, err
	case !ok:
		return p, errUnauthorized("Authentication credentials were not provided.")
	case !safeMethod(r.Method) && !csrfOK:
		return p, errForbidden("CSRF Failed: CSRF token missing or incorrect.")
	}
	return p, nil
}

// scope is the principal's scope for an action, with malformed constraints logged once.
func (a *API) scope(r *http.Request, objectType, action string) (store.Scope, error) {
	s, err := a.DB.Scope(r.Context(), principal(r), objectType, action)
	if err != nil {
		return s, err
	}
	for _, p := range s.Problems {
		if _, seen := a.warned.LoadOrStore(p, true); !seen {
			a.Logger.Warn("permission constraint grants nothing", "problem", p)
		}
	}
	return s, nil
}

// param reads a path parameter.
func param(r *http.Request, name string) string {
	return httprouter.ParamsFromContext(r.Context()).ByName(name)
}
