package handlers

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"fieldkit/store"
)

// The query parameters of list endpoints, derived from each Resource's filters,
// ordering and search.

// kindSchema is the schema of a filter value of a model field kind.
func kindSchema(k store.Kind) obj {
	switch k {
	case store.KindInt:
		return obj{"type": "integer"}
	case store.KindBool:
		return obj{"type": "boolean"}
	case store.KindTime:
		return obj{"type": "string", "format": "date-time", "description": "RFC 3339, or YYYY-MM-DD"}
	case store.KindFloat:
		return obj{"type": "number"}
	}
	return obj{"type": "string"}
}

// lookupsFor are the lookups documented for a filter of a kind (the store accepts a few
// more aliases, such as icontains for ic).
func lookupsFor(k store.Kind, relation bool) []string {
	switch {
	case relation:
		return []string{"n", "isnull"}
	case k == store.KindString:
		return []string{"n", "ic", "nic", "ie", "nie", "isw", "nisw", "iew", "niew", "empty"}
	case k == store.KindBool:
		return nil
	}
	return []string{"n", "lt", "lte", "gt", "gte"}
}

var lookupDocs = map[string]string{
	"n": "not equal to", "ic": "contains (case-insensitive)", "nic": "does not contain",
	"ie": "equals (case-insensitive)", "nie": "does not equal (case-insensitive)",
	"isw": "starts with (case-insensitive)", "nisw": "does not start with",
	"iew": "ends with (case-insensitive)", "niew": "does not end with", "empty": "is empty (true) or not (false)",
	"lt": "less than", "lte": "less than or equal to", "gt": "greater than", "gte": "greater than or equal to",
	"isnull": "is null (true) or not (false)",
}

// filterParams documents the filters of a list: each filter, repeated values OR-ed, and
// its lookups.
func filterParams(res *Resource) []any {
	m := res.Model
	filters := m.Filterable()
	seen := map[string]bool{}
	var out []any
	add := func(name, desc string, schema obj) {
		if !seen[name] {
			seen[name] = true
			out = append(out, queryParam(name, desc, schema, false))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(filters)) {
		f := filters[name]
		kind, relation := filterKind(m, f)
		item := kindSchema(kind)
		if fd, ok := m.Field(f.Path); ok && kind == store.KindString && !fd.OpenChoices {
			if enum := store.ChoiceValues(res.choicesOf(fd)); len(enum) > 0 {
				item["enum"] = anyStrings(enum)
			}
		}
		desc := strings.TrimSuffix(f.Doc, ".") + "."
		if f.Doc == "" {
			desc = "Filter on " + strings.ReplaceAll(f.Path, "__", " → ") + "."
		}
		if kind == store.KindBool {
			add(name, desc+" Accepts true/false/1/0.", item)
		} else {
			add(name, desc+" Repeat to match any of several values.", obj{"type": "array", "items": item})
		}
		if !f.Lookups {
			continue
		}
		for _, lk := range lookupsFor(kind, relation) {
			s := obj{"type": "array", "items": kindSchema(kind)}
			if lk == "isnull" || lk == "empty" {
				s = obj{"type": "boolean"}
			}
			add(name+"__"+lk, "`"+name+"` "+lookupDocs[lk]+".", s)
		}
	}
	return out
}

// filterKind is the kind of a filter's values and whether it names a relation's id.
func filterKind(m *store.Model, f store.Filter) (store.Kind, bool) {
	if f.SQL != nil {
		return f.Kind, false
	}
	path, _ := store.ParseLookup(f.Path)
	k, err := m.KindOf(path)
	if err != nil {
		return store.KindString, false
	}
	return k, m.IsRelation(path)
}

func anyStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// fieldsParam is ?fields= or ?exclude=: comma-separated names of the resource's fields.
func fieldsParam(res *Resource, name, doc string) obj {
	names := slices.Sorted(maps.Keys(res.fieldNames()))
	if name == "exclude" {
		names = append(names, "config_context")
	}
	p := queryParam(name, doc, obj{"type": "array", "items": obj{"type": "string", "enum": anyStrings(names)}}, false)
	p["explode"] = false
	return p
}

// listParamsOf are a list's query parameters: paging, ordering, brief, q and filters.
func listParamsOf(res *Resource) []any {
	ps := []any{
		queryParam("limit", "Number of results to return per page (default 50, at most 1000; 0 means 1000).", obj{"type": "integer", "minimum": 0}, false),
		queryParam("offset", "The initial index from which to return the results.", obj{"type": "integer", "minimum": 0}, false),
		queryParam("cursor", "Cursor pagination, for clients that walk a whole list: send it empty for the first page, then "+
			"follow the next links, which carry the cursor (previous is null). Each page costs the same however far the walk "+
			"is, and rows written meanwhile are neither repeated nor skipped. Not with offset.", obj{"type": "string"}, false),
	}
	m := res.Model
	var enum []any
	sortable := m.Sortable()
	for _, k := range slices.Sorted(maps.Keys(sortable)) {
		enum = append(enum, k, "-"+k)
	}
	p := queryParam("ordering", "Comma-separated fields to sort by; prefix a field with '-' for descending order. Default: "+
		strconv.Quote(m.DefaultOrder)+".", obj{"type": "array", "items": obj{"type": "string", "enum": enum}}, false)
	p["explode"] = false
	ps = append(ps, p)
	ps = append(ps, queryParam("brief", "Return the brief form of each object: id, url, display and key fields.", obj{"type": "boolean"}, false),
		fieldsParam(res, "fields", "Return only these fields of each object (comma-separated)."),
		fieldsParam(res, "exclude", "Leave these fields out of each object (comma-separated), e.g. output on command logs; "+
			"config_context is accepted for NetBox clients (FieldKit has none)."))
	if m.Searchable() {
		ps = append(ps, queryParam("q", "Case-insensitive search.", obj{"type": "string"}, false))
	}
	return append(ps, filterParams(res)...)
}
