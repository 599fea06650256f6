package handlers

import (
	"errors"
	"net/http"

	"fieldkit/store"
	"fieldkit/web"
)

// pathProvision is where a user trades a username and password for a new API token,
// as NetBox's users/tokens/provision/ (pynetbox's create_token).
const pathProvision = pathTokens + "provision/"

// provisionToken serves POST /api/users/tokens/provision/ without authentication:
// {"username", "password"} and optionally the token's "description", "expires" and
// "write_enabled". It answers 201 with the token, its key shown this once, or 401 as
// a wrong password does at the web login (counted by the same throttle when the web
// interface provides it).
func (a *API) provisionToken(w http.ResponseWriter, r *http.Request) error {
	res := tokenResource
	fields := []string{"username", "password", "description", "expires", "write_enabled"}
	f, err := web.DecodeForm(r, fields...)
	if err != nil {
		return err
	}
	username, _ := f.Str("username", true, 150)
	password, _ := f.Str("password", true, 0)
	if err := f.Err(); err != nil {
		return err
	}
	p, err := a.checkLogin(r, username, password)
	if err != nil {
		return err
	}
	delete(f.Raw, "username")
	delete(f.Raw, "password")
	ctx := web.WithUser(r, p).Context()
	v, err := a.parseBody(ctx, res, res.Model, f, true, nil)
	if err != nil {
		return err
	}
	v["user"] = p.ID
	id, err := a.DB.Create(ctx, res.Model, v, store.All)
	if err != nil {
		return err
	}
	rows, err := a.DB.Rows(ctx, res.Model, []int64{id})
	if err != nil || len(rows) == 0 {
		return errors.Join(err, web.NotFound())
	}
	a.Logger.Info("token provisioned", "username", p.Username, "token_id", id)
	out := a.renderObject(r, res, res.Model, rows[0], full)
	out["key"], _ = v["key"].(string)
	w.Header().Set("Location", res.objURL(r, id))
	web.Write(w, http.StatusCreated, out)
	return nil
}

// checkLogin checks a username and password: through the web interface's login (and
// its throttle) when it is wired in, else against the store alone.
func (a *API) checkLogin(r *http.Request, username, password string) (store.Principal, error) {
	var p store.Principal
	var err error
	if a.Login != nil {
		p, err = a.Login(r, username, password)
	} else {
		p, err = a.DB.CheckPassword(r.Context(), username, password)
	}
	if errors.Is(err, store.ErrBadLogin) || errors.Is(err, store.ErrInactive) {
		return p, errBadLogin()
	}
	return p, err
}

// errBadLogin is NetBox's answer to a wrong username or password.
func errBadLogin() error {
	e := web.Detail(http.StatusUnauthorized, "Invalid username/password")
	e.Header = http.Header{"WWW-Authenticate": {"Token"}}
	return e
}
