// Package ui serves FieldKit's web interface: the embedded pages and assets, the login
// session the JSON API also accepts, and the endpoints only the web interface may call
// (credential sets, a device's rate-limit status). docs/UI-CONTRACT.md is its contract
// with the pages in ui/static.
package ui

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"fieldkit/exec/ratelimit"
	"fieldkit/store"
	"fieldkit/web"
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
	// TimeZone is the server's IANA zone (server.time_zone), shown beside times; "" = UTC.
	TimeZone string
	// Execute checks a streamed run as the API's execute does (handlers'
	// StartExecution); nil: the web interface has no streamed runs.
	Execute Executor
	// Sessions closes the device sessions kept open for a credential set when the set
	// changes; nil when no sessions are kept.
	Sessions SessionCloser
	// Hub tells the pages this FieldKit is a hub (hub.serve): they offer its sites.
	Hub bool
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
	timeZone string
	execute  Executor
	runs     runs
	throttle *throttle
	// addrThrottle counts failures per client address alone; a successful login does not
	// reset it, or any valid account could clear the way for more guesses.
	addrThrottle *throttle
	sessions     SessionCloser
	hub          bool
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
	if o.TimeZone == "" {
		o.TimeZone = "UTC"
	}
	u := &UI{db: o.DB, keyring: o.Keyring, limiter: o.Limiter, log: o.Logger, sessions: o.Sessions, hub: o.Hub,
		ttl: time.Duration(o.SessionHours) * time.Hour, static: o.Static, timeZone: o.TimeZone, execute: o.Execute,
		throttle: newThrottle(loginFailures, loginWindow, o.Now), addrThrottle: newThrottle(loginAddrFailures, loginWindow, o.Now)}
	return u
}

// Routes registers every route of the web interface on the server's router: the JSON
// endpoints of the login session and the web-only ones, the assets, and the pages. A
// page is any other GET under /ui/ (the pages route on the client), so pages are the
// router's fallback under /ui/ rather than routes: httprouter allows no route beside a
// catch-all. Unknown paths under /ui/api/ and /ui/static/ stay 404s.
func (u *UI) Routes(rt *web.Router) {
	get := func(path string, h web.HandlerFunc) {
		rt.Handle(http.MethodGet, path, u.secure(h))
		rt.Handle(http.MethodHead, path, u.secure(h))
	}
	toUI := http.RedirectHandler("/ui/", http.StatusFound)
	rt.HandleHTTP(http.MethodGet, "/", toUI)
	rt.HandleHTTP(http.MethodHead, "/", toUI)
	get("/ui/", u.page)
	get("/ui/login", u.page) // beside POST /ui/login, which would make a GET a 405
	get("/ui/static/*file", u.asset)
	rt.Fallback("/ui/", "/ui/*path", u.secure(u.fallback))

	get("/ui/session", u.sessionInfo)
	get("/ui/first-run", u.firstRun)
	rt.Handle(http.MethodPost, "/ui/login", u.secure(u.login))
	rt.Handle(http.MethodPost, "/ui/logout", u.secure(u.logout))

	get(pathCredentialSets, u.webOnly(msgCredentials, u.listSets))
	rt.Handle(http.MethodPost, pathCredentialSets, u.webOnly(msgCredentials, u.createSet))
	get(pathCredentialSets+":id/", u.webOnly(msgCredentials, u.getSet))
	rt.Handle(http.MethodPatch, pathCredentialSets+":id/", u.webOnly(msgCredentials, u.updateSet))
	rt.Handle(http.MethodDelete, pathCredentialSets+":id/", u.webOnly(msgCredentials, u.deleteSet))
	rt.Handle(http.MethodPost, pathCredentialSets+":id/regenerate/", u.webOnly(msgCredentials, u.regenerateSet))
	get(pathServiceSets, u.webOnly(msgCredentials, u.listServiceSets))
	rt.Handle(http.MethodPost, pathServiceSets, u.webOnly(msgCredentials, u.createServiceSet))
	get(pathServiceSets+":id/", u.webOnly(msgCredentials, u.getServiceSet))
	rt.Handle(http.MethodPatch, pathServiceSets+":id/", u.webOnly(msgCredentials, u.updateServiceSet))
	rt.Handle(http.MethodDelete, pathServiceSets+":id/", u.webOnly(msgCredentials, u.deleteServiceSet))
	get("/ui/api/devices/:id/rate-limit/", u.webOnly(msgWebOnly, u.rateLimit))
	rt.Handle(http.MethodPost, "/ui/api/commands/:id/run/", u.webOnly(msgWebOnly, u.run))
	rt.Handle(http.MethodPost, "/ui/api/runs/:id/cancel/", u.webOnly(msgWebOnly, u.cancelRun))
}

const (
	pathCredentialSets = "/ui/api/credential-sets/"
	msgCredentials     = "Credential sets are managed in the web interface only."
	msgWebOnly         = "This endpoint belongs to the web interface and accepts only its login session."
)

// fallback answers a GET under /ui/ that no route matched: a page, except under
// /ui/api/ and /ui/static/, where nothing else exists.
func (u *UI) fallback(w http.ResponseWriter, r *http.Request) error {
	if strings.HasPrefix(r.URL.Path, "/ui/api/") || strings.HasPrefix(r.URL.Path, "/ui/static/") {
		return web.NotFound()
	}
	return u.page(w, r)
}

// secure adds the contract's security headers to every web interface response, and
// keeps its answers out of caches unless the handler says otherwise (assets, pages).
func (u *UI) secure(h web.HandlerFunc) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		return h(w, r)
	}
}
