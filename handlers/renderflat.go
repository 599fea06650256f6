package handlers

import (
	"strconv"

	"fieldkit/store"
)

// A list page of a model whose objects are their own columns (store.Model.Flattens:
// the command logs) is written from a store.Flat, the values by position, rather than
// from a map per object: the same plan, the same value writers, the same bytes
// (TestFlatPagesAgree).

// flattens reports whether a page of res in shape sh can be written from a store.Flat:
// the model loads flat and no key of the shape is computed by a hook from the row.
func (res *Resource) flattens(sh shape) bool {
	if !res.Model.Flattens() {
		return false
	}
	for _, k := range planOf(res, res.Model, sh) {
		if k.kind == keyComputed {
			return false
		}
	}
	return true
}

// flatKey is a key of a flat page's objects: its plan key, the position of its value
// in the Flat (-1 when not loaded) and, for a kept reference, the plan of the object it
// refers to and the key of the kept name there.
type flatKey struct {
	*planKey
	col     int
	nested  renderPlan
	nameKey string
}

// flatPage appends the page as page does, from objects loaded as a store.Flat.
func (e *jsonWriter) flatPage(res *Resource, fl *store.Flat, pg page, body listBody) []byte {
	p := planOf(res, res.Model, pg.shape())
	keys := make([]flatKey, 0, len(p))
	for i := range p {
		k := &p[i]
		if !pg.sel.shows(k.name) {
			continue
		}
		fk := flatKey{planKey: k, col: fl.Col(k.name)}
		if k.kind == keyField && k.field.KeptName != "" {
			fk.nested, fk.nameKey = planOf(nil, store.ModelFor(k.field.Rel), nestedShape), k.field.KeptKey()
		}
		keys = append(keys, fk)
	}
	return e.envelope(fl.Len(), body, func(i int) { e.flatObject(res, fl, i, keys) })
}

// flatObject appends object i of fl as object appends its Row, with the keys given.
func (e *jsonWriter) flatObject(res *Resource, fl *store.Flat, i int, keys []flatKey) {
	row := fl.Row(i)
	e.buf = append(e.buf, '{')
	first := true
	for j := range keys {
		k := &keys[j]
		mark := e.key(first, k.planKey)
		switch {
		case k.kind == keyDisplay:
			e.buf = appendString(e.buf, fl.Display[i])
		case k.kind == keyURL:
			if !e.url(k.planKey, fl.ID(i)) {
				e.buf = e.buf[:mark]
				continue
			}
		case k.nested != nil:
			if id, name, ok := fl.Kept(i, k.field); ok {
				e.kept(k.nested, k.nameKey, id, name)
			} else {
				e.buf = append(e.buf, "null"...)
			}
		case k.kind == keyID:
			e.any(row[k.col])
		case k.col < 0:
			e.value(res, k.field, nil)
		default:
			e.value(res, k.field, row[k.col])
		}
		first = false
	}
	e.buf = append(e.buf, '}')
}

// kept appends a kept reference as object appends the Row Rows loads for it
// ({"id": id, nameKey: name, "display": name}), in the nested plan p.
func (e *jsonWriter) kept(p renderPlan, nameKey string, id, name any) {
	e.buf = append(e.buf, '{')
	first := true
	for j := range p {
		k := &p[j]
		mark := e.key(first, k)
		switch k.kind {
		case keyID:
			e.any(id)
		case keyDisplay:
			e.any(name)
		case keyURL:
			n, _ := id.(int64)
			if !e.url(k, n) {
				e.buf = e.buf[:mark]
				continue
			}
		default: // a related object's plan has no computed keys
			var v any
			if k.name == nameKey {
				v = name
			}
			e.value(nil, k.field, v)
		}
		first = false
	}
	e.buf = append(e.buf, '}')
}

// url appends the quoted URL of object id at the key's path, and false, having appended
// nothing, when it has none: an object that is gone (a kept reference's), or a type
// that is not served.
func (e *jsonWriter) url(k *planKey, id int64) bool {
	if id == 0 || k.path == "" {
		return false
	}
	e.buf = append(e.buf, '"')
	e.buf = appendStringBody(e.buf, e.base)
	e.buf = appendStringBody(e.buf, k.path)
	e.buf = strconv.AppendInt(e.buf, id, 10)
	e.buf = append(e.buf, '/', '"')
	return true
}
