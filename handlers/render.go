package handlers

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"fieldkit/store"
	"fieldkit/web"
)

// A list page is written straight from the loaded rows into one byte slice, with the
// same rules as renderObject and value (the reference, which detail and write responses
// still take) and the same bytes as web.Write would give that object: keys in sorted
// order, as encoding/json writes a map, no HTML escaping, a newline at the end. Going
// through map[string]any cost a third of a log page's CPU in building the maps and
// another third in encoding/json sorting and reflecting over them.
// TestFastRendererAgrees holds the two to the same bytes on every resource.

// planKey is one top-level key of an object in a shape.
type planKey struct {
	name     string
	prefix   string // `"name":`
	kind     keyKind
	path     string // keyURL: the path of the model's resource, "" when it is not served
	field    *store.Field
	computed func(store.Row) any
}

type keyKind int

const (
	keyID keyKind = iota
	keyDisplay
	keyURL
	keyField
	keyComputed
)

// renderPlan is the keys of a model's objects in one shape, in the order they are written.
type renderPlan []planKey

type planID struct {
	res *Resource
	m   *store.Model
	sh  shape
}

var plans sync.Map // planID → renderPlan

// planOf is the plan of the model's objects in a shape; res (nil for a related object)
// adds its computed hooks, as renderObject does.
func planOf(res *Resource, m *store.Model, sh shape) renderPlan {
	id := planID{res, m, sh}
	if p, ok := plans.Load(id); ok {
		return p.(renderPlan)
	}
	keys := map[string]planKey{"id": {kind: keyID}}
	if m.Owner == "" {
		keys["display"], keys["url"] = planKey{kind: keyDisplay}, planKey{kind: keyURL, path: pathOf(m.Type)}
	}
	for i := range m.Fields {
		f := &m.Fields[i]
		if f.Name == "id" || !f.Readable() || (sh == nestedShape && !f.Nested) || (sh == briefShape && !f.Nested && !f.Brief) {
			continue
		}
		k := planKey{kind: keyField, field: f}
		if res != nil && res.hooks.computed[f.Name] != nil {
			k = planKey{kind: keyComputed, field: f, computed: res.hooks.computed[f.Name]}
		}
		keys[f.Name] = k
	}
	p := make(renderPlan, 0, len(keys))
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		k := keys[name]
		k.name, k.prefix = name, string(appendString(nil, name))+":"
		p = append(p, k)
	}
	plans.Store(id, p)
	return p
}

// jsonWriter appends objects of one request: base is the scheme and host its URLs start with.
type jsonWriter struct {
	a    *API
	base string
	buf  []byte
}

func (a *API) newJSONWriter(r *http.Request, size int) *jsonWriter {
	return &jsonWriter{a: a, base: web.URL(r, ""), buf: make([]byte, 0, size)}
}

// object appends one object in a shape, keeping only the top-level keys sel keeps.
func (e *jsonWriter) object(res *Resource, m *store.Model, row store.Row, sh shape, sel selection) {
	e.buf = append(e.buf, '{')
	first := true
	p := planOf(res, m, sh)
	for i := range p {
		k := &p[i]
		if !sel.shows(k.name) {
			continue
		}
		mark := e.key(first, k)
		switch k.kind {
		case keyID:
			e.any(row["id"])
		case keyDisplay:
			e.any(row["display"])
		case keyURL:
			if !e.url(k, row.ID()) {
				e.buf = e.buf[:mark] // a kept reference to a deleted object has no URL
				continue
			}
		case keyComputed:
			e.any(k.computed(row))
		default:
			e.value(res, k.field, row[k.name])
		}
		first = false
	}
	e.buf = append(e.buf, '}')
}

// key appends the comma before every key of an object but the first, and key k's
// quoted name and colon; it returns where the key began, to cut back to when the
// object leaves its value out.
func (e *jsonWriter) key(first bool, k *planKey) int {
	mark := len(e.buf)
	if !first {
		e.buf = append(e.buf, ',')
	}
	e.buf = append(e.buf, k.prefix...)
	return mark
}

// value appends one field's value, as value renders it.
func (e *jsonWriter) value(res *Resource, f *store.Field, v any) {
	switch x := v.(type) {
	case nil:
		if f.Kind == store.KindStrings {
			e.buf = append(e.buf, "[]"...)
		} else {
			e.buf = append(e.buf, "null"...)
		}
	case time.Time:
		e.stamp(x)
	case string:
		if !f.Labeled {
			e.buf = appendString(e.buf, x)
			return
		}
		if x == "" {
			e.buf = append(e.buf, "null"...)
			return
		}
		label := x
		for _, c := range res.choicesOf(f) {
			if c.Value == x {
				label = c.Label
			}
		}
		e.buf = append(e.buf, `{"label":`...)
		e.buf = appendString(e.buf, label)
		e.buf = append(e.buf, `,"value":`...)
		e.buf = appendString(e.buf, x)
		e.buf = append(e.buf, '}')
	case store.Row:
		e.object(nil, store.ModelFor(f.Rel), x, nestedShape, selection{})
	case []store.Row:
		e.buf = append(e.buf, '[')
		for i, row := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if f.Child != nil {
				e.object(nil, f.Child, row, full, selection{})
			} else {
				e.object(nil, store.ModelFor(f.Rel), row, nestedShape, selection{})
			}
		}
		e.buf = append(e.buf, ']')
	default:
		e.any(v)
	}
}

func (e *jsonWriter) stamp(t time.Time) {
	if t.IsZero() {
		e.buf = append(e.buf, "null"...)
		return
	}
	e.buf = append(e.buf, '"')
	e.buf = store.AppendStamp(e.buf, t)
	e.buf = append(e.buf, '"')
}

// any appends a value of a type the store or a hook gives; the rare others go through
// encoding/json.
func (e *jsonWriter) any(v any) {
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case float64:
		if b, ok := appendFloat(e.buf, x); ok {
			e.buf = b
			return
		}
		e.fallback(v)
	case string:
		e.buf = appendString(e.buf, x)
	case json.RawMessage:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return
		}
		var out bytes.Buffer
		if json.Compact(&out, x) != nil {
			e.fallback(v)
			return
		}
		e.buf = append(e.buf, out.Bytes()...)
	case []string:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return
		}
		e.buf = append(e.buf, '[')
		for i, s := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = appendString(e.buf, s)
		}
		e.buf = append(e.buf, ']')
	default:
		e.fallback(v)
	}
}

// fallback appends v as web.Write encodes it. A value encoding/json refuses comes out
// as null, where web.Write would have cut the response short.
func (e *jsonWriter) fallback(v any) {
	b, err := web.Marshal(v)
	if err != nil {
		e.buf = append(e.buf, "null"...)
		return
	}
	e.buf = append(e.buf, bytes.TrimSuffix(b, []byte("\n"))...)
}

// appendFloat writes a float64 as encoding/json does: the shortest decimal that reads
// back the same, in exponent form below 1e-6 and from 1e21 on, the exponent without a
// leading zero. NaN and infinities have no JSON form.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendString writes s as a JSON string the way web.Write does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendStringBody(b, s)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendStringBody writes s escaped, without the quotes: quote, backslash and control
// characters escaped (the usual short forms where JSON has one), invalid UTF-8 as
// U+FFFD, and U+2028 and U+2029 escaped for JavaScript's sake; <, > and & as they are.
func appendStringBody(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

// page appends the paginated envelope around the rows, each rendered in the page's shape
// and trimmed by its selection, and the newline web.Write ends with.
func (e *jsonWriter) page(res *Resource, rows []store.Row, pg page, body listBody) []byte {
	sh := pg.shape()
	return e.envelope(len(rows), body, func(i int) { e.object(res, res.Model, rows[i], sh, pg.sel) })
}

// shape is the shape of the page's objects.
func (pg page) shape() shape {
	if pg.brief {
		return briefShape
	}
	return full
}

// envelope appends the paginated envelope around n objects, each appended by object,
// and the newline web.Write ends with.
func (e *jsonWriter) envelope(n int, body listBody, object func(i int)) []byte {
	e.buf = append(e.buf, `{"count":`...)
	e.buf = strconv.AppendInt(e.buf, int64(body.Count), 10)
	for _, l := range []struct {
		key  string
		link *string
	}{{`,"next":`, body.Next}, {`,"previous":`, body.Previous}} {
		e.buf = append(e.buf, l.key...)
		if l.link == nil {
			e.buf = append(e.buf, "null"...)
		} else {
			e.buf = appendString(e.buf, *l.link)
		}
	}
	e.buf = append(e.buf, `,"results":[`...)
	for i := range n {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		object(i)
	}
	e.buf = append(e.buf, "]}\n"...)
	return e.buf
}
