package handlers

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"fieldkit/web"
)

// Dynamic field selection, as NetBox's REST API has it: ?fields=id,name keeps only the
// named fields of every object in the response, ?exclude=output drops the named ones
// (both take comma-separated names, and may repeat). The names are the resource's
// top-level fields as its declaration renders them; a name it does not have is a 400
// naming the parameter. config_context may always be excluded: NetBox clients send it
// for devices on every call, and FieldKit has none.

// selection is a parsed ?fields= / ?exclude=; the zero value keeps everything.
type selection struct {
	keep, drop map[string]bool
}

// shows reports whether the selection keeps the top-level key name.
func (s selection) shows(name string) bool { return (s.keep == nil || s.keep[name]) && !s.drop[name] }

// fieldNames are the top-level names a resource's objects have.
func (res *Resource) fieldNames() map[string]bool {
	m := res.Model
	names := map[string]bool{"id": true}
	if m.Owner == "" {
		names["display"], names["url"] = true, true
	}
	for i := range m.Fields {
		if f := &m.Fields[i]; f.Readable() {
			names[f.Name] = true
		}
	}
	return names
}

// parseSelection reads ?fields= and ?exclude=; problems go on fe.
func (res *Resource) parseSelection(r *http.Request, fe web.FieldErrors) selection {
	vals := r.URL.Query()
	names := res.fieldNames()
	read := func(param string) map[string]bool {
		if _, ok := vals[param]; !ok {
			return nil
		}
		out := map[string]bool{}
		var unknown []string
		for _, v := range vals[param] {
			for _, name := range strings.Split(v, ",") {
				name = strings.TrimSpace(name)
				switch {
				case name == "":
				case names[name] || (param == "exclude" && name == "config_context"):
					out[name] = true
				default:
					unknown = append(unknown, name)
				}
			}
		}
		if len(unknown) > 0 {
			fe.Add(param, "Unknown field: "+strings.Join(unknown, ", ")+". Fields: "+strings.Join(slices.Sorted(maps.Keys(names)), ", ")+".")
		}
		return out
	}
	s := selection{keep: read("fields"), drop: read("exclude")}
	if s.keep != nil && len(s.keep) == 0 {
		fe.Add("fields", "Name at least one field.")
	}
	return s
}

// apply trims one rendered object into a new one (a renderer may share its maps);
// anything but an object is returned as it is.
func (s selection) apply(v any) any {
	if s.keep == nil && len(s.drop) == 0 {
		return v
	}
	var obj map[string]any
	switch x := v.(type) {
	case nested:
		obj = x
	case map[string]any:
		obj = x
	default:
		return v
	}
	out := make(nested, len(obj))
	for k, x := range obj {
		if s.shows(k) {
			out[k] = x
		}
	}
	return out
}
