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

// flatPage appends the page as page does, from objects loaded as a store.Flat.
func (e *jsonWriter) flatPage(res *Resource, fl *store.Flat, pg page, body listBody) []byte {
	p := planOf(res, res.Model, pg.shape())
	cols := make([]int, len(p))
	for i := range p {
		cols[i] = fl.Col(p[i].name)
	}
	ref := store.Row{}
	return e.envelope(fl.Len(), body, func(i int) { e.flatObject(res, fl, i, p, cols, pg.sel, ref) })
}

// flatObject appends object i of fl as object appends its Row: p is the plan of the
// page's shape, cols the position of each of its keys in fl (-1 when not loaded), ref
// a Row to reuse for kept references.
func (e *jsonWriter) flatObject(res *Resource, fl *store.Flat, i int, p renderPlan, cols []int, sel selection, ref store.Row) {
	row := fl.Row(i)
	e.buf = append(e.buf, '{')
	first := true
	for j := range p {
		k := &p[j]
		if (sel.keep != nil && !sel.keep[k.name]) || sel.drop[k.name] {
			continue
		}
		mark := len(e.buf)
		if !first {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, k.prefix...)
		switch {
		case k.kind == keyDisplay:
			e.buf = appendString(e.buf, fl.Display[i])
		case k.kind == keyURL:
			if !e.url(k, fl.ID(i)) {
				e.buf = e.buf[:mark]
				continue
			}
		case k.kind == keyField && k.field.KeptName != "":
			e.value(res, k.field, fl.Kept(i, k.field, ref))
		case k.kind == keyID:
			e.any(row[cols[j]])
		case cols[j] < 0:
			e.value(res, k.field, nil)
		default:
			e.value(res, k.field, row[cols[j]])
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
