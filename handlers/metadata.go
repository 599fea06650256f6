package handlers

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"

	"fieldkit/store"
	"fieldkit/web"
)

// metadata answers OPTIONS on a resource's list path (method POST) and object path
// (method PUT) as Django REST framework does: the resource's name and, under actions,
// the fields that method takes, with their type, label, help, limits and choices, in
// the declaration's order. An action the user may not take is left out. The web UI
// builds its forms from this; a reference also carries list_url, where its choices are.
// Beside DRF's keys, ordering names what ?ordering= accepts: the web UI's lists make
// those columns sortable.
func (a *API) metadata(res *Resource, method string) web.HandlerFunc {
	action, path := "add", res.Path
	if method == http.MethodPut {
		action, path = "change", res.Path+":id/"
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		actions := map[string]any{}
		scope, err := a.resScope(r, res, action)
		if err != nil {
			return err
		}
		if scope.Granted && a.routed(method, path) {
			actions[method] = a.fieldsMeta(res, res.Model, method == http.MethodPost)
		}
		web.Write(w, http.StatusOK, map[string]any{
			"name": plural(res.Name()), "description": "", "actions": actions,
			"renders": []string{"application/json"}, "parses": []string{"application/json"},
			"ordering": slices.Sorted(maps.Keys(res.Model.Sortable())),
		})
		return nil
	}
}

// fieldsMeta describes a model's fields in order.
func (a *API) fieldsMeta(res *Resource, m *store.Model, create bool) orderedMeta {
	var out orderedMeta
	for i := range m.Fields {
		f := &m.Fields[i]
		if f.Access == store.Internal || (f.Access == store.CreateOnly && !create) {
			continue
		}
		out = append(out, namedMeta{f.Name, a.fieldMeta(res, f)})
	}
	return out
}

// fieldMeta describes one field as DRF's SimpleMetadata would.
func (a *API) fieldMeta(res *Resource, f *store.Field) map[string]any {
	m := map[string]any{"required": f.Required, "read_only": f.Access == store.ReadOnly, "label": fieldLabel(f)}
	if f.Doc != "" {
		m["help_text"] = f.Doc
	}
	if f.Access == store.WriteOnly || f.Access == store.CreateOnly {
		m["write_only"] = true
	}
	if f.Null {
		m["allow_null"] = true
	}
	if f.MaxLen > 0 {
		m["max_length"] = f.MaxLen
	}
	if f.Min != 0 || f.Max != 0 {
		m["min_value"], m["max_value"] = f.Min, f.Max
	}
	if f.Default != nil {
		m["default"] = f.Default
	}
	choices := res.choicesOf(f)
	switch {
	case f.Child != nil:
		m["type"] = "list"
		m["child"] = map[string]any{"type": "nested object", "children": a.fieldsMeta(nil, f.Child, true)}
	case f.Join != nil:
		m["type"] = "list"
		m["child"] = map[string]any{"type": "field", "list_url": a.pathOf(f.Rel)}
	case f.Rel != "":
		m["type"], m["list_url"] = "field", a.pathOf(f.Rel)
	case f.Kind == store.KindStrings:
		m["type"] = "multiple choice"
	case len(choices) > 0 && !f.OpenChoices:
		m["type"] = "choice"
	default:
		m["type"] = map[store.Kind]string{store.KindInt: "integer", store.KindString: "string", store.KindBool: "boolean",
			store.KindTime: "datetime", store.KindFloat: "float", store.KindJSON: "json"}[f.Kind]
	}
	if len(choices) > 0 {
		list := make([]map[string]string, len(choices))
		for i, c := range choices {
			list[i] = map[string]string{"value": c.Value, "display_name": c.Label}
		}
		m["choices"] = list
	}
	return m
}

// fieldLabel is the field's label: the declared one, else its name as DRF makes it.
func fieldLabel(f *store.Field) string {
	if f.Label != "" {
		return f.Label
	}
	s := strings.ReplaceAll(f.Name, "_", " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// pathOf is the list path of an object type.
func (a *API) pathOf(objectType string) string {
	for _, res := range resources {
		if res.Type() == objectType {
			return res.Path
		}
	}
	return ""
}

// orderedMeta is field name → description, encoded in the declaration's order.
type orderedMeta []namedMeta

type namedMeta struct {
	name string
	meta map[string]any
}

// MarshalJSON writes the fields as one object, in order.
func (o orderedMeta) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(f.name)
		v, err := json.Marshal(f.meta)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
