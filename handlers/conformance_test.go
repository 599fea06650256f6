package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"fieldkit/store"
)

// Every response a test's env receives through do is validated against the schema its
// server serves at /api/schema/: the operation is found by method and path, the status
// must be one it documents, and a JSON body must match the response's schema (types,
// required properties, enums, nullability, formats, and no property the schema does not
// declare). TestMain then holds a whole run of the package to having seen, for every
// operation of the schema, a success and an error answer (see checkCoverage).

// apiDoc is a served schema, decoded, with its operations indexed for matching.
type apiDocument struct {
	doc map[string]any
	ops []docOp
	// plain: the request asked for no other shape (no brief, fields or exclude), so an
	// object the schema offers whole or in another shape must be whole.
	plain bool
}

// docOp is one operation of the schema.
type docOp struct {
	method string
	path   string   // the template, as in the schema
	segs   []string // its segments; "{…}" matches any one segment
	op     map[string]any
	params int // how many segments are parameters (fewer wins)
}

var (
	docsMu   sync.Mutex
	docCache = map[[32]byte]*apiDocument{}

	// seen records, for each operation ("GET /api/…/{id}/"), the statuses answered.
	seenMu  sync.Mutex
	seenOps = map[string]map[int]bool{}
	allOps  = map[string]bool{} // each operation of a served schema: whether it documents an error (4xx)
)

// served fetches and decodes the env's schema once per distinct document.
func (e *env) served() *apiDocument {
	if e.schemaDoc != nil {
		return e.schemaDoc
	}
	res, err := http.Get(e.srv.URL + "/api/schema/")
	if err != nil {
		e.t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	key := sha256.Sum256(raw)
	docsMu.Lock()
	defer docsMu.Unlock()
	if d := docCache[key]; d != nil {
		e.schemaDoc = d
		return d
	}
	d := &apiDocument{}
	if err := json.Unmarshal(raw, &d.doc); err != nil {
		e.t.Fatalf("schema: %v", err)
	}
	for p, item := range d.doc["paths"].(map[string]any) {
		for _, m := range httpMethods {
			op, ok := item.(map[string]any)[m].(map[string]any)
			if !ok {
				continue
			}
			o := docOp{method: strings.ToUpper(m), path: p, segs: strings.Split(p, "/"), op: op}
			for _, s := range o.segs {
				if strings.HasPrefix(s, "{") {
					o.params++
				}
			}
			d.ops = append(d.ops, o)
			has4xx := false
			for code := range op["responses"].(map[string]any) {
				has4xx = has4xx || strings.HasPrefix(code, "4")
			}
			seenMu.Lock()
			allOps[o.method+" "+p] = has4xx
			seenMu.Unlock()
		}
	}
	docCache[key] = d
	e.schemaDoc = d
	return d
}

// find is the operation answering method and path, or nil.
func (d *apiDocument) find(method, path string) *docOp {
	segs := strings.Split(path, "/")
	var best *docOp
	for i := range d.ops {
		o := &d.ops[i]
		if o.method != method || len(o.segs) != len(segs) {
			continue
		}
		match := true
		for j, s := range o.segs {
			if !strings.HasPrefix(s, "{") && s != segs[j] || strings.HasPrefix(s, "{") && segs[j] == "" {
				match = false
				break
			}
		}
		if match && (best == nil || o.params < best.params) {
			best = o
		}
	}
	return best
}

// conform validates one response against the env's schema and records it as seen.
func (e *env) conform(method, rawPath string, status int, header http.Header, body []byte) {
	e.t.Helper()
	u, err := url.Parse(rawPath)
	if err != nil || !strings.HasPrefix(u.Path, "/api/") {
		return
	}
	d := e.served()
	o := d.find(method, u.Path)
	if o == nil {
		return // not an operation (405, a reader page): nothing documents it
	}
	key := o.method + " " + o.path
	seenMu.Lock()
	if seenOps[key] == nil {
		seenOps[key] = map[int]bool{}
	}
	seenOps[key][status] = true
	seenMu.Unlock()
	q := u.Query()
	check := *d
	check.plain = q.Get("fields") == "" && q.Get("exclude") == "" && (q.Get("brief") == "" || q.Get("brief") == "false")
	if problems := check.checkResponse(o, status, header, body); len(problems) > 0 {
		e.t.Errorf("%s %s → %d does not match the schema's %s:\n  %s\n  body: %.600s",
			method, rawPath, status, key, strings.Join(problems, "\n  "), body)
	}
}

// checkResponse lists what in the response disagrees with the operation's documentation.
func (d *apiDocument) checkResponse(o *docOp, status int, header http.Header, body []byte) []string {
	responses := o.op["responses"].(map[string]any)
	r, ok := responses[strconv.Itoa(status)].(map[string]any)
	if !ok {
		if r, ok = responses["default"].(map[string]any); !ok {
			return []string{fmt.Sprintf("status %d is not documented (documented: %s)", status, strings.Join(sortedKeys(responses), ", "))}
		}
	}
	r = d.resolve(r).(map[string]any)
	content, _ := r["content"].(map[string]any)
	if len(body) == 0 {
		if len(content) > 0 {
			return []string{"empty body, documented with content"}
		}
		return nil
	}
	if len(content) == 0 {
		return []string{"a body, documented without one"}
	}
	media, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	c, ok := content[media].(map[string]any)
	if !ok && strings.HasSuffix(media, "json") {
		c, ok = content["application/json"].(map[string]any)
	}
	if !ok {
		return []string{fmt.Sprintf("Content-Type %q is not documented (documented: %s)", media, strings.Join(sortedKeys(content), ", "))}
	}
	if !strings.HasSuffix(media, "json") {
		return nil // CSV, YAML: text the schema describes in words
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var problems []string
	d.validate(c["schema"], v, "$", &problems)
	return problems
}

// resolve follows a $ref to a component.
func (d *apiDocument) resolve(s any) any {
	for {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		r, ok := m["$ref"].(string)
		if !ok {
			return s
		}
		cur := any(d.doc)
		for _, part := range strings.Split(strings.TrimPrefix(r, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		if cur == nil {
			panic("dangling $ref " + r)
		}
		s = cur
	}
}

// validate checks v against an OpenAPI 3.0 schema, appending each disagreement.
func (d *apiDocument) validate(schema, v any, at string, problems *[]string) {
	s, _ := d.resolve(schema).(map[string]any)
	if s == nil {
		return
	}
	fail := func(format string, args ...any) { *problems = append(*problems, at+": "+fmt.Sprintf(format, args...)) }
	if v == nil {
		composed := s["allOf"] != nil || s["oneOf"] != nil || s["anyOf"] != nil
		switch {
		case s["nullable"] == true:
			return
		case s["type"] != nil || s["enum"] != nil && !composed:
			fail("null, but not nullable")
			return
		case !composed:
			return // {}: anything
		}
		// A choice of schemas: null is whatever its alternatives say.
	}
	for _, sub := range asList(s["allOf"]) {
		d.validate(sub, v, at, problems)
	}
	if alts := asList(s["oneOf"]); alts != nil {
		var matched int
		var why []string
		for _, sub := range alts {
			var p []string
			d.validate(sub, v, at, &p)
			if len(p) == 0 {
				matched++
			} else {
				why = append(why, strings.Join(p, "; "))
			}
		}
		if matched != 1 {
			fail("matches %d of oneOf's %d alternatives: %s", matched, len(alts), strings.Join(why, " | "))
		}
	}
	if alts := asList(s["anyOf"]); alts != nil {
		if d.plain {
			alts = slices.DeleteFunc(slices.Clone(alts), otherShape)
		}
		var why []string
		for _, sub := range alts {
			var p []string
			d.validate(sub, v, at, &p)
			if len(p) == 0 {
				why = nil
				break
			}
			why = append(why, strings.Join(p, "; "))
		}
		if why != nil {
			fail("matches none of anyOf's alternatives: %s", strings.Join(why, " | "))
		}
	}
	if enum := asList(s["enum"]); enum != nil && !slices.ContainsFunc(enum, func(e any) bool { return sameJSON(e, v) }) {
		fail("%v is not one of %v", v, enum)
	}
	switch t, _ := s["type"].(string); t {
	case "":
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			fail("%T, want an object", v)
			return
		}
		d.validateObject(s, m, at, problems)
	case "array":
		l, ok := v.([]any)
		if !ok {
			fail("%T, want an array", v)
			return
		}
		if n, ok := s["minItems"].(float64); ok && float64(len(l)) < n {
			fail("%d items, fewer than %v", len(l), n)
		}
		if n, ok := s["maxItems"].(float64); ok && float64(len(l)) > n {
			fail("%d items, more than %v", len(l), n)
		}
		for i, x := range l {
			d.validate(s["items"], x, fmt.Sprintf("%s[%d]", at, i), problems)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			fail("%T %v, want a string", v, v)
			return
		}
		if n, ok := s["maxLength"].(float64); ok && float64(utf8.RuneCountInString(str)) > n {
			fail("%d characters, longer than %v", utf8.RuneCountInString(str), n)
		}
		if problem := formatProblem(s["format"], str); problem != "" {
			fail("%q: %s", str, problem)
		}
	case "integer", "number":
		n, ok := v.(float64)
		if !ok {
			fail("%T %v, want a %s", v, v, t)
			return
		}
		if t == "integer" && n != math.Trunc(n) {
			fail("%v, want an integer", n)
		}
		if m, ok := s["minimum"].(float64); ok && n < m {
			fail("%v below the minimum %v", n, m)
		}
		if m, ok := s["maximum"].(float64); ok && n > m {
			fail("%v above the maximum %v", n, m)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("%T %v, want a boolean", v, v)
		}
	default:
		fail("the schema has an unknown type %q", t)
	}
}

// validateObject checks required, declared and additional properties. An object schema
// that declares properties (and is not a part of an allOf) declares all of them: a key
// it does not name is reported unless additionalProperties allows it.
func (d *apiDocument) validateObject(s, m map[string]any, at string, problems *[]string) {
	props, _ := s["properties"].(map[string]any)
	for _, r := range asList(s["required"]) {
		if _, ok := m[r.(string)]; !ok {
			*problems = append(*problems, fmt.Sprintf("%s: required property %q is missing", at, r))
		}
	}
	for _, k := range sortedKeys(m) {
		if p, ok := props[k]; ok {
			d.validate(p, m[k], at+"."+k, problems)
			continue
		}
		switch extra := s["additionalProperties"].(type) {
		case map[string]any:
			d.validate(extra, m[k], at+"."+k, problems)
		case bool:
			if !extra {
				*problems = append(*problems, fmt.Sprintf("%s: property %q is not allowed", at, k))
			}
		case nil:
			if props != nil {
				*problems = append(*problems, fmt.Sprintf("%s: property %q is not declared", at, k))
			}
		}
	}
}

func formatProblem(format any, s string) string {
	switch format {
	case "date-time":
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return "not an RFC 3339 date-time"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "not a date"
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || u.Host == "" {
			return "not an absolute URI"
		}
	}
	return ""
}

// otherShape reports whether an alternative is a shape a request asks for by name:
// the brief form (Brief<Name>) or chosen fields (<Name>Fields).
func otherShape(alt any) bool {
	r, _ := alt.(map[string]any)["$ref"].(string)
	name := strings.TrimPrefix(r, "#/components/schemas/")
	return r != "" && (strings.HasPrefix(name, "Brief") || strings.HasSuffix(name, "Fields"))
}

func asList(v any) []any { l, _ := v.([]any); return l }

// sameJSON compares two decoded JSON values (an enum's integers are float64 here too).
func sameJSON(a, b any) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkCoverage, after a run of the whole package (no -run filter, not -short), fails it
// unless every operation of the schema answered at least once with a success (2xx) and,
// when it documents any, once with an error (4xx), each validated. It returns the problems.
func checkCoverage() []string {
	seenMu.Lock()
	defer seenMu.Unlock()
	var out []string
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range allOps {
			if !yield(k) {
				return
			}
		}
	}) {
		var ok2, err4 bool
		for st := range seenOps[key] {
			ok2 = ok2 || st >= 200 && st < 300
			err4 = err4 || st >= 400 && st < 500
		}
		switch {
		case !ok2 && !err4:
			out = append(out, key+": never answered")
		case !ok2:
			out = append(out, key+": no success answer validated")
		case !err4 && allOps[key]:
			out = append(out, key+": no error answer validated")
		}
	}
	return out
}

// coverageWanted reports whether this run is the whole package.
func coverageWanted() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.run") || strings.HasPrefix(a, "-test.short") || strings.HasPrefix(a, "-test.bench") {
			return false
		}
	}
	return true
}

// writableFixtures creates two objects of each writable resource, in dependency order,
// each body a function of n (1 or 2) so that the pair differs where it must be unique.
var writableFixtures = []struct {
	path string
	body func(n int) map[string]any
}{
	{pathTags, func(n int) map[string]any {
		return map[string]any{"name": "tag" + itoa(int64(n)), "slug": "tag" + itoa(int64(n))}
	}},
	{pathSites, func(n int) map[string]any {
		return map[string]any{"name": "site" + itoa(int64(n)), "slug": "site" + itoa(int64(n))}
	}},
	{pathPlatforms, func(n int) map[string]any {
		return map[string]any{"name": "plat" + itoa(int64(n)), "slug": "plat" + itoa(int64(n))}
	}},
	{pathDevices, func(n int) map[string]any {
		return map[string]any{"name": "dev" + itoa(int64(n)), "site": n, "platform": n, "status": "planned", "tags": []any{n}}
	}},
	{pathInterfaces, func(n int) map[string]any {
		return map[string]any{"device": n, "name": "Gi0/" + itoa(int64(n)), "type": "1000base-t", "mode": "access"}
	}},
	{pathVLANs, func(n int) map[string]any {
		return map[string]any{"vid": 10 * n, "name": "v" + itoa(int64(n)), "site": n}
	}},
	{pathIPAddresses, func(n int) map[string]any {
		return map[string]any{"address": "10.0.0." + itoa(int64(n)) + "/24", "status": "active",
			"assigned_object_type": "dcim.interface", "assigned_object_id": n}
	}},
	{pathCommands, func(n int) map[string]any {
		return map[string]any{"name": "cmd" + itoa(int64(n)), "command": "show <iface>", "command_type": "show", "platforms": []any{n},
			"variables": []any{map[string]any{"name": "iface", "display_name": "Interface", "variable_type": "text"}}}
	}},
	{pathGroups, func(n int) map[string]any { return map[string]any{"name": "group" + itoa(int64(n))} }},
	{pathUsers, func(n int) map[string]any {
		return map[string]any{"username": "user" + itoa(int64(n)), "password": "Pa55-word-" + itoa(int64(n)), "groups": []any{n}}
	}},
	{pathTokens, func(n int) map[string]any { return map[string]any{"user": n + 1, "description": "t" + itoa(int64(n))} }},
	{pathPermissions, func(n int) map[string]any {
		return map[string]any{"name": "perm" + itoa(int64(n)), "object_types": []any{"dcim.site"}, "actions": []any{"view"},
			"constraints": []any{map[string]any{"slug": "site1"}, map[string]any{"slug": "site2"}}, "users": []any{n + 1}}
	}},
	// Last: deleted first, before the commands they run. Service credential sets 1 and 2
	// are made by the test (serviceSets).
	{pathSchedules, func(n int) map[string]any {
		return map[string]any{"name": "sched" + itoa(int64(n)), "command": n, "credential_set": n, "cron": "@daily",
			"sites": []any{n}, "tags": []any{n}, "variables": map[string]any{"iface": "Gi0/1"}}
	}},
	{pathWebhooks, func(n int) map[string]any {
		return map[string]any{"name": "hook" + itoa(int64(n)), "payload_url": "http://127.0.0.1:9/" + itoa(int64(n)),
			"content_types": []any{"netbox_toolkit_plugin.commandlog"}, "type_create": true, "tags": []any{n}}
	}},
	{pathEventRules, func(n int) map[string]any {
		return map[string]any{"name": "rule" + itoa(int64(n)), "object_types": []any{"netbox_toolkit_plugin.commandlog"},
			"event_types": []any{"object_created"}, "action_object_id": n, "conditions": map[string]any{"attr": "success", "value": false, "op": "eq"}}
	}},
}

// serviceSets makes the service credential sets 1 and 2 that the schedules' fixtures use.
func serviceSets(e *env) {
	e.t.Helper()
	kr, _ := store.NewKeyring(make([]byte, 32))
	for _, name := range []string{"svc1", "svc2"} {
		if _, err := e.db.CreateServiceCredentialSet(context.Background(), kr, 1, store.CredentialInput{Name: &name,
			Username: &name}, store.True); err != nil {
			e.t.Fatal(err)
		}
	}
}

// asWritten turns a read object into the body that writes it back unchanged: a
// reference as its id, a choice as its value, only the fields the write schema takes.
func asWritten(doc *apiDocument, schema string, read map[string]any) map[string]any {
	props := doc.doc["components"].(map[string]any)["schemas"].(map[string]any)[schema].(map[string]any)["properties"].(map[string]any)
	out := map[string]any{}
	for k := range props {
		v, ok := read[k]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			if id, ok := x["id"]; ok {
				v = id
			} else if val, ok := x["value"]; ok && len(x) == 2 {
				v = val
			}
		case []any:
			ids := make([]any, 0, len(x))
			for _, el := range x {
				if m, ok := el.(map[string]any); ok && m["id"] != nil && m["url"] != nil {
					ids = append(ids, m["id"])
				}
			}
			if len(ids) == len(x) && len(x) > 0 {
				v = ids
			}
		}
		out[k] = v
	}
	return out
}

// TestEveryOperationConforms drives every operation of the served schema at least once
// to a success and once to an error, each answer validated by do against the schema
// (conformance above): the writable resources through a whole life (create, read,
// brief, replace, update, in bulk too, describe, delete), every operation without
// credentials, and each object path with an id that does not exist.
func TestEveryOperationConforms(t *testing.T) {
	e := newEnv(t)
	doc := e.served()
	status := func(want int, method, path string, body any) {
		t.Helper()
		if r := e.do(method, path, e.admin, body); r.status != want {
			t.Fatalf("%s %s: %d, want %d: %.300s", method, path, r.status, want, r.body)
		}
	}
	// Without credentials: 401 on everything but the public operations.
	for _, o := range doc.ops {
		if o.op["security"] != nil {
			continue // public
		}
		path := strings.ReplaceAll(o.path, "{id}", "1")
		var body any
		if o.op["requestBody"] != nil {
			body = map[string]any{}
		}
		if r := e.do(o.method, path, "", body); r.status != 401 {
			t.Errorf("%s %s without credentials: %d", o.method, path, r.status)
		}
	}
	// Each writable resource through its life.
	serviceSets(e)
	ids := map[string][2]int64{}
	for _, f := range writableFixtures {
		var pair [2]int64
		for n := 1; n <= 2; n++ {
			pair[n-1] = int64(e.must(201, "POST", f.path, e.admin, f.body(n))["id"].(float64))
		}
		ids[f.path] = pair
	}
	for _, f := range writableFixtures {
		res := resourceAt(f.path)
		name := res.Name()
		first, second := itoa(ids[f.path][0]), itoa(ids[f.path][1])
		e.must(200, "GET", f.path+"?brief=true", e.admin, nil)
		e.must(200, "GET", f.path+first+"/?brief=true", e.admin, nil)
		e.must(200, "OPTIONS", f.path, e.admin, nil)
		e.must(200, "OPTIONS", f.path+first+"/", e.admin, nil)
		e.must(404, "GET", f.path+"99999/", e.admin, nil)
		e.must(404, "GET", f.path+"?offset=99999", e.admin, nil)
		read := e.must(200, "GET", f.path+first+"/", e.admin, nil)
		put := asWritten(doc, "Writable"+name+"Request", read)
		if f.path == pathUsers {
			put["password"] = "Pa55-word-1"
		}
		e.must(200, "PUT", f.path+first+"/", e.admin, put)
		bulk := asWritten(doc, "BulkWritable"+name+"Request", e.must(200, "GET", f.path+second+"/", e.admin, nil))
		bulk["id"] = ids[f.path][1]
		if f.path == pathUsers {
			bulk["password"] = "Pa55-word-2"
		}
		status(200, "PUT", f.path, []any{bulk})
		status(200, "PATCH", f.path, []any{map[string]any{"id": ids[f.path][0]}, map[string]any{"id": ids[f.path][1]}})
		status(400, "PATCH", f.path, []any{map[string]any{"id": 99999}})
	}
	// A command log (written by executions, tested elsewhere) reads and describes itself.
	if err := e.db.InsertLogs(context.Background(), []store.Values{{"command_name": "show version", "device_name": "dev1",
		"username": "admin", "success": true, "output": "ok", "created": time.Now()}}); err != nil {
		t.Fatal(err)
	}
	e.must(200, "GET", pathCommandLogs+"1/", e.admin, nil)
	e.must(200, "OPTIONS", pathCommandLogs+"1/", e.admin, nil)
	// So does a config version (written by collections, tested elsewhere).
	kr, _ := store.NewKeyring(bytes.Repeat([]byte{7}, 32))
	dev := tkDevice(t, e.db, "cv1", tkSite(t, e.db, "CV", "cv"), tkPlatform(t, e.db, "CV IOS", "cv_ios"))
	v, err := e.db.KeepConfig(context.Background(), kr, store.ConfigRead{DeviceID: dev, DeviceName: "cv1",
		Text: "hostname cv1\nend\n", Masked: "hostname cv1\nend\n", MinLines: 1, MaxShrink: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	e.must(200, "OPTIONS", pathConfigVers, e.admin, nil)
	e.must(200, "OPTIONS", pathConfigVers+itoa(v.VersionID)+"/", e.admin, nil)
	// Read-only resources describe themselves too.
	for _, res := range readOnlyResources {
		e.must(200, "OPTIONS", res.Path, e.admin, nil)
		e.must(200, "OPTIONS", res.Path+"1/", e.admin, nil)
	}
	for i := len(writableFixtures) - 1; i >= 0; i-- {
		f := writableFixtures[i]
		e.must(204, "DELETE", f.path+itoa(ids[f.path][1])+"/", e.admin, nil)
		status(204, "DELETE", f.path, []any{map[string]any{"id": ids[f.path][0]}})
		e.must(404, "DELETE", f.path+itoa(ids[f.path][0])+"/", e.admin, nil)
	}
}

// resourceAt is the resource routed at a list path.
func resourceAt(path string) *Resource {
	for _, r := range resources {
		if r.Path == path {
			return r
		}
	}
	panic("no resource at " + path)
}
