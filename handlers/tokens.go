package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"fieldkit/store"
	"fieldkit/web"
)

// tokenHooks: a token is the requesting user's unless the write names another, and it
// expires in the future or never.
var tokenHooks = hooks{check: checkToken}

func checkToken(ctx context.Context, a *API, f *web.Form, v store.Values, cur store.Row, _ bool) error {
	if _, ok := v["user"]; !ok && cur == nil && !f.Errs.Has("user") {
		v["user"] = web.User(ctx).ID
	}
	if t, ok := v["expires"].(time.Time); ok && !t.IsZero() && !t.After(a.DB.Now()) {
		f.Errs.Add("expires", "Expiration time must be in the future.")
	}
	return nil
}

// createToken is the one create that cannot go through createHandler: the response
// carries the key, which exists nowhere after this request. A list body is a bulk
// create, each created token with its key.
func (a *API) createToken(w http.ResponseWriter, r *http.Request) error {
	res := tokenResource
	scope, err := a.resScope(r, res, "add")
	if err != nil {
		return err
	}
	if !scope.Granted {
		return web.Forbidden("")
	}
	body, err := web.ReadJSON(r)
	if err != nil {
		return err
	}
	keys := map[int64]string{}
	wr := Writer{Fields: writableNames(res.Model, true), Create: func(ctx context.Context, f *web.Form, guard store.Scope) (int64, error) {
		v, err := a.parseBody(ctx, res, res.Model, f, true, nil)
		if err != nil {
			return 0, err
		}
		id, err := a.DB.Create(ctx, res.Model, v, guard)
		var fe *store.FieldError
		if errors.As(err, &fe) && errors.Is(err, store.ErrConflict) {
			return 0, web.BadRequest("key", "A token with this key already exists.")
		}
		keys[id], _ = v["key"].(string)
		return id, err
	}}
	render := func(r *http.Request, row store.Row, _ bool) any {
		n := a.renderObject(r, res, res.Model, row, full)
		n["key"] = keys[row.ID()]
		return n
	}
	if isList(body) {
		return bulkCreate(a, w, r, wr, scope, body, a.rows(res), store.Row.ID, render)
	}
	f, err := web.FormOf(body, wr.Fields...)
	if err != nil {
		return err
	}
	id, err := wr.Create(r.Context(), f, scope)
	if err != nil {
		return err
	}
	rows, err := a.DB.Rows(r.Context(), res.Model, []int64{id})
	if err != nil || len(rows) == 0 {
		return errors.Join(err, fmt.Errorf("created token %d vanished", id))
	}
	w.Header().Set("Location", res.objURL(r, id))
	web.Write(w, http.StatusCreated, render(r, rows[0], false))
	return nil
}
