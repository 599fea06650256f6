package handlers

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestFieldSelection checks ?fields= and ?exclude= on the list and the detail of every
// resource: every name an object shows can be selected or dropped, the rest of the
// object is untouched, and an unknown name is a 400 naming the parameter.
func TestFieldSelection(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	if len(e.api.routedResources()) < 10 {
		t.Fatalf("only %d resources registered", len(e.api.routedResources()))
	}
	tested := 0
	for _, res := range e.api.routedResources() {
		names := res.fieldNames()
		for _, bad := range []string{"fields=id,no_such_field", "exclude=no_such_field", "fields="} {
			param := bad[:len("fields")]
			if bad[0] == 'e' {
				param = "exclude"
			}
			if m := e.must(400, "GET", res.Path+"?"+bad, e.admin, nil); m[param] == nil {
				t.Errorf("%s?%s: 400 does not name %s: %v", res.Path, bad, param, m)
			}
		}
		all := e.must(200, "GET", res.Path+"?limit=3", e.admin, nil)["results"].([]any)
		if len(all) == 0 {
			continue
		}
		tested++
		first := all[0].(map[string]any)
		for k := range first {
			if !names[k] {
				t.Errorf("%s: objects show %q, which the declaration does not name", res.Path, k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(first)) {
			if k == "id" {
				continue
			}
			sel := e.must(200, "GET", res.Path+"?limit=3&fields=id,"+k, e.admin, nil)["results"].([]any)[0].(map[string]any)
			if want := map[string]any{"id": first["id"], k: first[k]}; fmt.Sprint(sel) != fmt.Sprint(want) {
				t.Errorf("%s?fields=id,%s: %v, want %v", res.Path, k, sel, want)
			}
			ex := e.must(200, "GET", res.Path+"?limit=3&exclude="+k, e.admin, nil)["results"].([]any)[0].(map[string]any)
			want := maps.Clone(first)
			delete(want, k)
			if fmt.Sprint(ex) != fmt.Sprint(want) {
				t.Errorf("%s?exclude=%s: %v, want %v", res.Path, k, ex, want)
			}
		}
		detail := fmt.Sprintf("%s%d/", res.Path, num(first["id"]))
		if got := e.must(200, "GET", detail+"?fields=id&fields=display", e.admin, nil); len(got) != min(2, len(first)) || got["id"] == nil {
			t.Errorf("%s?fields=id&fields=display: %v", detail, got)
		}
		if m := e.must(400, "GET", detail+"?exclude=nope", e.admin, nil); m["exclude"] == nil {
			t.Errorf("%s?exclude=nope: %v", detail, m)
		}
	}
	if tested < 6 {
		t.Fatalf("only %d resources had objects to select fields of", tested)
	}
	// A log page without outputs, and NetBox's device-list habit.
	for _, r := range e.must(200, "GET", logPath+"?exclude=output,parsed_output", e.admin, nil)["results"].([]any) {
		if _, ok := r.(map[string]any)["output"]; ok {
			t.Fatalf("exclude=output: %v", r)
		}
	}
	e.must(200, "GET", pathDevices+"?exclude=config_context", e.admin, nil)
}
