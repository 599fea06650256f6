package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"fieldkit/handlers/httpjson"
	"fieldkit/store"
)

var tokenKeyRE = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

func (a *API) tokenCRUD() crudSet {
	res := tokenResource
	wr := Writer{
		Fields: []string{"user", "description", "expires", "write_enabled"},
		Update: func(ctx context.Context, id int64, f *form, partial bool, guard store.Scope) error {
			var in store.TokenUpdate
			in.UserID, _ = a.ref(ctx, f, "user", store.TypeUser, !partial)
			if s, ok := f.Str("description", false, 200); ok {
				in.Description = &s
			}
			if b, ok := f.Boolean("write_enabled"); ok {
				in.WriteEnabled = &b
			}
			if t, ok := a.expires(f); ok {
				in.Expires = &t
			}
			if err := f.Err(); err != nil {
				return err
			}
			return a.DB.UpdateToken(ctx, id, in, guard)
		},
		Delete: a.DB.DeleteToken,
	}
	load := a.DB.Tokens
	c := crudOf(a, res, wr, load, func(t store.Token) int64 { return t.ID }, a.renderToken)
	c.create = a.createToken
	return c
}

// tokenCreateFields are the keys a token create may carry: the key only on create.
var tokenCreateFields = []string{"user", "description", "expires", "write_enabled", "key"}

// createToken is the one create that cannot go through createHandler: the response
// carries the key, which exists nowhere after this request. A list body is a bulk
// create, each created token with its key.
func (a *API) createToken(w http.ResponseWriter, r *http.Request) error {
	scope, err := a.resScope(r, tokenResource, "add")
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	keys := map[int64]string{}
	wr := Writer{Fields: tokenCreateFields, Create: func(ctx context.Context, f *form, guard store.Scope) (int64, error) {
		id, key, err := a.tokenCreate(ctx, f, guard)
		keys[id] = key
		return id, err
	}}
	render := func(r *http.Request, t store.Token, _ bool) any {
		body := a.renderToken(r, t, false).(nested)
		body["key"] = keys[t.ID]
		return body
	}
	if isList(body) {
		return bulkCreate(a, w, r, wr, scope, body, a.DB.Tokens, func(t store.Token) int64 { return t.ID }, render)
	}
	f, err := formOf(body, tokenCreateFields...)
	if err != nil {
		return err
	}
	id, err := wr.Create(r.Context(), f, scope)
	if err != nil {
		return err
	}
	toks, err := a.DB.Tokens(r.Context(), []int64{id})
	if err != nil || len(toks) == 0 {
		return errors.Join(err, fmt.Errorf("created token %d vanished", id))
	}
	w.Header().Set("Location", tokenResource.objURL(r, id))
	httpjson.Write(w, http.StatusCreated, render(r, toks[0], false))
	return nil
}

// tokenCreate reads one token create and stores it within guard, returning its id and key.
func (a *API) tokenCreate(ctx context.Context, f *form, guard store.Scope) (int64, string, error) {
	in := store.TokenInput{UserID: requestUser(ctx).ID, WriteEnabled: true}
	if id, ok := a.ref(ctx, f, "user", store.TypeUser, false); ok && id != nil {
		in.UserID = *id
	}
	in.Description, _ = f.Str("description", false, 200)
	if b, ok := f.Boolean("write_enabled"); ok {
		in.WriteEnabled = b
	}
	in.Expires, _ = a.expires(f)
	if k, ok := f.Str("key", false, 0); ok {
		if !tokenKeyRE.MatchString(k) {
			f.Errs.Add("key", "Enter exactly 40 hexadecimal characters.")
		}
		in.Key = k
	}
	if err := f.Err(); err != nil {
		return 0, "", err
	}
	id, key, err := a.DB.CreateToken(ctx, in, guard)
	var fe *store.FieldError
	if errors.As(err, &fe) && errors.Is(err, store.ErrConflict) {
		return 0, "", httpjson.BadRequest("key", "A token with this key already exists.")
	}
	return id, key, err
}

// expires reads the expires field: a future datetime, or null (never). The zero time
// stands for null.
func (a *API) expires(f *form) (time.Time, bool) {
	if !f.Has("expires") {
		return time.Time{}, false
	}
	if f.IsNull("expires") {
		return time.Time{}, true
	}
	s, ok := f.Str("expires", false, 0)
	if !ok {
		return time.Time{}, false
	}
	t, err := store.ParseTime(s)
	if err != nil {
		f.Errs.Add("expires", "Datetime has wrong format. Use RFC 3339, e.g. 2030-01-02T15:04:05Z.")
		return time.Time{}, false
	}
	if !t.After(a.DB.Now()) {
		f.Errs.Add("expires", "Expiration time must be in the future.")
		return time.Time{}, false
	}
	return t, true
}

func (a *API) renderToken(r *http.Request, t store.Token, brief bool) any {
	n := nested{"id": t.ID, "url": tokenResource.objURL(r, t.ID), "display": t.KeyPrefix + "**********"}
	if brief {
		return n
	}
	n["user"] = briefUser(r, t.User.ID, t.User.Username)
	n["description"], n["write_enabled"] = t.Description, t.WriteEnabled
	n["expires"], n["last_used"] = stamp(t.Expires), stamp(t.LastUsed)
	n["created"], n["last_updated"] = stamp(t.Created), stamp(t.LastUpdated)
	return n
}
