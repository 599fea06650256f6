package handlers

import (
	"encoding/json"
	"fieldkit/ui"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// schemaDoc fetches /api/schema/ without a token and decodes it.
func schemaDoc(t *testing.T, e *env) map[string]any {
	t.Helper()
	r := e.do("GET", "/api/schema/", "", nil)
	if r.status != 200 {
		t.Fatalf("schema: %d %s", r.status, r.body)
	}
	return r.json(t)
}

var httpMethods = []string{"get", "post", "put", "patch", "delete", "options"}

func TestSchemaDocument(t *testing.T) {
	e := newEnv(t)
	doc := schemaDoc(t, e)
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.0.") {
		t.Fatalf("openapi version %q", doc["openapi"])
	}
	scheme := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)["tokenAuth"].(map[string]any)
	if scheme["type"] != "apiKey" || scheme["in"] != "header" || scheme["name"] != "Authorization" {
		t.Fatalf("tokenAuth: %v", scheme)
	}
	ids := map[string]string{}
	for p, item := range doc["paths"].(map[string]any) {
		for _, m := range httpMethods {
			op, ok := item.(map[string]any)[m].(map[string]any)
			if !ok {
				continue
			}
			where := strings.ToUpper(m) + " " + p
			id, _ := op["operationId"].(string)
			if prev, dup := ids[id]; dup || id == "" {
				t.Errorf("%s: operationId %q empty or also on %s", where, id, prev)
			}
			ids[id] = where
			resp := op["responses"].(map[string]any)
			_, explicit := op["security"]
			switch {
			case e.api.publicPaths[strings.ReplaceAll(p, "{id}", ":id")]:
				if sec, _ := op["security"].([]any); !explicit || len(sec) != 0 {
					t.Errorf("%s is public but not marked security: []", where)
				}
			case explicit:
				t.Errorf("%s: authed operation overrides security", where)
			case resp["401"] == nil || resp["403"] == nil:
				t.Errorf("%s: no 401/403 responses", where)
			}
			if resp["500"] == nil {
				t.Errorf("%s: no 500 response", where)
			}
		}
	}
	if len(ids) == 0 {
		t.Fatal("no operations")
	}
	if _, ok := doc["paths"].(map[string]any)["/api/docs/"]; ok {
		t.Error("the reader pages are documented as API operations")
	}
}

// TestRouteTable prints the server's route table (the API's and the web interface's,
// as serve wires them) and holds it to the schema: every API route is an operation of
// the schema but the readers' pages, every operation is routed, and no route of the web
// interface is in the schema.
func TestRouteTable(t *testing.T) {
	e := newEnv(t)
	u := ui.New(ui.Options{DB: e.db, Logger: slog.New(slog.DiscardHandler)})
	api := New(Options{DB: e.db, Logger: slog.New(slog.DiscardHandler), Version: "test", Session: u.Session, UI: u.Routes,
		Metrics: http.NotFoundHandler()})
	r := httptest.NewRecorder()
	api.ServeHTTP(r, httptest.NewRequest("GET", "/api/schema/", nil))
	var doc struct{ Paths map[string]map[string]any }
	if err := json.Unmarshal(r.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	documented := func(method, path string) bool { _, ok := doc.Paths[oaPath(path)][strings.ToLower(method)]; return ok }
	var table strings.Builder
	routed := map[string]bool{}
	for _, rt := range api.router.Routes() {
		fmt.Fprintf(&table, "%-7s %s\n", rt.Method, rt.Path)
		routed[rt.Method+" "+oaPath(rt.Path)] = true
		switch reader := strings.HasPrefix(rt.Path, "/api/docs/") || strings.HasPrefix(rt.Path, "/api/redoc/"); {
		case !strings.HasPrefix(rt.Path, "/api/") && documented(rt.Method, rt.Path):
			t.Errorf("%s %s belongs to the web interface but is in the schema", rt.Method, rt.Path)
		case strings.HasPrefix(rt.Path, "/api/") && !reader && !documented(rt.Method, rt.Path):
			t.Errorf("%s %s is routed but not in the schema: add a Resource, or an opDocs entry (schema_ops.go)", rt.Method, rt.Path)
		}
	}
	t.Logf("route table:\n%s", table.String())
	for p, item := range doc.Paths {
		for _, m := range httpMethods {
			if _, ok := item[m]; ok && !routed[strings.ToUpper(m)+" "+p] {
				t.Errorf("%s %s is documented but not routed", strings.ToUpper(m), p)
			}
		}
	}
	if !api.router.Routed("GET", "/ui/session") || !api.router.Routed("GET", pathCommandLogs+"export/") || !api.router.Routed("GET", "/metrics") {
		t.Error("the table lacks the web interface's or the API's routes")
	}
}

func TestSchemaFormats(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/api/schema/?format=yaml", "", nil)
	var y map[string]any
	if r.status != 200 || yaml.Unmarshal(r.body, &y) != nil || !strings.HasPrefix(y["openapi"].(string), "3.0.") {
		t.Fatalf("yaml: %d %.200s", r.status, r.body)
	}
	for _, q := range []string{"/api/schema/?format=json", "/api/schema/?format=openapi", "/api/docs/?format=openapi"} {
		if r := e.do("GET", q, "", nil); r.status != 200 || r.json(t)["openapi"] == nil {
			t.Errorf("%s: %d %.200s", q, r.status, r.body)
		}
	}
	if m := e.must(400, "GET", "/api/schema/?format=xml", "", nil); m["format"] == nil {
		t.Errorf("bad format: %v", m)
	}
}

// TestSchemaValidator runs the OpenAPI validator CI installs (.ci/run) on the schema.
func TestSchemaValidator(t *testing.T) {
	cmd := os.Getenv("FIELDKIT_OPENAPI_VALIDATOR")
	if cmd == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FIELDKIT_OPENAPI_VALIDATOR is not set in CI")
		}
		t.Skip("set FIELDKIT_OPENAPI_VALIDATOR (see .ci/run)")
	}
	e := newEnv(t)
	r := e.do("GET", "/api/schema/", "", nil)
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, r.body, 0o600); err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(cmd)
	out, err := exec.Command(args[0], append(args[1:], file)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", cmd, file, err, out)
	}
}

func TestSchemaIsJSON(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/api/schema/", "", nil)
	if !json.Valid(r.body) || !strings.Contains(r.header.Get("Content-Type"), "json") {
		t.Fatalf("not JSON: %s", r.header.Get("Content-Type"))
	}
}

// TestSchemaFromTables checks what the resources' tables turn into: references read as
// brief forms and written as an id or object, nested objects by value, typed filters
// with lookups, and ordering with descending variants.
func TestSchemaFromTables(t *testing.T) {
	e := newEnv(t)
	doc := schemaDoc(t, e)
	raw, _ := json.Marshal(doc)
	var d struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]json.RawMessage }
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	schema := func(name string) string { return string(d.Components.Schemas[name]) }
	for _, c := range []struct{ schema, want string }{
		{"Command", `"platforms":{"description":"the platforms the command is written for","items":{"$ref":"#/components/schemas/BriefPlatform"}`},
		{"Device", `"status":{"description":"read as {\"value\", \"label\"}","enum":["active","offline","planned","staged","failed","inventory","decommissioning"]`},
		{"WritableDeviceRequest", `"default":"active"`},
		{"WritableCommandRequest", `"items":{"$ref":"#/components/schemas/WritableCommandVariableRequest"}`},
		{"WritableCommandRequest", `"oneOf":[{"description":"The id of the Platform.","type":"integer"}`},
		{"WritableCommandRequest", `"required":["name","command","platforms"]`},
		{"Device", `"platform":{"allOf":[{"$ref":"#/components/schemas/BriefPlatform"}]`},
		{"CommandLog", `"$ref":"#/components/schemas/ParsedOutput"`},
		{"ObjectPermission", `"items":{"enum":["view"`},
		{"BriefPlatform", `"slug":{"type":"string"}`},
	} {
		if !strings.Contains(schema(c.schema), c.want) {
			t.Errorf("%s lacks %s:\n%s", c.schema, c.want, schema(c.schema))
		}
	}
	if strings.Contains(schema("Command"), "password") || strings.Contains(schema("User"), `"password"`) {
		t.Error("a write-only field is in a read schema")
	}
	list := string(d.Paths["/api/plugins/toolkit/command-logs/"]["get"])
	for _, want := range []string{
		`"name":"created__gte","schema":{"items":{"description":"RFC 3339, or YYYY-MM-DD","format":"date-time","type":"string"}`,
		`"name":"device_id","schema":{"items":{"type":"integer"}`,
		`"name":"success","schema":{"type":"boolean"}`,
		`"-created"`,
	} {
		if !strings.Contains(list, want) {
			t.Errorf("command-logs list lacks %s", want)
		}
	}
	cmds := string(d.Paths["/api/plugins/toolkit/commands/"]["get"])
	for _, want := range []string{`"name":"name__ic"`, `"enum":["show","config"]`, `"name":"q"`} {
		if !strings.Contains(cmds, want) {
			t.Errorf("commands list lacks %s", want)
		}
	}
	export := string(d.Paths["/api/plugins/toolkit/command-logs/export/"]["get"])
	if !strings.Contains(export, `"name":"device_id"`) || !strings.Contains(export, `"text/csv"`) {
		t.Errorf("export lacks the list filters or CSV: %s", export)
	}
}
