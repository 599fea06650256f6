package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"fieldkit/store"
)

// resourcePaths adds a resource's routed operations and its component schemas.
func (a *API) resourcePaths(paths, schemas obj, res *Resource) {
	name, list, detail := res.Name(), res.Path, res.Path+":id/"
	addResourceSchemas(schemas, res)
	write := ref("Writable" + name + "Request")
	ops := []operation{
		{method: http.MethodGet, path: list, id: opID(list, "list"), summary: "List " + plural(name),
			params: listParamsOf(res), errors: map[string]string{"404": "InvalidPage"}, okStatus: "200", ok: jsonResponse("A page of "+plural(name)+" (brief forms with brief=true).", ref("Paginated"+name+"List"))},
		{method: http.MethodPost, path: list, id: opID(list, "create"), summary: "Create a " + name + " or several",
			desc: "One object, or a list of them (a bulk create: " + bulkDoc + ").",
			body: obj{"oneOf": []any{write, bulkOf(write)}}, okStatus: "201", bulk: true,
			ok: jsonResponse("The created "+name+", or the list of them in request order.", obj{"oneOf": []any{ref(createdName(res)), bulkOf(ref(createdName(res)))}})},
		{method: http.MethodPut, path: list, id: opID(list, "bulk_update"), summary: "Replace several " + plural(name),
			desc: "Full update of each listed object (required fields must be sent); " + bulkDoc + ". An id that " +
				"does not exist or is not visible is that element's 400.",
			body: bulkOf(ref("BulkWritable" + name + "Request")), okStatus: "200", bulk: true,
			ok: jsonResponse("The updated "+plural(name)+", in request order.", bulkOf(ref(name)))},
		{method: http.MethodPatch, path: list, id: opID(list, "bulk_partial_update"), summary: "Update some fields of several " + plural(name),
			desc: "Each element names its object by id; " + bulkDoc + ". An id that does not exist or is not " +
				"visible is that element's 400.",
			body: bulkOf(ref("BulkPatchedWritable" + name + "Request")), okStatus: "200", bulk: true,
			ok: jsonResponse("The updated "+plural(name)+", in request order.", bulkOf(ref(name)))},
		{method: http.MethodDelete, path: list, id: opID(list, "bulk_destroy"), summary: "Delete several " + plural(name),
			desc: "Each element is {\"id\": n}; " + bulkDoc + ".",
			body: bulkOf(ref("BulkObjectID")), okStatus: "204", bulk: true, ok: obj{"description": "Deleted; no body."},
			errors: map[string]string{"409": "Conflict"}},
		{method: http.MethodGet, path: detail, id: opID(list, "retrieve"), summary: "Get a " + name,
			params: []any{queryParam("brief", "Return the brief form: id, url, display and key fields.", obj{"type": "boolean"}, false),
				fieldsParam(res, "fields", "Return only these fields (comma-separated)."),
				fieldsParam(res, "exclude", "Leave these fields out (comma-separated).")},
			okStatus: "200", ok: jsonResponse("The "+name+"; its brief form with brief=true, the fields chosen with fields= or exclude=.", fullOrBrief(name))},
		{method: http.MethodPut, path: detail, id: opID(list, "update"), summary: "Replace a " + name,
			desc: "Full update: required fields must be sent.", body: write, okStatus: "200", ok: jsonResponse("The updated "+name+".", ref(name))},
		{method: http.MethodPatch, path: detail, id: opID(list, "partial_update"), summary: "Update some fields of a " + name,
			body: ref("PatchedWritable" + name + "Request"), okStatus: "200", ok: jsonResponse("The updated "+name+".", ref(name))},
		{method: http.MethodDelete, path: detail, id: opID(list, "destroy"), summary: "Delete a " + name,
			okStatus: "204", ok: obj{"description": "Deleted; no body."}, errors: map[string]string{"400": "NotDeletable", "409": "Conflict"}},
		{method: http.MethodOptions, path: list, id: opID(list, "metadata"), summary: "Describe the fields a create takes",
			desc: "Django REST framework's metadata: actions.POST lists each field with its type, label, help, limits " +
				"and choices, in order; it is absent when the user may not create.",
			okStatus: "200", ok: jsonResponse("The metadata.", ref("Metadata"))},
		{method: http.MethodOptions, path: detail, id: opID(list, "object_metadata"), summary: "Describe the fields an update takes",
			desc: "As on the list, under actions.PUT.", okStatus: "200", ok: jsonResponse("The metadata.", ref("Metadata"))},
	}
	for _, op := range ops {
		if a.routed(op.method, op.path) {
			a.put(paths, op)
		}
	}
}

func plural(name string) string {
	switch {
	case name == "":
		return name
	case name[len(name)-1] == 's':
		return name + "es"
	case name[len(name)-1] == 'y':
		return name[:len(name)-1] + "ies"
	}
	return name + "s"
}

// addResourceSchemas adds <Name>, Brief<Name>, Paginated<Name>List and, when the resource
// has writable fields, Writable<Name>Request and PatchedWritable<Name>Request.
func addResourceSchemas(schemas obj, res *Resource) {
	name := res.Name()
	read, write, patch := objectSchemas(schemas, fieldDocs(res, res.Model))
	schemas[name] = read
	schemas["Paginated"+name+"List"] = obj{
		"type": "object", "required": []any{"count", "next", "previous", "results"},
		"properties": obj{
			"count":    obj{"type": "integer", "example": 123},
			"next":     obj{"type": "string", "format": "uri", "nullable": true, "description": "Absolute URL of the next page."},
			"previous": obj{"type": "string", "format": "uri", "nullable": true, "description": "Absolute URL of the previous page."},
			"results":  obj{"type": "array", "items": fullOrBrief(name)},
		},
	}
	addBrief(schemas, name)
	partial := obj{"type": "object", "properties": read["properties"], "description": "The fields chosen by fields= or exclude=."}
	schemas[name+"Fields"] = partial
	if created := createdSchema(schemas, res, read); created != nil {
		schemas["Created"+name] = created
	}
	if write != nil {
		schemas["Writable"+name+"Request"] = write
		schemas["PatchedWritable"+name+"Request"] = patch
		schemas["BulkWritable"+name+"Request"] = withID(write)
		schemas["BulkPatchedWritable"+name+"Request"] = withID(patch)
	}
}

// createdSchema is the object as its create answers it, when that shows more than a
// read does: the fields written on create only (a token's key), shown that once. It is
// nil when a create answers as a read.
func createdSchema(schemas obj, res *Resource, read obj) obj {
	var extra []FieldDoc
	for _, f := range fieldDocs(res, res.Model) {
		if f.CreateOnly {
			f.WriteOnly, f.ReadOnly = false, true
			extra = append(extra, f)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	p := obj{}
	for k, v := range read["properties"].(obj) {
		p[k] = v
	}
	r, _ := read["required"].([]any)
	req := append([]any{}, r...)
	for _, f := range extra {
		p[f.Name] = fieldSchema(schemas, f, false)
		req = append(req, f.Name)
	}
	return obj{"type": "object", "properties": p, "required": req}
}

// createdName is the schema a create of the resource answers with.
func createdName(res *Resource) string {
	for _, f := range res.Model.Fields {
		if f.Access == store.CreateOnly {
			return "Created" + res.Name()
		}
	}
	return res.Name()
}

// fullOrBrief is an object as a read answers it: whole, its brief form when the request
// says brief=true, or the fields fields= or exclude= chose (<Name>Fields).
func fullOrBrief(name string) obj {
	return obj{"anyOf": []any{ref(name), ref("Brief" + name), ref(name + "Fields")}}
}

// bulkDoc is what every bulk write shares.
const bulkDoc = "1 to 1000 elements, each checked as the single-object request checks it, all written in " +
	"one transaction or none: a 400 answers a list with one entry per element in request order ({} for a good " +
	"one), a 403 means an element is outside the permitted scope"

// bulkOf is the schema of a bulk body or answer: a list of items.
func bulkOf(items obj) obj {
	return obj{"type": "array", "items": items, "minItems": 1, "maxItems": maxBulk}
}

// withID is a write schema with the required id that names the object in a bulk update.
func withID(s obj) obj {
	p := obj{"id": obj{"type": "integer", "minimum": 1}}
	for k, v := range s["properties"].(obj) {
		p[k] = v
	}
	req := []any{"id"}
	if r, ok := s["required"].([]any); ok {
		req = append(req, r...)
	}
	return obj{"type": "object", "properties": p, "required": req, "additionalProperties": false}
}

// objectSchemas builds the read, write and patch schemas of a field table; write and
// patch are nil when no field is writable.
func objectSchemas(schemas obj, fields []FieldDoc) (read, write, patch obj) {
	rp, wp, pp := obj{}, obj{}, obj{}
	var readReq, writeReq []any
	for _, f := range fields {
		if !f.WriteOnly {
			rp[f.Name] = fieldSchema(schemas, f, false)
			readReq = append(readReq, f.Name)
		}
		if !f.ReadOnly {
			wp[f.Name] = fieldSchema(schemas, f, true)
			if f.Required {
				writeReq = append(writeReq, f.Name)
			}
			if !f.CreateOnly {
				pp[f.Name] = wp[f.Name]
			}
		}
	}
	read = obj{"type": "object", "properties": rp}
	if len(readReq) > 0 {
		read["required"] = readReq
	}
	if len(wp) == 0 {
		return read, nil, nil
	}
	write = obj{"type": "object", "properties": wp, "additionalProperties": false}
	if len(writeReq) > 0 {
		write["required"] = writeReq
	}
	return read, write, obj{"type": "object", "properties": pp, "additionalProperties": false}
}

// addEmbedded adds an object nested by value (not by reference) in a resource: <Name>
// and Writable<Name>Request.
func addEmbedded(schemas obj, m *store.Model) {
	if _, ok := schemas[m.Name]; ok {
		return
	}
	schemas[m.Name] = obj{} // placeholder while its own fields are built
	read, write, _ := objectSchemas(schemas, fieldDocs(nil, m))
	schemas[m.Name] = read
	if write != nil {
		schemas["Writable"+m.Name+"Request"] = write
	}
}

// primitive maps FieldDoc types to schemas.
func primitive(t string) (obj, bool) {
	switch t {
	case "integer", "string", "boolean":
		return obj{"type": t}, true
	case "number":
		return obj{"type": "number", "format": "double"}, true
	case "datetime":
		return obj{"type": "string", "format": "date-time"}, true
	case "date":
		return obj{"type": "string", "format": "date"}, true
	case "object", "":
		return obj{"type": "object", "additionalProperties": true}, true
	}
	return nil, false
}

// fieldSchema is one property of a read (write=false) or request schema.
func fieldSchema(schemas obj, f FieldDoc, write bool) obj {
	var s obj
	switch f.Type {
	case "array":
		s = obj{"type": "array", "items": namedSchema(schemas, f.Items, write)}
	case "object":
		s = namedSchema(schemas, f.Ref, write)
	default:
		if s, _ = primitive(f.Type); s == nil {
			s = obj{}
		}
	}
	if f.Labeled && !write {
		// A choice reads as {"value", "label"} (null when empty) and is written as its value.
		value := obj{"type": "string"}
		if len(f.Enum) > 0 {
			value["enum"] = enumValues(f)
		}
		s = obj{"type": "object", "required": []any{"value", "label"},
			"properties": obj{"value": value, "label": obj{"type": "string"}}}
		f.Enum, f.MaxLength = nil, 0
	}
	deco := obj{}
	if f.Doc != "" {
		deco["description"] = f.Doc
	}
	if len(f.Enum) > 0 && f.Type == "array" {
		s["items"].(obj)["enum"] = enumValues(f)
	} else if len(f.Enum) > 0 {
		deco["enum"] = enumValues(f)
	}
	if f.MaxLength > 0 && f.Type == "string" {
		deco["maxLength"] = f.MaxLength
	}
	if f.Default != nil && write {
		deco["default"] = f.Default
	}
	if f.Nullable {
		// OpenAPI 3.0.3 needs a type beside nullable: a nullable reference is an
		// object, a nullable id-or-object is either one or null.
		if opts, ok := s["oneOf"].([]any); ok {
			for _, o := range opts {
				o.(obj)["nullable"] = true
			}
			s["anyOf"] = opts
			delete(s, "oneOf")
		} else {
			deco["nullable"] = true
		}
		if r, isRef := s["$ref"].(string); isRef && !composite(schemas, r) {
			s = obj{"type": "object", "allOf": []any{s}}
		}
		if e, ok := deco["enum"].([]any); ok {
			deco["enum"] = append(e, nil)
		}
	}
	if f.ReadOnly && !write {
		deco["readOnly"] = true
	}
	if f.WriteOnly && write {
		deco["writeOnly"] = true
	}
	if len(deco) == 0 {
		return s
	}
	if _, isRef := s["$ref"]; isRef {
		// Siblings of $ref are ignored in OpenAPI 3.0: wrap it.
		s = obj{"allOf": []any{s}}
	}
	for k, v := range deco {
		s[k] = v
	}
	return s
}

// composite reports whether a referenced component is a choice of schemas (anyOf,
// oneOf) with no type of its own: its alternatives say whether null is one.
func composite(schemas obj, ref string) bool {
	c, _ := schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(obj)
	return c["type"] == nil && (c["anyOf"] != nil || c["oneOf"] != nil)
}

func enumValues(f FieldDoc) []any {
	out := make([]any, 0, len(f.Enum))
	for _, e := range f.Enum {
		if f.Type == "integer" {
			if n, err := strconv.Atoi(e); err == nil {
				out = append(out, n)
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// namedSchema resolves a Ref or Items name: a primitive, a schema of opSchemas(), or a
// resource (a reference).
func namedSchema(schemas obj, name string, write bool) obj {
	if s, ok := primitive(name); ok {
		return s
	}
	if m := keptModel(name); m != nil {
		if _, done := schemas[name]; !done {
			schemas[name] = keptRefSchema(m)
		}
		return ref(name)
	}
	if c := childModel(name); c != nil {
		addEmbedded(schemas, c)
		if _, ok := schemas["Writable"+name+"Request"]; ok && write {
			return ref("Writable" + name + "Request")
		}
		return ref(name)
	}
	if _, ok := schemas[name]; ok {
		if _, isResource := resourceNamed(name); !isResource {
			return ref(name)
		}
	}
	// "NestedSite" names the brief form of Site, as NetBox's serializers do.
	if rest, ok := strings.CutPrefix(name, "Nested"); ok && rest != "" {
		name = rest
	}
	if write {
		return obj{
			"oneOf": []any{
				obj{"type": "integer", "description": "The id of the " + name + "."},
				obj{"type": "object", "additionalProperties": true, "description": "Unique fields of the " + name + ", e.g. {\"name\": \"…\"}."},
			},
		}
	}
	addBrief(schemas, name)
	return ref("Brief" + name)
}

// keptModel is the model of a kept reference's schema name ("KeptDevice"), or nil.
func keptModel(name string) *store.Model {
	rest, ok := strings.CutPrefix(name, "Kept")
	if !ok {
		return nil
	}
	for _, t := range store.ObjectTypes() {
		if m := store.ModelFor(t); m != nil && m.Name == rest {
			return m
		}
	}
	return nil
}

func resourceNamed(name string) (*Resource, bool) {
	for _, r := range resources {
		if r.Name() == name {
			return r, true
		}
	}
	return nil, false
}

// childModel is the model of objects a resource nests by value, by name.
func childModel(name string) *store.Model {
	for _, r := range resources {
		for _, f := range r.Model.Fields {
			if f.Child != nil && f.Child.Name == name {
				return f.Child
			}
		}
	}
	return nil
}

// addBrief adds Brief<name>: id, url, display and the nested fields of the resource
// named, or id, url and display alone. It is the form a reference reads as; ?brief=true
// reads the same and also the fields marked Brief, which a reference leaves out.
func addBrief(schemas obj, name string) {
	key := "Brief" + name
	if _, ok := schemas[key]; ok {
		return
	}
	schemas[key] = obj{} // placeholder: a brief may refer to another brief
	props := obj{
		"id":      obj{"type": "integer", "readOnly": true},
		"url":     obj{"type": "string", "format": "uri", "readOnly": true},
		"display": obj{"type": "string", "readOnly": true},
	}
	required := []any{"id", "url", "display"}
	res, ok := resourceNamed(name)
	if !ok {
		// An object type the API does not serve (a schedule's credential set): no URL.
		if m := keptModel("Kept" + name); m != nil {
			res = &Resource{Model: m}
			delete(props, "url")
			required = []any{"id", "display"}
		}
	}
	if res != nil {
		for _, f := range res.Model.Fields {
			if (f.Nested || f.Brief) && f.Readable() {
				d := docOf(res, &f)
				d.ReadOnly, d.Required, d.MaxLength, d.Doc = false, false, 0, ""
				props[f.Name] = fieldSchema(schemas, d, false)
			}
		}
	}
	schemas[key] = obj{"type": "object", "properties": props, "required": required}
}

// FieldDoc is one field as the schema describes it.
type FieldDoc struct {
	Name       string
	Type       string // integer, string, boolean, number, datetime, object, array
	Items      string // element type for arrays (a type or a nested resource name)
	Ref        string // nested resource name for objects
	ReadOnly   bool
	WriteOnly  bool
	CreateOnly bool // written on create only (a token's key)
	Labeled    bool // a choice read as {"value", "label"}, written as its value
	Required   bool
	Nullable   bool
	Enum       []string
	MaxLength  int
	Default    any // a string or boolean stored when a create leaves the field out
	Doc        string
}

// fieldDocs describes a model's fields for the schema: id, url and display, then each
// field the API reads or writes. res (nil for a nested model) adds its hooks' choices.
func fieldDocs(res *Resource, m *store.Model) []FieldDoc {
	out := []FieldDoc{{Name: "id", Type: "integer", ReadOnly: true}}
	if m.Owner == "" {
		out = append(out, FieldDoc{Name: "url", Type: "string", ReadOnly: true},
			FieldDoc{Name: "display", Type: "string", ReadOnly: true})
	}
	for i := range m.Fields {
		if f := &m.Fields[i]; f.Name != "id" && f.Access != store.Internal {
			out = append(out, docOf(res, f))
		}
	}
	return out
}

// apiDoc is a field's description with what the API adds to it: how a choice reads, how
// custom fields are written.
func apiDoc(f *store.Field) string {
	var parts []string
	if f.Doc != "" {
		parts = append(parts, f.Doc)
	}
	if f.Labeled {
		parts = append(parts, `read as {"value", "label"}`)
	}
	if f.Kind == store.KindJSON && !f.Null && f.Default != nil {
		parts = append(parts, "a PATCH merges keys, a PUT replaces them, null clears them")
	}
	return strings.Join(parts, "; ")
}

// docOf describes one field.
func docOf(res *Resource, f *store.Field) FieldDoc {
	d := FieldDoc{Name: f.Name, ReadOnly: f.Access == store.ReadOnly, Required: f.Required, Nullable: f.Null,
		WriteOnly: f.Access == store.WriteOnly || f.Access == store.CreateOnly, CreateOnly: f.Access == store.CreateOnly,
		MaxLength: f.MaxLen, Doc: apiDoc(f), Labeled: f.Labeled}
	switch f.Default.(type) {
	case string, bool:
		d.Default = f.Default
	}
	switch {
	case f.Schema != "":
		d.Type, d.Ref = "object", f.Schema
	case f.Child != nil:
		d.Type, d.Items = "array", f.Child.Name
	case f.Join != nil:
		d.Type, d.Items = "array", store.ModelFor(f.Rel).Name
	case f.KeptName != "":
		d.Type, d.Ref = "object", "Kept"+store.ModelFor(f.Rel).Name
	case f.Rel != "":
		d.Type, d.Ref = "object", store.ModelFor(f.Rel).Name
	default:
		d.Type = map[store.Kind]string{store.KindInt: "integer", store.KindString: "string", store.KindBool: "boolean",
			store.KindTime: "datetime", store.KindFloat: "number", store.KindJSON: "object", store.KindStrings: "array"}[f.Kind]
		if f.Kind == store.KindStrings {
			d.Items = "string"
		}
	}
	if !f.OpenChoices {
		d.Enum = store.ChoiceValues(res.choicesOf(f))
	}
	return d
}
