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
// expires in the future or never. Making a token for another user, or handing one over
// to another user, gives its key to someone who is not that user: only a superuser may,
// or a holder of a permission whose constraints name that user explicitly — and never
// for a superuser unless the writer is one.
var tokenHooks = hooks{check: checkToken}

func checkToken(ctx context.Context, a *API, f *web.Form, v store.Values, cur store.Row, _ bool) error {
	if _, ok := v["user"]; !ok && cur == nil && !f.Errs.Has("user") {
		v["user"] = web.User(ctx).ID
	}
	if t, ok := v["expires"].(time.Time); ok && !t.IsZero() && !t.After(a.DB.Now()) {
		f.Errs.Add("expires", "Expiration time must be in the future.")
	}
	return checkTokenOwner(ctx, a, v, cur)
}

// checkTokenOwner refuses a token written for another user without the right to.
func checkTokenOwner(ctx context.Context, a *API, v store.Values, cur store.Row) error {
	me := web.User(ctx)
	owner, sent := v["user"].(int64)
	if !sent || me.IsSuperuser || owner == me.ID {
		return nil
	}
	if prev, _ := cur["user"].(store.Row); prev != nil && prev.ID() == owner {
		return nil // the owner stays: nobody learns a key
	}
	users, err := a.DB.Rows(ctx, store.Users, []int64{owner})
	if err != nil || len(users) == 0 {
		return err // an unknown user was reported by the reference's parse
	}
	if users[0]["is_superuser"] == true {
		return web.Forbidden("Only a superuser may create a token for a superuser or give one to a superuser.")
	}
	action := "add"
	if cur != nil {
		action = "change"
	}
	mine, err := a.grantOf(ctx)
	if err != nil {
		return err
	}
	if name, _ := users[0]["username"].(string); !mine.NamesUser(store.TypeToken, action, owner, name) {
		return web.Forbidden("Only a superuser may create a token for another user, or a user whose permission's constraints name that user.")
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
