package ui

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"fieldkit/store"
	"fieldkit/web"
)

// cookieName carries the session id; the database keeps only its SHA-256.
const cookieName = "fieldkit_session"

// sessionIDLen is the length of an id as CreateSession makes it (32 bytes, base64url):
// anything else is not looked up.
const sessionIDLen = 43

type ctxKey int

const ctxSession ctxKey = iota

// sessionOf is the session a webOnly handler runs for.
func sessionOf(r *http.Request) store.Session {
	s, _ := r.Context().Value(ctxSession).(store.Session)
	return s
}

// Session authenticates a request by its session cookie, for the JSON API
// (handlers.Options.Session). ok tells whether a valid session was presented; csrfOK
// whether X-CSRFToken matches it; err is store.ErrInactive for a deactivated user.
func (u *UI) Session(r *http.Request) (p store.Principal, ok, csrfOK bool, err error) {
	s, ok, err := u.session(r)
	if err != nil || !ok {
		return store.Principal{}, false, false, err
	}
	return s.Principal, true, csrfMatches(r, s.CSRFToken), nil
}

// session loads the request's session; a missing, malformed, unknown or expired cookie is
// simply no session.
func (u *UI) session(r *http.Request) (store.Session, bool, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || len(c.Value) != sessionIDLen {
		return store.Session{}, false, nil
	}
	s, err := u.db.SessionByID(r.Context(), c.Value)
	if errors.Is(err, store.ErrNotFound) {
		return store.Session{}, false, nil
	}
	if err != nil {
		return store.Session{}, false, err
	}
	return s, true, nil
}

func csrfMatches(r *http.Request, token string) bool {
	got := r.Header.Get("X-CSRFToken")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// requireSession is the check of every session-only endpoint: a live session, and the
// CSRF token on an unsafe request.
func (u *UI) requireSession(r *http.Request) (store.Session, error) {
	s, ok, err := u.session(r)
	switch {
	case errors.Is(err, store.ErrInactive):
		return s, web.Inactive()
	case err != nil:
		return s, err
	case !ok:
		return s, web.NoCredentials()
	case !web.SafeMethod(r.Method) && !csrfMatches(r, s.CSRFToken):
		web.WithUser(r, s.Principal) // named in the access log, though refused
		return s, web.CSRFFailed()
	}
	web.WithUser(r, s.Principal)
	return s, nil
}

// webOnly adapts a handler that only the web interface may call: an API token is
// refused with msg (an Authorization header, valid or not, means a script, not the
// browser), then a session and CSRF are required.
func (u *UI) webOnly(msg string, h web.HandlerFunc) web.HandlerFunc {
	return u.secure(func(w http.ResponseWriter, r *http.Request) error {
		if strings.TrimSpace(r.Header.Get("Authorization")) != "" {
			return web.Forbidden(msg)
		}
		s, err := u.requireSession(r)
		if err != nil {
			return err
		}
		return h(w, r.WithContext(context.WithValue(r.Context(), ctxSession, s)))
	})
}

// login checks a username and password and starts a session.
func (u *UI) login(w http.ResponseWriter, r *http.Request) error {
	// A cross-site HTML form cannot send application/json, so this stands in for the CSRF
	// token a login cannot have yet.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return web.Detail(http.StatusUnsupportedMediaType, fmt.Sprintf("Unsupported media type %q in request.", r.Header.Get("Content-Type")))
	}
	f, err := web.DecodeForm(r, "username", "password")
	if err != nil {
		return err
	}
	username, _ := f.Str("username", true, 150)
	password, _ := f.Str("password", true, 0)
	if err := f.Err(); err != nil {
		return err
	}
	p, err := u.CheckLogin(r, username, password)
	if errors.Is(err, store.ErrBadLogin) || errors.Is(err, store.ErrInactive) {
		return web.Detail(http.StatusUnauthorized, "Invalid username or password.")
	}
	if err != nil {
		return err
	}
	// A new id at every login, and the old session gone: a session id planted before the
	// login (session fixation) is worth nothing after it.
	if c, err := r.Cookie(cookieName); err == nil && len(c.Value) == sessionIDLen {
		if err := u.db.DeleteSession(r.Context(), c.Value); err != nil {
			return err
		}
	}
	id, s, err := u.db.CreateSession(r.Context(), p.ID, u.ttl)
	if err != nil {
		return err
	}
	http.SetCookie(w, u.cookie(r, id, int(u.ttl.Seconds())))
	u.log.Info("login", "username", p.Username, "client_ip", web.ClientAddr(r))
	return u.writeSession(w, r, http.StatusOK, s)
}

// CheckLogin checks a username and password, counting failures per username and
// client address, and per address alone: the web login and the API's token
// provisioning both go through it, so neither gives more guesses than the other. A
// wrong password is store.ErrBadLogin (store.ErrInactive for an inactive user), a
// throttled client a 429 with Retry-After. A try is reserved before the password is
// checked and counts while it runs, so that tries sent at once cannot all pass.
func (u *UI) CheckLogin(r *http.Request, username, password string) (store.Principal, error) {
	ip := web.ClientAddr(r)
	key := strings.ToLower(username) + "\x00" + ip
	if err := u.beginLogin(key, ip); err != nil {
		return store.Principal{}, err
	}
	p, err := u.db.CheckPassword(r.Context(), username, password)
	failed := errors.Is(err, store.ErrBadLogin) || errors.Is(err, store.ErrInactive)
	u.throttle.end(key, failed)
	u.addrThrottle.end(ip, failed)
	if failed {
		u.log.Warn("login failed", "username", username, "client_ip", ip, "inactive", errors.Is(err, store.ErrInactive),
			"path", r.URL.Path)
		return p, err
	}
	if err != nil {
		return p, err
	}
	u.throttle.reset(key)
	return p, nil
}

// beginLogin reserves a try of the username from the address, and of the address alone,
// or answers 429.
func (u *UI) beginLogin(key, ip string) error {
	wait, ok := u.throttle.begin(key)
	if ok {
		if wait, ok = u.addrThrottle.begin(ip); !ok {
			u.throttle.end(key, false)
		}
	}
	if ok {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	e := web.Detail(http.StatusTooManyRequests, fmt.Sprintf("Too many failed logins; try again in %d s.", secs))
	e.Header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return e
}

// logout ends the session. Without a session there is nothing to end (and nothing a
// forged request could do), so it answers 204 too and clears the cookie.
func (u *UI) logout(w http.ResponseWriter, r *http.Request) error {
	s, ok, err := u.session(r)
	if err != nil && !errors.Is(err, store.ErrInactive) {
		return err
	}
	if ok {
		web.WithUser(r, s.Principal)
		if !csrfMatches(r, s.CSRFToken) {
			return web.CSRFFailed()
		}
	}
	if c, err := r.Cookie(cookieName); err == nil && len(c.Value) == sessionIDLen {
		if err := u.db.DeleteSession(r.Context(), c.Value); err != nil {
			return err
		}
	}
	http.SetCookie(w, u.cookie(r, "", -1))
	web.Write(w, http.StatusNoContent, nil)
	return nil
}

// sessionInfo answers GET /ui/session: who is logged in, the CSRF token and the
// permissions hint.
func (u *UI) sessionInfo(w http.ResponseWriter, r *http.Request) error {
	s, err := u.requireSession(r)
	if err != nil {
		return err
	}
	return u.writeSession(w, r, http.StatusOK, s)
}

func (u *UI) writeSession(w http.ResponseWriter, r *http.Request, status int, s store.Session) error {
	perms, err := u.permissions(r.Context(), s.Principal)
	if err != nil {
		return err
	}
	admins, err := u.db.Administrators(r.Context(), maxContacts)
	if err != nil {
		return err
	}
	contacts := make([]map[string]string, len(admins))
	for i, c := range admins {
		contacts[i] = map[string]string{"username": c.Username, "name": c.Name, "email": c.Email}
	}
	web.Write(w, status, map[string]any{
		"user":           map[string]any{"id": s.Principal.ID, "username": s.Principal.Username, "is_superuser": s.Principal.IsSuperuser},
		"csrf_token":     s.CSRFToken,
		"permissions":    perms,
		"time_zone":      u.timeZone,
		"administrators": contacts,
		"hub":            u.hub,
	})
	return nil
}

// maxContacts is how many administrators the session names: enough to find someone to
// ask, not a directory of the install's superusers.
const maxContacts = 5

// firstRun answers GET /ui/first-run for the login page, without a session: whether the
// install has no user yet, so the page can say how to create the first one. Once a user
// exists it says only that.
func (u *UI) firstRun(w http.ResponseWriter, r *http.Request) error {
	has, err := u.db.HasUsers(r.Context())
	if err != nil {
		return err
	}
	web.Write(w, http.StatusOK, map[string]any{"needs_first_user": !has})
	return nil
}

// permissions lists, per object type, the actions the principal holds, constraints
// ignored: a hint for which buttons to show. The server checks every request anyway.
func (u *UI) permissions(ctx context.Context, p store.Principal) (map[string][]string, error) {
	out := map[string][]string{}
	for _, t := range store.ObjectTypes() {
		held := []string{}
		for _, a := range store.ActionsOf(t) {
			s, err := u.db.Scope(ctx, p, t, a)
			if err != nil {
				return nil, err
			}
			if s.Granted {
				held = append(held, a)
			}
		}
		out[t] = held
	}
	return out, nil
}

// cookie is the session cookie; maxAge < 0 deletes it.
func (u *UI) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: cookieName, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: web.Scheme(r) == "https"}
}
