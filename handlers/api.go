// Package handlers serves FieldKit's HTTP API: NetBox-style REST endpoints for the
// toolkit plugin, the embedded inventory, users and permissions, and the API readers.
package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"fieldkit/store"
	"fieldkit/web"
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
	// store.ErrInactive for a wrong one, a *web.Error (429) when throttled.
	Login func(r *http.Request, username, password string) (store.Principal, error)
	// NetBox syncs the inventory from a central NetBox; nil: no sync.
	NetBox NetBoxSyncer
	// Exec configures command execution.
	Exec ExecOptions
	// Backup configures what a config backup keeps.
	Backup BackupOptions
	// UI registers the web interface's routes (ui.UI.Routes) on the same router.
	UI func(rt *web.Router)
	// Metrics serves /metrics (observe.Metrics.Handler); nil: no such route.
	Metrics http.Handler
	// Observer is told of executions, rate-limit refusals and the bulk queue; nil: none.
	Observer Observer
	// Schedules runs the users' schedules; nil: none run (a run-now answers 503).
	Schedules Scheduler
	// Events matches events against event rules; told after each execution's log.
	Events Events
	// BaseURL is where the server answers ("http://127.0.0.1:8080"), for the URLs in
	// events' data, made outside any request.
	BaseURL string
	// Health adds the server's health (database, schedules) to /api/status/; nil: none.
	Health func(ctx context.Context) map[string]any
	// BodyTimeout is how long a client may take to send a request body; 0 =
	// web.BodyTimeout.
	BodyTimeout time.Duration
	// Hub makes this FieldKit a hub (hub.serve): it takes its sites' pushes and serves
	// its sites; nil: no such routes.
	Hub HubServer
	// HubCredentialSet names the service credential set the jobs of this site's hub run
	// with (hub.credential_set); "": they are refused.
	HubCredentialSet string
}

// API is the HTTP handler.
type API struct {
	Options
	router  *web.Router
	handler http.Handler
	started time.Time
	warned  sync.Map  // constraint problems already logged
	lists   listCache // rendered list pages of Cache resources
	// publicPaths are the paths served without authentication (GET), for the schema.
	publicPaths map[string]bool
}

// New builds the API with every route registered.
func New(o Options) *API {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	a := &API{Options: o, started: time.Now(), router: &web.Router{Log: o.Logger, BodyTimeout: o.BodyTimeout},
		publicPaths: map[string]bool{}}
	a.routes(a.router)
	a.handler = web.WithRequestID(a.router.Handler())
	return a
}

// ServeHTTP adds the headers every response carries, then routes.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("API-Version", APIVersion)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	a.handler.ServeHTTP(w, r)
}

type ctxKey int

const ctxSession ctxKey = iota // the request was authenticated by the web UI's session, not a token

// viaSession reports whether the request came from the web UI's session.
func viaSession(r *http.Request) bool {
	v, _ := r.Context().Value(ctxSession).(bool)
	return v
}

// authed wraps a handler that needs an authenticated, active user.
func (a *API) authed(h web.HandlerFunc) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		// One read of the database's generation: the request's checks may then be
		// answered from the store's cache of them, exactly as the database stands.
		ctx, err := a.DB.Fresh(r.Context())
		if err != nil {
			return err
		}
		r = r.WithContext(ctx)
		p, err := a.authenticate(r)
		if p.Username != "" {
			r = web.WithUser(r, p) // named in the access log also when refused: a read-only token's write
		}
		if err != nil {
			return err
		}
		if r.Header.Get("Authorization") == "" {
			r = r.WithContext(context.WithValue(r.Context(), ctxSession, true))
		}
		return h(w, r)
	}
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
		return store.Principal{}, web.Unauthorized("Invalid token header.")
	}
	p, err := a.DB.Authenticate(r.Context(), key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return p, web.Unauthorized("Invalid token")
	case errors.Is(err, store.ErrTokenExpired):
		return p, web.Unauthorized("Token expired")
	case errors.Is(err, store.ErrInactive):
		return p, web.Inactive()
	case err != nil:
		return p, err
	}
	if !p.WriteEnabled && !web.SafeMethod(r.Method) {
		return p, web.Forbidden("This token does not have write permission.")
	}
	return p, nil
}

func (a *API) sessionPrincipal(r *http.Request) (store.Principal, error) {
	if a.Session == nil {
		return store.Principal{}, web.NoCredentials()
	}
	p, ok, csrfOK, err := a.Session(r)
	switch {
	case errors.Is(err, store.ErrInactive):
		return p, web.Inactive()
	case err != nil:
		return p, err
	case !ok:
		return p, web.NoCredentials()
	case !web.SafeMethod(r.Method) && !csrfOK:
		return p, web.CSRFFailed()
	}
	return p, nil
}

// scope is the principal's scope for an action, with malformed constraints logged once.
func (a *API) scope(r *http.Request, objectType, action string) (store.Scope, error) {
	s, err := a.DB.Scope(r.Context(), web.User(r.Context()), objectType, action)
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
