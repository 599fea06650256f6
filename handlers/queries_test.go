package handlers

import (
	"strings"
	"testing"
)

// A query string the server would read differently from the client is refused, never
// half-read: a raw ";" once dropped the whole filter (every log came back), a signed or
// zero-padded id once named the object 1, and a huge offset once wrapped "next".
func TestMalformedQueriesAreRefused(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	for _, tc := range []struct {
		path   string
		status int
		field  string // the parameter a 400 names
	}{
		{logPath + "?device_id=2;3", 400, "device_id"},
		{logPath + "?device_id=1&x=1;y=2", 400, "x"},
		{logPath + "?device_id=%3B", 400, "device_id"}, // an encoded ";" is a value, and not an integer
		{logPath + "?device_id=+1", 400, "device_id"},
		{logPath + "?device_id=01", 400, "device_id"},
		{logPath + "?limit=+5", 400, "limit"},
		{logPath + "?offset=05", 400, "offset"},
		{logPath + "?offset=9223372036854775800", 400, "offset"},
		{logPath + "?offset=9007199254740992", 404, ""},
		{logPath + "?device_id=%2B1", 400, "device_id"},
		{logPath + "?device_id=%zz", 400, "device_id"},
		{logPath + "?offset=5", 404, ""},
		{logPath + "+1/", 404, ""},
		{logPath + "01/", 404, ""},
		{cmdPath + "+1/", 404, ""},
		{cmdPath + "0001/", 404, ""},
		{"/api/dcim/sites/?id=+1", 400, "id"},
		{"/api/dcim/sites/?id__gte=-0", 400, "id__gte"},
		{cmdPath + "1/variable-choices/?device_id=+1", 400, "device_id"},
	} {
		r := e.do("GET", tc.path, e.admin, nil)
		if r.status != tc.status {
			t.Errorf("GET %s: status %d, want %d: %s", tc.path, r.status, tc.status, r.body)
			continue
		}
		if tc.field != "" {
			if _, ok := r.json(t)[tc.field]; !ok {
				t.Errorf("GET %s: the 400 does not name %q: %s", tc.path, tc.field, r.body)
			}
		}
	}
	// The last page itself is fine, and next never points past it.
	got := e.must(200, "GET", logPath+"?limit=2&offset=4", e.admin, nil)
	if got["next"] != nil || len(ids(got)) != 1 {
		t.Errorf("last page: %v", got)
	}
	got = e.must(200, "GET", logPath+"?limit=1000&offset=0", e.admin, nil)
	if got["next"] != nil {
		t.Errorf("next on the only page: %v", got["next"])
	}
	// An empty list at offset 0 is a page, not an error.
	e.must(200, "GET", "/api/extras/tags/", e.admin, nil)
	if r := e.do("GET", "/api/extras/tags/?offset=1", e.admin, nil); r.status != 404 || !strings.Contains(string(r.body), "detail") {
		t.Errorf("offset past an empty list: %d %s", r.status, r.body)
	}
}
