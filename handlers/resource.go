package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"fieldkit/store"
	"fieldkit/web"
)

// A declared resource is served from its store.Model alone: rows are loaded and
// written by the store from the declaration, and parsed, rendered and documented here
// from the same declaration. hooks hold what a declaration cannot say.

// hooks are a resource's exceptions to the generic parse and render.
type hooks struct {
	// check runs after the fields were parsed into v, for rules across fields; cur is
	// the stored object on an update (nil on create), full tells POST and PUT from PATCH.
	// Problems go on f; an error is an internal failure.
	check func(ctx context.Context, a *API, f *web.Form, v store.Values, cur store.Row, full bool) error
	// choices are the allowed values of fields whose choices another package owns.
	choices map[string][]store.Choice
	// computed are read-only fields computed by another package.
	computed map[string]func(store.Row) any
	// beforeDelete may refuse a delete the requester may not make.
	beforeDelete func(ctx context.Context, a *API, id int64) error
	// written is told after an object was created, changed or deleted (the
	// scheduler reads the schedules again).
	written func(a *API)
}

// shape is how much of an object a response shows.
type shape int

const (
	full        shape = iota
	briefShape        // ?brief=true: the nested form and the fields marked Brief
	nestedShape       // wherever another object refers to it
)

// declared builds the handlers of a resource from its model and hooks.
func (a *API) declared(res *Resource) crudSet {
	m, load := res.Model, a.rows(res)
	render := func(r *http.Request, row store.Row, brief bool) any {
		if brief {
			return a.renderObject(r, res, m, row, briefShape)
		}
		return a.renderObject(r, res, m, row, full)
	}
	wr := Writer{
		Fields: writableNames(m, false), CreateFields: writableNames(m, true),
		Create: func(ctx context.Context, f *web.Form, guard store.Scope) (int64, error) {
			v, err := a.parseBody(ctx, res, m, f, true, nil)
			if err != nil {
				return 0, err
			}
			id, err := a.DB.Create(ctx, m, v, guard)
			res.wrote(a, err)
			return id, err
		},
		Update: func(ctx context.Context, id int64, f *web.Form, partial bool, guard store.Scope) error {
			var cur store.Row
			if res.hooks.check != nil {
				rows, err := load(ctx, []int64{id})
				if err != nil || len(rows) == 0 {
					return errors.Join(err, web.NotFound())
				}
				cur = rows[0]
			}
			v, err := a.parseBody(ctx, res, m, f, !partial, cur)
			if err != nil {
				return err
			}
			err = a.DB.Update(ctx, m, id, v, guard)
			res.wrote(a, err)
			return err
		},
		Delete: func(ctx context.Context, id int64) error {
			if res.hooks.beforeDelete != nil {
				if err := res.hooks.beforeDelete(ctx, a, id); err != nil {
					return err
				}
			}
			err := a.DB.Delete(ctx, m, id)
			res.wrote(a, err)
			return err
		},
	}
	if len(wr.CreateFields) == 0 {
		wr = Writer{} // nothing a client may write: a read-only resource, list and detail only
	}
	return crudOf(a, res, wr, load, render)
}

// wrote tells the resource's written hook of a successful write.
func (res *Resource) wrote(a *API, err error) {
	if err == nil && res.hooks.written != nil {
		res.hooks.written(a)
	}
}

// rows is the loader of a declared resource.
func (a *API) rows(res *Resource) Loader[store.Row] {
	return func(ctx context.Context, ids []int64) ([]store.Row, error) { return a.DB.Rows(ctx, res.Model, ids) }
}

// writableNames are the fields a create (or an update) may carry.
func writableNames(m *store.Model, create bool) []string {
	var out []string
	for _, f := range m.Fields {
		if f.Writable(create) {
			out = append(out, f.Name)
		}
	}
	return out
}

// renderObject is an object's JSON in a shape; res (nil for a related object) adds its hooks.
func (a *API) renderObject(r *http.Request, res *Resource, m *store.Model, row store.Row, sh shape) nested {
	return a.renderShown(r, res, m, row, sh, selection{})
}

// renderShown is renderObject with only the top-level keys sel shows (?fields=, ?exclude=).
func (a *API) renderShown(r *http.Request, res *Resource, m *store.Model, row store.Row, sh shape, sel selection) nested {
	n := nested{}
	if sel.shows("id") {
		n["id"] = row["id"]
	}
	if m.Owner == "" {
		if sel.shows("display") {
			n["display"] = row["display"]
		}
		// A kept reference to an object since deleted has no URL, nor does an object the
		// API does not serve (a log's credential set).
		if u := a.urlOf(r, m.Type, row.ID()); sel.shows("url") && row.ID() != 0 && u != "" {
			n["url"] = u
		}
	}
	for i := range m.Fields {
		f := &m.Fields[i]
		if f.Name == "id" || !f.Readable() || (sh == nestedShape && !f.Nested) || (sh == briefShape && !f.Nested && !f.Brief) ||
			!sel.shows(f.Name) {
			continue
		}
		if res != nil && res.hooks.computed[f.Name] != nil {
			n[f.Name] = res.hooks.computed[f.Name](row)
			continue
		}
		n[f.Name] = a.value(r, res, f, row[f.Name])
	}
	return n
}

// value is one field's JSON value.
func (a *API) value(r *http.Request, res *Resource, f *store.Field, v any) any {
	switch x := v.(type) {
	case nil:
		if f.Kind == store.KindStrings {
			return []string{}
		}
		return nil
	case time.Time:
		return web.Stamp(x)
	case string:
		if f.Labeled {
			return labeled(x, res.choicesOf(f))
		}
	case store.Row:
		return a.renderObject(r, nil, store.ModelFor(f.Rel), x, nestedShape)
	case []store.Row:
		out := make([]any, len(x))
		for i, row := range x {
			if f.Child != nil {
				out[i] = a.renderObject(r, nil, f.Child, row, full)
			} else {
				out[i] = a.renderObject(r, nil, store.ModelFor(f.Rel), row, nestedShape)
			}
		}
		return out
	}
	return v
}

// labeled is a choice as NetBox reads it: {"value", "label"}, or null when empty.
func labeled(value string, choices []store.Choice) any {
	if value == "" {
		return nil
	}
	label := value
	for _, c := range choices {
		if c.Value == value {
			label = c.Label
		}
	}
	return map[string]any{"value": value, "label": label}
}

// choicesOf is a field's choices: the declaration's, or the hook's.
func (res *Resource) choicesOf(f *store.Field) []store.Choice {
	if res != nil {
		if cs, ok := res.hooks.choices[f.Name]; ok {
			return cs
		}
	}
	return f.Choices
}

// parseBody reads a write into store.Values by the model's fields. full is POST or PUT:
// required fields must be sent, and children left out are emptied. The error is the
// 400 of every problem found, or an internal failure.
func (a *API) parseBody(ctx context.Context, res *Resource, m *store.Model, f *web.Form, full bool, cur store.Row) (store.Values, error) {
	v := store.Values{}
	create := cur == nil && full
	for i := range m.Fields {
		fd := &m.Fields[i]
		if !fd.Writable(create) {
			continue
		}
		if !f.Has(fd.Name) {
			switch {
			case full && fd.Required:
				f.Errs.Add(fd.Name, "This field is required.")
			case full && fd.Child != nil:
				v[fd.Name] = []store.Values{}
			}
			continue
		}
		if x, ok := a.parseField(ctx, res, fd, f, full); ok && !f.Errs.Has(fd.Name) {
			v[fd.Name] = x
		}
	}
	if res != nil && res.hooks.check != nil {
		if err := res.hooks.check(ctx, a, f, v, cur, full); err != nil {
			return nil, err
		}
	}
	return v, f.Err()
}

// parseField reads one field that was sent; problems go on f.
func (a *API) parseField(ctx context.Context, res *Resource, fd *store.Field, f *web.Form, full bool) (any, bool) {
	name := fd.Name
	if f.IsNull(name) {
		return nullValue(fd, f)
	}
	var v any
	var ok bool
	switch {
	case fd.Ref():
		id, sent := a.ref(ctx, f, name, fd.Rel, false)
		return deref(id), sent && id != nil
	case fd.Join != nil:
		ids, sent := a.refs(ctx, f, name, fd.Rel)
		if sent && fd.Required && len(ids) == 0 {
			f.Errs.Add(name, "This list may not be empty.")
		}
		return ids, sent
	case fd.Child != nil:
		return a.parseChildren(ctx, fd, f)
	case fd.Kind == store.KindString:
		v, ok = a.parseString(res, fd, f)
	case fd.Kind == store.KindInt:
		lo, hi := fd.Min, fd.Max
		if lo == 0 && hi == 0 {
			lo, hi = math.MinInt64, math.MaxInt64
		}
		v, ok = f.Integer(name, false, lo, hi)
	case fd.Kind == store.KindBool:
		v, ok = f.Boolean(name)
	case fd.Kind == store.KindJSON:
		v, ok = parseJSON(fd, f, full)
	case fd.Kind == store.KindStrings:
		v, ok = parseStrings(res, fd, f)
	case fd.Kind == store.KindTime:
		v, ok = parseTime(fd, f)
	default:
		f.Errs.Add(name, "This field cannot be written.")
	}
	if ok && fd.Check != nil {
		checked := v
		if p, isPatch := v.(store.Patch); isPatch {
			checked = map[string]any(p)
		}
		if _, err := fd.Check(checked); err != nil {
			f.Errs.Add(name, err.Error())
			return nil, false
		}
	}
	return v, ok
}

// nullValue is what null means for a field: none (a relation), its Default (a nullable
// field, "" for an interface's mode; custom fields, which null clears), else an error.
func nullValue(fd *store.Field, f *web.Form) (any, bool) {
	switch {
	case fd.Join != nil:
		return []int64{}, true
	case fd.Null || fd.Kind == store.KindJSON:
		return fd.Default, true
	}
	f.Errs.Add(fd.Name, "This field may not be null.")
	return nil, false
}

// parseString reads a string: its length, a choice (sent bare or as read, {"value", …}),
// and the declaration's check, which may normalise it.
func (a *API) parseString(res *Resource, fd *store.Field, f *web.Form) (any, bool) {
	choices := res.choicesOf(fd)
	if len(choices) > 0 || fd.Labeled {
		unwrapChoice(f, fd.Name)
	}
	s, ok := f.Str(fd.Name, false, fd.MaxLen)
	switch {
	case !ok:
		return nil, false
	case fd.Required && strings.TrimSpace(s) == "":
		f.Errs.Add(fd.Name, "This field may not be blank.")
		return nil, false
	case s == "" && fd.Null && fd.Default == "":
		return s, true // a nullable string stored as "" for none: "" means null
	}
	var v any = s
	if fd.Check != nil {
		var err error
		if v, err = fd.Check(s); err != nil {
			f.Errs.Add(fd.Name, err.Error())
			return nil, false
		}
	}
	if len(choices) > 0 && !fd.OpenChoices && !slices.ContainsFunc(choices, func(c store.Choice) bool { return c.Value == v }) {
		f.Errs.Add(fd.Name, fmt.Sprintf("%q is not a valid choice.", v))
		return nil, false
	}
	return v, true
}

// unwrapChoice lets a write send a choice back as it was read ({"value": "active", …})
// as well as the bare value NetBox documents.
func unwrapChoice(f *web.Form, name string) {
	raw, ok := f.Raw[name]
	if !ok || len(raw) == 0 || raw[0] != '{' {
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err == nil {
		if v, ok := obj["value"]; ok {
			f.Raw[name] = v
		}
	}
}

// parseChildren reads a list of nested objects written whole (a command's variables).
// Each element's errors are collected in its own entry, as DRF answers nested lists.
func (a *API) parseChildren(ctx context.Context, fd *store.Field, f *web.Form) (any, bool) {
	raw := f.Raw[fd.Name]
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		f.Errs.Add(fd.Name, `Expected a list of items but got type "`+web.JSONType(raw)+`".`)
		return nil, false
	}
	c := fd.Child
	allowed := append(writableNames(c, true), "id") // a child is sent back as read; its id is ignored
	out := make([]store.Values, len(items))
	errs := make([]web.FieldErrors, len(items))
	seen := map[string]bool{}
	bad := false
	for i, it := range items {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(it, &fields); err != nil || fields == nil {
			errs[i] = web.FieldErrors{}
			errs[i].Add("non_field_errors", fmt.Sprintf("Invalid data. Expected a dictionary, but got %s.", web.JSONType(it)))
			bad = true
			continue
		}
		sub := web.NewForm(fields, allowed...)
		out[i], _ = a.parseBody(ctx, nil, c, sub, true, nil) // its problems are in sub.Errs
		if key, ok := out[i][c.Key].(string); ok && key != "" {
			if seen[key] {
				sub.Errs.Add(c.Key, c.KeyTaken)
			}
			seen[key] = true
		}
		errs[i], bad = sub.Errs, bad || len(sub.Errs) > 0
	}
	if bad {
		list := make([]any, len(errs))
		for i, e := range errs {
			list[i] = e
		}
		f.Errs[fd.Name] = list
		return nil, false
	}
	return out, true
}

// parseJSON reads a JSON field: custom fields are an object (merged by a PATCH); any
// other JSON value is left to the field's check.
func parseJSON(fd *store.Field, f *web.Form, full bool) (any, bool) {
	if _, isObject := fd.Default.(map[string]any); isObject {
		obj, ok := f.Object(fd.Name)
		if ok && !full {
			return store.Patch(obj), true
		}
		return obj, ok
	}
	var v any
	if err := json.Unmarshal(f.Raw[fd.Name], &v); err != nil {
		f.Errs.Add(fd.Name, "Must be valid JSON.")
		return nil, false
	}
	return v, true
}

// parseStrings reads a list of choices, without duplicates; a required one may not be
// empty.
func parseStrings(res *Resource, fd *store.Field, f *web.Form) (any, bool) {
	raw := f.Raw[fd.Name]
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		f.Errs.Add(fd.Name, `Expected a list of items but got type "`+web.JSONType(raw)+`".`)
		return nil, false
	}
	if fd.Required && len(list) == 0 {
		f.Errs.Add(fd.Name, "This list may not be empty.")
		return nil, false
	}
	out := make([]string, 0, len(list))
	choices := res.choicesOf(fd)
	for _, s := range list {
		if !slices.ContainsFunc(choices, func(c store.Choice) bool { return c.Value == s }) {
			f.Errs.Add(fd.Name, fmt.Sprintf("%q is not a valid choice.", s))
			return nil, false
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, true
}

// parseTime reads a datetime.
func parseTime(fd *store.Field, f *web.Form) (any, bool) {
	s, ok := f.Str(fd.Name, false, 0)
	if !ok {
		return nil, false
	}
	t, err := store.ParseTime(s)
	if err != nil {
		f.Errs.Add(fd.Name, "Datetime has wrong format. Use RFC 3339, e.g. 2030-01-02T15:04:05Z.")
		return nil, false
	}
	return t, true
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
