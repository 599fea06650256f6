package handlers

import (
	"errors"
	"net/http"
	"strings"

	"fieldkit/web"
)

// pathImport takes a file of inventory objects (see Import).
const pathImport = "/api/plugins/toolkit/import/"

// importFile serves POST /api/plugins/toolkit/import/: {"data": the file's text,
// "filename", "type", "format", "dry_run"}. It answers 200 with what was done (or
// would be, on a dry run), 400 with every problem by row and column (nothing written),
// 403 when a row needs a permission the user lacks.
func (a *API) importFile(w http.ResponseWriter, r *http.Request) error {
	f, err := web.DecodeForm(r, "data", "filename", "type", "format", "dry_run")
	if err != nil {
		return err
	}
	data, _ := f.Str("data", false, 0) // an empty file is the import's to refuse
	if !f.Has("data") {
		f.Errs.Add("data", "This field is required.")
	}
	name, _ := f.Str("filename", false, 255)
	kind, _ := f.Str("type", false, 50)
	format, _ := f.Choice("format", false, append([]string{""}, importFormats...)...)
	dry, _ := f.Boolean("dry_run")
	if kind != "" && importKindNamed(kind) == nil {
		f.Errs.Add("type", "Unknown object type; one of "+strings.Join(importKindNames(), ", ")+".")
	}
	if err := f.Err(); err != nil {
		return err
	}
	rep, err := a.Import(r.Context(), web.User(r.Context()), ImportInput{Name: name, Data: []byte(data), Type: kind, Format: format, DryRun: dry})
	var ie *ImportError
	if errors.As(err, &ie) {
		return &web.Error{Status: http.StatusBadRequest, Body: map[string]any{
			"detail": "Nothing was imported: " + problems(len(ie.Problems)) + ".", "errors": ie.Problems}}
	}
	if err != nil {
		return err
	}
	web.Write(w, http.StatusOK, rep)
	return nil
}

// problems is "1 problem", "3 problems".
func problems(n int) string {
	if n == 1 {
		return "1 problem"
	}
	return itoa(int64(n)) + " problems"
}

// importKindEnum lists the import's object types for the schema.
func importKindEnum() []any {
	var out []any
	for _, n := range importKindNames() {
		out = append(out, n)
	}
	return out
}

// importMetadata answers OPTIONS on the import path as Django REST framework does for
// a view: under actions.POST the fields the import takes, with the object types and
// formats it knows as choices. The web UI's Import page builds its selects from it.
func (a *API) importMetadata(w http.ResponseWriter, r *http.Request) error {
	choices := func(vals []string) []map[string]string {
		out := make([]map[string]string, len(vals))
		for i, v := range vals {
			out[i] = map[string]string{"value": v, "display_name": v}
		}
		return out
	}
	field := func(typ, label string, required bool) map[string]any {
		return map[string]any{"type": typ, "required": required, "read_only": false, "label": label}
	}
	kind, format := field("choice", "Type", false), field("choice", "Format", false)
	kind["choices"], format["choices"] = choices(importKindNames()), choices(importFormats)
	web.Write(w, http.StatusOK, map[string]any{
		"name": "Import", "description": "", "renders": []string{"application/json"}, "parses": []string{"application/json"},
		"actions": map[string]any{"POST": orderedMeta{
			{"data", field("string", "Data", true)}, {"filename", field("string", "Filename", false)},
			{"type", kind}, {"format", format}, {"dry_run", field("boolean", "Dry run", false)},
		}},
	})
	return nil
}
