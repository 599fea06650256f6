package handlers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"fieldkit/store"
	"fieldkit/web"
)

// Page size limits, as NetBox's defaults.
const (
	defaultLimit = 50
	maxLimit     = 1000
)

// Resource is one API resource: an object type, declared in package store, at a path,
// with hooks for what the declaration cannot say. Its filters, ordering, search and
// schema come from the declaration; so does everything else for a resource routed with
// a.resource.
type Resource struct {
	Model *store.Model
	Path  string // "/api/dcim/devices/"
	hooks hooks
	// Cache keeps rendered list pages until the next write committed to the database,
	// by any process (see listCache); only for resources whose lists depend on nothing
	// but the database, the request's URL and host, and the caller's scope.
	Cache bool
}

// Type is the resource's object type, "dcim.device".
func (res *Resource) Type() string { return res.Model.Type }

// Name is the resource's schema name, "Device".
func (res *Resource) Name() string { return res.Model.Name }

// resScope is the principal's scope for an action on the resource, widened by the rows
// the principal owns (their own API tokens: everyone may act on those).
func (a *API) resScope(r *http.Request, res *Resource, action string) (store.Scope, error) {
	s, err := a.scope(r, res.Type(), action)
	if err != nil {
		return s, err
	}
	own, ok := res.Model.OwnedBy(web.User(r.Context()).ID)
	if !ok {
		return s, nil
	}
	if !s.Granted {
		return store.Scope{Granted: true, Expr: own, Problems: s.Problems}, nil
	}
	if s.Expr.SQL == store.True.SQL {
		return s, nil
	}
	s.Expr = store.Or(s.Expr, own)
	return s, nil
}

// listParams are the reserved (non-filter) query parameters.
var listParams = map[string]bool{"limit": true, "offset": true, "ordering": true, "brief": true, "q": true, "format": true,
	"exclude": true, "fields": true, "cursor": true}

type page struct {
	limit, offset int
	brief         bool
	// keyed: the client asked for cursor pagination (?cursor=, empty for the first
	// page); ordering is the ordering parameter a cursor belongs to.
	keyed    bool
	ordering string
	sel      selection // ?fields= and ?exclude=
}

// cursor is what a cursor carries: the ordering it belongs to and the sort key of the
// row the next page starts after.
type cursor struct {
	Ordering string `json:"o"`
	Key      []any  `json:"k"`
}

// encodeCursor is the opaque text of a cursor, safe in a URL.
func encodeCursor(ordering string, key []any) string {
	raw, _ := json.Marshal(cursor{Ordering: ordering, Key: key})
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodeCursor reads a cursor made by encodeCursor for this ordering; numbers come back
// as int64 when whole, as SQLite compares them. A cursor it cannot use yields the
// client's message instead.
func decodeCursor(s, ordering string) ([]any, string) {
	const invalid = "Invalid cursor."
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, invalid
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var c cursor
	if err := dec.Decode(&c); err != nil || c.Key == nil {
		return nil, invalid
	}
	if c.Ordering != ordering {
		return nil, "This cursor was made for another ordering."
	}
	for i, v := range c.Key {
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				c.Key[i] = n
			} else if f, err := x.Float64(); err == nil {
				c.Key[i] = f
			} else {
				return nil, invalid
			}
		case string, nil:
		default:
			return nil, invalid
		}
	}
	return c.Key, ""
}

// parseList turns the query string into a store query; anything it does not understand
// is a 400 naming the parameter.
func (res *Resource) parseList(r *http.Request) (store.Query, page, error) {
	vals := r.URL.Query()
	q := store.Query{Model: res.Type()}
	pg := page{limit: defaultLimit}
	fe := web.FieldErrors{}
	if v := vals.Get("limit"); v != "" {
		n, ok := web.ParseCount(v)
		switch {
		case !ok:
			fe.Add("limit", "A valid non-negative integer is required.")
		case n == 0 || n > maxLimit:
			pg.limit = maxLimit
		default:
			pg.limit = n
		}
	}
	if v := vals.Get("offset"); v != "" {
		n, ok := web.ParseCount(v)
		if !ok {
			fe.Add("offset", "A valid non-negative integer is required.")
		}
		pg.offset = n
	}
	if v := vals.Get("brief"); v != "" {
		b, err := boolParam(v)
		if err != nil {
			fe.Add("brief", "Must be a valid boolean.")
		}
		pg.brief = b
	}
	pg.sel = res.parseSelection(r, fe)
	if _, ok := vals["cursor"]; ok {
		pg.keyed, pg.ordering = true, vals.Get("ordering")
		switch {
		case vals.Get("offset") != "":
			fe.Add("cursor", "A cursor and an offset cannot be used together.")
		case vals.Get("cursor") != "":
			key, problem := decodeCursor(vals.Get("cursor"), pg.ordering)
			if problem != "" {
				fe.Add("cursor", problem)
			}
			q.After = key
		}
		q.Keyed = true
	}
	m := res.Model
	order, err := m.Ordering(vals.Get("ordering"))
	if err != nil {
		fe.Add("ordering", err.Error())
	}
	q.Order = order
	if s := strings.TrimSpace(vals.Get("q")); s != "" && m.Searchable() {
		q.Search = s
	}
	for _, key := range slices.Sorted(maps.Keys(vals)) {
		if listParams[key] {
			continue
		}
		e, err := m.FilterExpr(key, vals[key])
		if err != nil {
			fe.Add(key, err.Error())
			continue
		}
		q.Where = append(q.Where, e)
	}
	q.Limit, q.Offset = pg.limit, pg.offset
	return q, pg, fe.Err()
}

// objURL is the absolute URL of one object of the resource.
func (res *Resource) objURL(r *http.Request, id int64) string {
	return web.URL(r, res.Path+strconv.FormatInt(id, 10)+"/")
}

// cursorURL is the link to the page after the row whose sort key is given.
func cursorURL(r *http.Request, limit int, ordering string, key []any) string {
	u := *r.URL
	q := u.Query()
	q.Set("limit", strconv.Itoa(limit))
	q.Set("cursor", encodeCursor(ordering, key))
	u.RawQuery = q.Encode()
	return web.URL(r, u.Path+"?"+u.RawQuery)
}

func pageURL(r *http.Request, limit, offset int) string {
	u := *r.URL
	q := u.Query()
	q.Set("limit", strconv.Itoa(limit))
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	} else {
		q.Del("offset")
	}
	u.RawQuery = q.Encode()
	return web.URL(r, u.Path+"?"+u.RawQuery)
}

// listBody is the paginated envelope.
type listBody struct {
	Count    int     `json:"count"`
	Next     *string `json:"next"`
	Previous *string `json:"previous"`
	Results  []any   `json:"results"`
}

func paginate(r *http.Request, total int, pg page, results []any, next []any) listBody {
	b := listBody{Count: total, Results: results}
	if b.Results == nil {
		b.Results = []any{}
	}
	if pg.keyed {
		// forward only: a walk keeps the cursor of the page it is on
		if next != nil {
			s := cursorURL(r, pg.limit, pg.ordering, next)
			b.Next = &s
		}
		return b
	}
	if total-pg.offset > pg.limit { // never pg.offset+pg.limit: it could wrap
		s := pageURL(r, pg.limit, pg.offset+pg.limit)
		b.Next = &s
	}
	if pg.offset > 0 {
		s := pageURL(r, pg.limit, max(0, pg.offset-pg.limit))
		b.Previous = &s
	}
	return b
}

// Loader loads objects by id, in any order; Renderer turns one into its JSON shape.
type (
	Loader[T any]   func(ctx context.Context, ids []int64) ([]T, error)
	Renderer[T any] func(r *http.Request, v T, brief bool) any
	IDOf[T any]     func(v T) int64
)

// listHandler serves a paginated, filtered, permission-scoped list of a declared
// resource.
func listHandler(a *API, res *Resource) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		scope, err := a.resScope(r, res, "view")
		if err != nil {
			return err
		}
		if !scope.Granted {
			return web.Forbidden("")
		}
		q, pg, err := res.parseList(r)
		if err != nil {
			return err
		}
		// The version is read before the page: a write committed meanwhile moves it,
		// so a page is never kept under a version older than its data.
		var key string
		var version int64
		cache := false
		if res.Cache {
			v, err := a.DB.Changes(r.Context())
			version, cache = v, err == nil
		}
		if cache {
			key = cacheKey(r, scope)
			if body, ok := a.lists.get(key, version); ok {
				writeJSONBody(w, body)
				return nil
			}
		}
		q.Where = append(q.Where, scope.Expr)
		ids, total, next, err := a.DB.ListKeyed(r.Context(), q)
		if errors.Is(err, store.ErrBadCursor) {
			fe := web.FieldErrors{}
			fe.Add("cursor", "Invalid cursor.")
			return fe.Err()
		}
		if err != nil {
			return err
		}
		if pg.offset > 0 && pg.offset >= total {
			// a page that does not exist, as Django REST framework answers it
			return web.Detail(http.StatusNotFound, "Invalid page.")
		}
		body, err := a.writePage(r, res, pg, ids, paginate(r, total, pg, nil, next))
		if err != nil {
			return err
		}
		if cache {
			a.lists.put(key, version, body)
		}
		writeJSONBody(w, body)
		return nil
	}
}

// writePage loads the objects of a page by id and writes the page, each object rendered
// in the page's shape and trimmed by its selection.
func (a *API) writePage(r *http.Request, res *Resource, pg page, ids []int64, envelope listBody) ([]byte, error) {
	load := func(ctx context.Context, ids []int64) ([]store.Row, error) {
		return a.DB.RowsLeaving(ctx, res.Model, ids, pg.leaves(res))
	}
	rows, err := loadOrdered(r.Context(), load, store.Row.ID, ids)
	if err != nil {
		return nil, err
	}
	sh := full
	if pg.brief {
		sh = briefShape
	}
	envelope.Results = make([]any, len(rows))
	for i, row := range rows {
		envelope.Results[i] = a.renderShown(r, res, res.Model, row, sh, pg.sel)
	}
	return web.Marshal(envelope)
}

// leaves says which fields of the model the page does not show (left out by ?fields=,
// ?exclude= or ?brief=), so that the store need not read them. A resource whose hooks
// compute a field from the row has the store leave out its Lazy fields alone.
func (pg page) leaves(res *Resource) func(name string) bool {
	m := res.Model
	return func(name string) bool {
		f, ok := m.Field(name)
		if len(res.hooks.computed) > 0 && (!ok || !f.Lazy) {
			return false
		}
		if !pg.sel.shows(name) {
			return true
		}
		return pg.brief && ok && !f.Nested && !f.Brief
	}
}

// writeJSONBody answers 200 with a body already encoded. Its length is known, so the
// response goes out with a Content-Length rather than in chunks.
func writeJSONBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// loadOrdered loads ids and returns them in the order given.
func loadOrdered[T any](ctx context.Context, load Loader[T], id IDOf[T], ids []int64) ([]T, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	objs, err := load(ctx, ids)
	if err != nil {
		return nil, err
	}
	pos := make(map[int64]int, len(ids))
	for i, x := range ids {
		pos[x] = i
	}
	out := make([]T, len(ids))
	n := 0
	for _, o := range objs {
		if i, ok := pos[id(o)]; ok {
			out[i] = o
			n++
		}
	}
	if n != len(ids) {
		// a row deleted between the id query and the load: drop the gaps
		kept := out[:0]
		seen := map[int64]bool{}
		for _, o := range objs {
			seen[id(o)] = true
		}
		for _, x := range ids {
			if seen[x] {
				kept = append(kept, out[pos[x]])
			}
		}
		out = kept
	}
	return out, nil
}

// visible loads one object the principal may view, or 404.
func visible[T any](a *API, r *http.Request, res *Resource, id int64, load Loader[T]) (T, error) {
	var zero T
	scope, err := a.resScope(r, res, "view")
	if err != nil {
		return zero, err
	}
	if !scope.Granted {
		return zero, web.NotFound()
	}
	ok, err := a.DB.Exists(r.Context(), res.Type(), id, scope.Expr)
	if err != nil {
		return zero, err
	}
	if !ok {
		return zero, web.NotFound()
	}
	objs, err := load(r.Context(), []int64{id})
	if err != nil {
		return zero, err
	}
	if len(objs) == 0 {
		return zero, web.NotFound()
	}
	return objs[0], nil
}

// detailHandler serves one object.
func detailHandler[T any](a *API, res *Resource, load Loader[T], render Renderer[T]) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := web.PathID(r)
		if err != nil {
			return err
		}
		fe := web.FieldErrors{}
		sel := res.parseSelection(r, fe)
		if err := fe.Err(); err != nil {
			return err
		}
		obj, err := visible(a, r, res, id, load)
		if err != nil {
			return err
		}
		brief, _ := boolParam(r.URL.Query().Get("brief"))
		web.Write(w, http.StatusOK, sel.apply(render(r, obj, brief)))
		return nil
	}
}

// Writer holds a resource's write functions. Create and Update read the form and call
// the store with guard, the scope the written object must end up in.
type Writer struct {
	Fields       []string // keys an update may carry
	CreateFields []string // keys a create may carry, when they differ
	Create       func(ctx context.Context, f *web.Form, guard store.Scope) (int64, error)
	Update       func(ctx context.Context, id int64, f *web.Form, partial bool, guard store.Scope) error
	Delete       func(ctx context.Context, id int64) error
}

// createFields are the keys a create may carry.
func (wr Writer) createFields() []string {
	if wr.CreateFields != nil {
		return wr.CreateFields
	}
	return wr.Fields
}

// createHandler: add permission, then the resource's Create, then 201 with the object.
// A list body is a bulk create (see bulkCreate).
func createHandler[T any](a *API, res *Resource, wr Writer, load Loader[T], idOf IDOf[T], render Renderer[T]) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
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
		if isList(body) {
			return bulkCreate(a, w, r, wr, scope, body, load, idOf, render)
		}
		f, err := web.FormOf(body, wr.createFields()...)
		if err != nil {
			return err
		}
		id, err := wr.Create(r.Context(), f, scope)
		if err != nil {
			return err
		}
		objs, err := load(r.Context(), []int64{id})
		if err != nil || len(objs) == 0 {
			return errors.Join(err, fmt.Errorf("created %s %d vanished", res.Type(), id))
		}
		w.Header().Set("Location", res.objURL(r, id))
		web.Write(w, http.StatusCreated, render(r, objs[0], false))
		return nil
	}
}

// changeable checks view (404) then the action's scope on one object (403).
func changeable[T any](a *API, r *http.Request, res *Resource, id int64, action string, load Loader[T]) (store.Scope, error) {
	if _, err := visible(a, r, res, id, load); err != nil {
		return store.Scope{}, err
	}
	scope, err := a.resScope(r, res, action)
	if err != nil {
		return scope, err
	}
	if !scope.Granted {
		return scope, web.Forbidden("")
	}
	ok, err := a.DB.Exists(r.Context(), res.Type(), id, scope.Expr)
	if err != nil {
		return scope, err
	}
	if !ok {
		return scope, web.Forbidden("")
	}
	return scope, nil
}

// updateHandler serves PUT (partial=false) and PATCH (partial=true).
func updateHandler[T any](a *API, res *Resource, wr Writer, load Loader[T], render Renderer[T], partial bool) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := web.PathID(r)
		if err != nil {
			return err
		}
		scope, err := changeable(a, r, res, id, "change", load)
		if err != nil {
			return err
		}
		f, err := web.DecodeForm(r, wr.Fields...)
		if err != nil {
			return err
		}
		if err := wr.Update(r.Context(), id, f, partial, scope); err != nil {
			return err
		}
		objs, err := load(r.Context(), []int64{id})
		if err != nil || len(objs) == 0 {
			return errors.Join(err, web.NotFound())
		}
		web.Write(w, http.StatusOK, render(r, objs[0], false))
		return nil
	}
}

// deleteHandler: 204 with no body.
func deleteHandler[T any](a *API, res *Resource, wr Writer, load Loader[T]) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := web.PathID(r)
		if err != nil {
			return err
		}
		if _, err := changeable(a, r, res, id, "delete", load); err != nil {
			return err
		}
		if err := wr.Delete(r.Context(), id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// boolParam reads a query-string boolean (true/false/1/0, any case).
func boolParam(v string) (bool, error) { return store.ParseBool(v) }
