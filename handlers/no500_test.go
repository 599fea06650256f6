package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestNoInputGives500 sends malformed path ids, query strings and bodies to every route
// the API has, as a superuser (so every check is passed and every parser is reached),
// and requires an answer below 500 for each.
func TestNoInputGives500(t *testing.T) {
	x := newXEnv(t, 100)
	x.command("Version", "show version", "show")

	ids := []string{"1", "0", "-1", "99999999999999999999", "abc", "1.5", "%00", "bulk-execute", "statistics"}
	queries := []string{"", "limit=-1", "limit=abc", "offset=1e9", "ordering=%00", "ordering=-", "ordering=,,,",
		"id=abc", "id__gte=x", "created__gte=notadate", "created__lte=2026-13-45", "q=%25%5F%5C", "brief=maybe",
		"device_id=1&device_id=x", "format=xml", "start_date=2026-02-30", "end_date=yesterday", "include_output=perhaps",
		"name__zz=1", "tag=%FF", "limit=0", "limit=100000", "offset=-5", "success=2", "vid=99999999999999999999",
		"device_id=" + strings.Repeat("9", 400)}
	bodies := []string{"", "null", "[]", `"text"`, "{}", "123", "{", `{"name": {}}`, `{"name": []}`,
		`{"device_id": "1"}`, `{"device_id": 1e400}`, `{"device_id": -1, "credential_token": 5}`,
		`{"variables": "x"}`, `{"variables": {"a": {"b": 1}}}`, `{"executions": [1, "x", null, {}]}`,
		`{"platforms": [{"slug": {"$ne": 1}}]}`, `{"platforms": "x"}`, `{"site": {"id": "x"}}`,
		`{"constraints": "{"}`, `{"object_types": [1]}`, `{"custom_fields": []}`, `{"timeout": 1e20}`,
		`{"name": "` + strings.Repeat("é", 300) + `"}`, `{"a":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`,
		"\xff\xfe", `{"name": "x", "name": "y"}`, `{"tags": [{"slug": null}]}`, `{"primary_ip4": {"address": 1}}`}
	// With -short (the race run) each route and id gets every fourth input, shifted per
	// request so that every input still reaches every route over the ids.
	step := 1
	if testing.Short() {
		step = 4
	}
	seen, n := 0, 0
	routes := x.api.router.Routes()
	for _, rt := range routes {
		method, path := rt.Method, rt.Path
		for _, id := range ids {
			p := strings.ReplaceAll(path, ":id", url.PathEscape(id))
			p = strings.ReplaceAll(p, ":file", "x")
			n++
			if method == http.MethodGet {
				for i := n % step; i < len(queries); i += step {
					x.check500(t, method, p+"?"+queries[i], "")
					seen++
				}
				continue
			}
			for i := n % step; i < len(bodies); i += step {
				x.check500(t, method, p, bodies[i])
				seen++
			}
		}
	}
	t.Logf("%d requests over %d routes", seen, len(routes))
}

func (x *xenv) check500(t *testing.T, method, path, body string) {
	t.Helper()
	r := x.do(method, path, x.admin, body)
	if r.status >= 500 {
		t.Errorf("%s %s %.80q: %d %s", method, path, body, r.status, r.body)
	}
}
