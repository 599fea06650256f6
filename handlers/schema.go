package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"gopkg.in/yaml.v3"

	"fieldkit/web"
)

// The OpenAPI document is built at request time from what is routed: every Resource
// routed through a.crud (its list, detail and write operations, only those routed) and
// every entry of opDocs (schema_ops.go) that is routed. An API route added without
// either fails TestRouteTable.
//
// FieldDoc conventions: Ref (for Type "object") and Items (for Type "array") name either
// a primitive type, a schema of opSchemas(), or a resource Name. A resource name is a
// reference: read as Brief<Name>, written as an id or an object of unique fields.

// obj is a JSON object of the document.
type obj = map[string]any

// serveSchema answers /api/schema/: JSON by default, YAML with ?format=yaml.
func (a *API) serveSchema(w http.ResponseWriter, r *http.Request) error {
	doc := a.openAPI()
	switch f := r.URL.Query().Get("format"); f {
	case "", "json", "openapi", "openapi-json":
		w.Header().Set("Content-Type", "application/vnd.oai.openapi+json")
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", " ")
		return enc.Encode(doc)
	case "yaml", "openapi-yaml":
		// Round-trip through JSON so YAML sees only maps, lists and scalars.
		raw, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		var plain any
		if err := json.Unmarshal(raw, &plain); err != nil {
			return err
		}
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(plain); err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
		_, err = w.Write(buf.Bytes())
		return err
	default:
		return web.BadRequest("format", "Unknown format '"+f+"': use json or yaml.")
	}
}

// openAPI builds the whole document.
func (a *API) openAPI() obj {
	paths := obj{}
	schemas := opSchemas()
	for _, res := range a.routedResources() {
		a.resourcePaths(paths, schemas, res)
	}
	for _, op := range opDocs {
		if a.routed(op.Method, op.Path) {
			a.addOp(paths, schemas, op)
		}
	}
	comps := obj{
		"schemas":   schemas,
		"responses": errorResponses(),
		"securitySchemes": obj{"tokenAuth": obj{
			"type": "apiKey", "in": "header", "name": "Authorization",
			"description": "Token <key>: `Authorization: Token 0123…` (Bearer is accepted too).",
		}},
	}
	prune(paths, comps)
	return obj{
		"openapi": "3.0.3",
		"info": obj{
			"title":   "FieldKit API",
			"version": a.Version,
			"description": "NetBox-compatible REST API of FieldKit: the embedded inventory, users and " +
				"permissions, and the toolkit plugin (commands, execution, command logs). Send " +
				"`Authorization: Token <key>` on every request except the public ones.",
		},
		"servers":    []any{obj{"url": "/"}},
		"tags":       schemaTags(),
		"security":   []any{obj{"tokenAuth": []any{}}},
		"paths":      paths,
		"components": comps,
	}
}

// routed reports whether method and path (httprouter syntax) are routed.
func (a *API) routed(method, path string) bool { return a.router.Routed(method, path) }

// routedResources are the registered resources this API routes, in registration order.
func (a *API) routedResources() []*Resource {
	var out []*Resource
	for _, res := range resources {
		if a.routed(http.MethodGet, res.Path) || a.routed(http.MethodGet, res.Path+":id/") {
			out = append(out, res)
		}
	}
	return out
}

// oaPath turns an httprouter path into an OpenAPI one: ":id" → "{id}".
func oaPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			segs[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(segs, "/")
}

// opID derives a NetBox-style operationId: "/api/dcim/sites/:id/" + "retrieve" →
// "dcim_sites_retrieve".
func opID(path, action string) string {
	var parts []string
	for _, s := range strings.Split(strings.TrimPrefix(path, "/api/"), "/") {
		if s != "" && !strings.HasPrefix(s, ":") && !strings.HasPrefix(s, "*") {
			parts = append(parts, strings.ReplaceAll(s, "-", "_"))
		}
	}
	return strings.Join(append(parts, action), "_")
}

// tagOf groups a path by its API section.
func tagOf(path string) string {
	seg := strings.Split(strings.TrimPrefix(path, "/api/"), "/")[0]
	switch seg {
	case "dcim", "ipam", "extras", "users", "plugins":
		return seg
	}
	return "status"
}

func schemaTags() []any {
	return []any{
		obj{"name": "plugins", "description": "The toolkit plugin: commands, execution and command logs."},
		obj{"name": "dcim", "description": "Inventory: sites, platforms, devices, interfaces."},
		obj{"name": "ipam", "description": "Inventory: VLANs and IP addresses."},
		obj{"name": "extras", "description": "Tags."},
		obj{"name": "users", "description": "Users, groups, API tokens and object permissions."},
		obj{"name": "status", "description": "Service status, API index and this schema (no authentication)."},
	}
}

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

// operation assembles one operation; errors are added from what it takes.
type operation struct {
	method, path, id, summary, desc string
	params                          []any
	body                            obj // request schema, or nil
	okStatus                        string
	ok                              obj // the success response
	rateLimited                     bool
	bulk                            bool              // the body may be a list: a 400 lists each element's errors
	errors                          map[string]string // further error statuses, to the name of their shared response
}

func (a *API) put(paths obj, op operation) {
	p := oaPath(op.path)
	item, _ := paths[p].(obj)
	if item == nil {
		item = obj{}
		if pp := pathParams(op.path); len(pp) > 0 {
			item["parameters"] = pp
		}
		paths[p] = item
	}
	o := obj{"operationId": op.id, "tags": []any{tagOf(op.path)}, "summary": op.summary}
	if op.desc != "" {
		o["description"] = op.desc
	}
	if len(op.params) > 0 {
		o["parameters"] = op.params
	}
	resp := obj{op.okStatus: op.ok, "500": respRef("ServerError")}
	if !a.publicPaths[op.path] {
		resp["401"], resp["403"] = respRef("Unauthorized"), respRef("Forbidden")
	} else {
		o["security"] = []any{}
	}
	if op.body != nil {
		o["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": op.body}}}
		resp["413"] = respRef("PayloadTooLarge")
	}
	switch {
	case op.bulk:
		resp["400"] = respRef("BulkBadRequest")
	case op.body != nil || len(op.params) > 0:
		resp["400"] = respRef("BadRequest")
	}
	if strings.Contains(op.path, "/:") {
		resp["404"] = respRef("NotFound")
	}
	if op.rateLimited {
		resp["429"] = respRef("RateLimited")
	}
	for code, name := range op.errors {
		resp[code] = respRef(name)
	}
	o["responses"] = resp
	item[strings.ToLower(op.method)] = o
}

func respRef(name string) obj { return obj{"$ref": "#/components/responses/" + name} }

func jsonResponse(desc string, schema obj) obj {
	return obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}}
}

// pathParams documents the path's parameters; ids are positive integers.
func pathParams(path string) []any {
	var out []any
	for _, s := range strings.Split(path, "/") {
		if !strings.HasPrefix(s, ":") && !strings.HasPrefix(s, "*") {
			continue
		}
		p := obj{"name": s[1:], "in": "path", "required": true, "schema": obj{"type": "string"}}
		if s[1:] == "id" {
			p["schema"] = obj{"type": "integer", "minimum": 1}
			p["description"] = "A unique integer value identifying this object."
		}
		out = append(out, p)
	}
	return out
}

// queryParam is one query parameter with a schema.
func queryParam(name, desc string, schema obj, required bool) obj {
	p := obj{"name": name, "in": "query", "schema": schema}
	if desc != "" {
		p["description"] = desc
	}
	if required {
		p["required"] = true
	}
	if schema["type"] == "array" {
		p["style"], p["explode"] = "form", true
	}
	return p
}

// prune drops the components nothing routed refers to, so the document describes only
// what this server answers.
func prune(paths obj, comps obj) {
	used := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case obj:
			if r, ok := x["$ref"].(string); ok && !used[r] {
				used[r] = true
				section, name, _ := strings.Cut(strings.TrimPrefix(r, "#/components/"), "/")
				if m, ok := comps[section].(obj); ok {
					walk(m[name])
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(paths)
	for _, section := range []string{"schemas", "responses"} {
		m := comps[section].(obj)
		for name := range m {
			if !used["#/components/"+section+"/"+name] {
				delete(m, name)
			}
		}
	}
}
