package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"fieldkit/store"
	"fieldkit/web"
)

// NetBox's bulk writes: a JSON list sent to a list endpoint creates (POST), updates
// (PUT, PATCH) or deletes (DELETE) many objects. Each element is checked and written as
// the single-object request would be, all of them in one store.Batch: if any element
// fails, nothing is written. Validation errors come back as one entry per element in
// request order ({} for a good one), as DRF answers; a permission failure is a 403 and
// any other failure (409, 500) answers as it would for one object.

// maxBulk is the most elements one bulk write takes (NetBox's MAX_PAGE_SIZE).
const maxBulk = 1000

// isList reports whether a body read by readBody is a JSON list: the bulk form.
func isList(body json.RawMessage) bool {
	b := bytes.TrimSpace(body)
	return len(b) > 0 && b[0] == '['
}

// bulkList reads the body of a bulk write: a list of 1 to maxBulk elements.
func bulkList(body json.RawMessage) ([]json.RawMessage, error) {
	var elems []json.RawMessage
	if !isList(body) || json.Unmarshal(body, &elems) != nil {
		return nil, web.Invalid(fmt.Sprintf("Expected a list of items but got type %q.", web.JSONType(body)))
	}
	switch {
	case len(elems) == 0:
		return nil, web.Invalid("This list may not be empty.")
	case len(elems) > maxBulk:
		return nil, web.Invalid(fmt.Sprintf("Ensure this field has no more than %d elements.", maxBulk))
	}
	return elems, nil
}

// elemObject reads one element of a bulk body as a JSON object.
func elemObject(el json.RawMessage) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(el, &raw) != nil || raw == nil {
		return nil, web.Invalid(fmt.Sprintf("Invalid data. Expected a dictionary, but got %s.", web.JSONType(el)))
	}
	return raw, nil
}

// bulkTarget reads an element of a bulk update or delete: the id of the object, and a
// form of the element's other fields.
func bulkTarget(el json.RawMessage, fields []string) (int64, *web.Form, error) {
	raw, err := elemObject(el)
	if err != nil {
		return 0, nil, err
	}
	rawID, ok := raw["id"]
	if !ok {
		return 0, nil, web.BadRequest("id", "This field is required.")
	}
	id, err := web.Int(rawID)
	if err != nil || id <= 0 {
		return 0, nil, web.BadRequest("id", "A valid positive integer is required.")
	}
	delete(raw, "id")
	return id, web.NewForm(raw, fields...), nil
}

// bulkErrors collects the outcome of each element of a bulk write in DRF's shape: {}
// for a good element, its field errors for a bad one.
type bulkErrors struct {
	list []any
	bad  bool
}

func newBulkErrors(n int) *bulkErrors { return &bulkErrors{list: make([]any, n)} }

// add records element i's outcome. A validation error (a 400) is recorded and the
// caller goes on to check the later elements; any other error is returned, to end the
// batch with it.
func (b *bulkErrors) add(i int, err error) error {
	if err == nil {
		b.list[i] = map[string]any{}
		return nil
	}
	e, ok := web.ClientError(err)
	if !ok || e.Status != http.StatusBadRequest {
		return err
	}
	b.list[i], b.bad = e.Body, true
	return nil
}

// err is the 400 listing every element's errors, or nil when all were good.
func (b *bulkErrors) err() error {
	if !b.bad {
		return nil
	}
	return &web.Error{Status: http.StatusBadRequest, Body: b.list}
}

// bulkCreate serves POST <list>/ with a list body; guard is the add scope.
func bulkCreate[T any](a *API, w http.ResponseWriter, r *http.Request, wr Writer, guard store.Scope,
	body json.RawMessage, load Loader[T], id IDOf[T], render Renderer[T]) error {
	elems, err := bulkList(body)
	if err != nil {
		return err
	}
	ids := make([]int64, len(elems))
	err = a.DB.Batch(r.Context(), func(ctx context.Context) error {
		errs := newBulkErrors(len(elems))
		for i, el := range elems {
			raw, err := elemObject(el)
			if err == nil {
				ids[i], err = wr.Create(ctx, web.NewForm(raw, wr.createFields()...), guard)
			}
			if err := errs.add(i, err); err != nil {
				return err
			}
		}
		return errs.err()
	})
	if err != nil {
		return err
	}
	return writeBulk(w, r, http.StatusCreated, ids, load, id, render)
}

// writeBulk answers the objects written, in request order.
func writeBulk[T any](w http.ResponseWriter, r *http.Request, status int, ids []int64, load Loader[T], id IDOf[T], render Renderer[T]) error {
	objs, err := loadOrdered(r.Context(), load, id, ids)
	if err != nil {
		return err
	}
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = render(r, o, false)
	}
	web.Write(w, status, out)
	return nil
}

// bulkUpdateHandler serves PUT (partial=false) and PATCH (partial=true) on <list>/.
func bulkUpdateHandler[T any](a *API, res *Resource, wr Writer, load Loader[T], id IDOf[T], render Renderer[T], partial bool) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ids, err := a.bulkEach(r, res, "change", wr.Fields, func(ctx context.Context, id int64, f *web.Form, guard store.Scope) error {
			return wr.Update(ctx, id, f, partial, guard)
		})
		if err != nil {
			return err
		}
		return writeBulk(w, r, http.StatusOK, ids, load, id, render)
	}
}

// bulkDeleteHandler serves DELETE on <list>/ with a list of {"id": n}.
func bulkDeleteHandler(a *API, res *Resource, wr Writer) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		_, err := a.bulkEach(r, res, "delete", nil, func(ctx context.Context, id int64, f *web.Form, _ store.Scope) error {
			if err := f.Err(); err != nil {
				return err
			}
			return wr.Delete(ctx, id)
		})
		if err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// bulkEach runs a bulk update or delete: each element names an object by id, which is
// checked as changeable checks one (but a missing object is the element's 400, not a
// 404: the URL exists) and then passed to fn with the action's scope as the guard. It
// returns the ids in request order.
func (a *API) bulkEach(r *http.Request, res *Resource, action string, fields []string,
	fn func(ctx context.Context, id int64, f *web.Form, guard store.Scope) error) ([]int64, error) {
	body, err := web.ReadJSON(r)
	if err != nil {
		return nil, err
	}
	elems, err := bulkList(body)
	if err != nil {
		return nil, err
	}
	view, err := a.resScope(r, res, "view")
	if err != nil {
		return nil, err
	}
	act, err := a.resScope(r, res, action)
	if err != nil {
		return nil, err
	}
	if !act.Granted {
		return nil, web.Forbidden("")
	}
	ids := make([]int64, len(elems))
	seen := make(map[int64]bool, len(elems))
	err = a.DB.Batch(r.Context(), func(ctx context.Context) error {
		errs := newBulkErrors(len(elems))
		for i, el := range elems {
			err := func() error {
				id, f, err := bulkTarget(el, fields)
				if err != nil {
					return err
				}
				if seen[id] {
					return web.BadRequest("id", fmt.Sprintf("Object with id %d is listed more than once.", id))
				}
				seen[id], ids[i] = true, id
				if err := a.bulkCheck(ctx, res, id, view, act); err != nil {
					return err
				}
				return fn(ctx, id, f, act)
			}()
			if err := errs.add(i, err); err != nil {
				return err
			}
		}
		return errs.err()
	})
	return ids, err
}

// bulkCheck checks one element's object: visible, else a 400 naming its id; within the
// action's scope, else a 403.
func (a *API) bulkCheck(ctx context.Context, res *Resource, id int64, view, act store.Scope) error {
	ok := false
	if view.Granted {
		var err error
		if ok, err = a.DB.Exists(ctx, res.Type(), id, view.Expr); err != nil {
			return err
		}
	}
	if !ok {
		return web.BadRequest("id", fmt.Sprintf("Object with id %d does not exist.", id))
	}
	ok, err := a.DB.Exists(ctx, res.Type(), id, act.Expr)
	if err != nil {
		return err
	}
	if !ok {
		return web.Forbidden("")
	}
	return nil
}
