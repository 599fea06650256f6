// Package ui serves FieldKit's web interface: the embedded pages and assets, the login
// session the JSON API also accepts, and the endpoints only the web interface may call
// (credential sets, a device's rate-limit status). docs/UI-CONTRACT.md is its contract
// with the pages in ui/static.
package ui

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"fieldkit/exec/ratelimit"
	"fieldkit/observe"
	"fieldkit/store"
)

//go:embed static
var embedded embed.FS

// Options configures the web interface.
type Options struct {
	DB           *store.DB
	Keyring      *store.Keyring     // encrypts credential-set secrets
	Limiter      *ratelimit.Limiter // nil: rate limiting is off
	Logger       *slog.Logger
	SessionHours int              // how long a login lasts; 0 = 12
	Static       fs.FS            // the pages and assets; nil = the embedded ui/static
	Now          func() time.Time // the login throttle's clock; nil = time.Now (tests)
	// Sessions closes the device sessions kept open for a credential set when the set
	// changes; nil when no sessions are kept.
	Sessions SessionCloser
}

// SessionCloser closes the device sessions kept open for a credential set (exec.Pool
// does), so that a changed, deactivated, re-tokened or deleted set frees its vty lines
// at once and no session opened with the set as it was is used again.
type SessionCloser interface {
	CloseSet(setID int64)
}

// UI is the web interface's HTTP side.
type UI struct {
	db       *store.DB
	keyring  *store.Keyring
	limiter  *ratelimit.Limiter
	log      *slog.Logger
	ttl      time.Duration
	static   fs.FS
	throttle *throttle
	// addrThrottle counts failures per client address alone; a successful login does not
	// reset it, or any valid account could clear the way for more guesses.
	addrThrottle *throttle
	gets         []getRoute
	sessions     SessionCloser
}

// New builds the web interface.
func New(o Options) *UI {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SessionHours <= 0 {
		o.SessionHours = 12
	}
	if o.Static == nil {
		sub, err := fs.Sub(embedded, "static")
		if err != nil {
			panic(err) // "static" is a valid path: fs.Sub cannot fail here
		}
		o.Static = sub
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	u := &UI{db: o.DB, keyring: o.Keyring, limiter: o.Limiter, log: o.Logger, sessions: o.Sessions,
		ttl: time.Duration(o.SessionHours) * time.Hour, static: o.Static,
		throttle: newThrottle(loginFailures, loginWindow, o.Now), addrThrottle: newThrottle(loginAddrFailures, loginWindow, o.Now)}
	u.gets = u.getRoutes()
	return u
}

// Routes registers every route of the web interface on the API's router. It is the one
// place to read to know what the web interface answers.
//
// httprouter v1.3.0 allows a catch-all only as the single child of its node, so no GET
// route may sit beside GET /ui/*path. Pages need the catch-all (client-side routing: any
// /ui/<path> is index.html), so the GET JSON endpoints are dispatched inside it, in
// getRoutes below. Other methods have trees of their own and are registered normally;
// a POST to a GET-only path is then the router's 405, as in the API.
func (u *UI) Routes(rt *httprouter.Router) {
	handle := func(method, path string, h http.Handler) { rt.Handler(method, path, observe.Route(path, h)) }
	handle(http.MethodGet, "/", u.secure(http.RedirectHandler("/ui/", http.StatusFound)))
	handle(http.MethodHead, "/", u.secure(http.RedirectHandler("/ui/", http.StatusFound)))
	handle(http.MethodGet, "/ui/*path", u.secure(u.adapt(u.get)))
	handle(http.MethodHead, "/ui/*path", u.secure(u.adapt(u.get)))

	handle(http.MethodPost, "/ui/login", u.secure(u.adapt(u.login)))
	handle(http.MethodPost, "/ui/logout", u.secure(u.adapt(u.logout)))

	handle(http.MethodPost, pathCredentialSets, u.secure(u.webOnly(msgCredentials, u.createSet)))
	handle(http.MethodPatch, pathCredentialSets+":id/", u.secure(u.webOnly(msgCredentials, u.updateSet)))
	handle(http.MethodDelete, pathCredentialSets+":id/", u.secure(u.webOnly(msgCredentials, u.deleteSet)))
	handle(http.MethodPost, pathCredentialSets+":id/regenerate/", u.secure(u.webOnly(msgCredentials, u.regenerateSet)))
}

const (
	pathCredentialSets = "/ui/api/credential-sets/"
	msgCredentials     = "Credential sets are managed in the web interface only."
	msgWebOnly         = "This endpoint belongs to the web interface and accepts only its login session."
)

// getRoutes are the GET JSON endpoints under /ui/ (see Routes for why they are not on the
// router). A ":id" segment is handed to the handler as the router's "id" parameter.
func (u *UI) getRoutes() []getRoute {
	return []getRoute{
		{"/ui/session", u.adapt(u.sessionInfo)},
		{pathCredentialSets, u.webOnly(msgCredentials, u.listSets)},
		{pathCredentialSets + ":id/", u.webOnly(msgCredentials, u.getSet)},
		{"/ui/api/devices/:id/rate-limit/", u.webOnly(msgWebOnly, u.rateLimit)},
	}
}

type getRoute struct {
	pattern string
	h       http.Handler
}

// get answers every GET and HEAD under /ui/: the JSON endpoints, then assets, then
// index.html for any other path (the pages route on the client).
func (u *UI) get(w http.ResponseWriter, r *http.Request) error {
	path := r.URL.Path
	for _, rt := range u.gets {
		if ps, ok := match(rt.pattern, path); ok {
			observe.SetRoute(r, rt.pattern)
			rt.h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), httprouter.ParamsKey, ps)))
			return nil
		}
	}
	switch {
	case strings.HasPrefix(path, "/ui/api/"):
		return errNotFound()
	case strings.HasPrefix(path, "/ui/static/"):
		return u.asset(w, r, strings.TrimPrefix(path, "/ui/static/"))
	}
	return u.page(w, r)
}

// match reports whether path fits pattern, segment by segment, ":name" matching any
// one non-empty segment.
func match(pattern, path string) (httprouter.Params, bool) {
	ps, pp := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(pp) {
		return nil, false
	}
	var params httprouter.Params
	for i, seg := range ps {
		switch {
		case strings.HasPrefix(seg, ":") && pp[i] != "":
			params = append(params, httprouter.Param{Key: seg[1:], Value: pp[i]})
		case seg != pp[i]:
			return nil, false
		}
	}
	return params, true
}

// routeParam reads a path parameter, from the router or from get's dispatch.
func routeParam(r *http.Request, name string) string {
	return httprouter.ParamsFromContext(r.Context()).ByName(name)
}

// secure adds the contract's security headers to every web interface response.
func (u *UI) secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

// adapt turns a handlerFunc into a handler.
func (u *UI) adapt(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			u.writeError(w, r, err)
		}
	})
}
