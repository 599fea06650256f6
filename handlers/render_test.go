package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
	"fieldkit/web"
)

// TestFastRendererAgrees holds the list pages' writer to the reference renderer
// (renderObject, selection.apply, web.Write): the same bytes for every object of every
// resource, in every shape, with every field kept alone, every field dropped, and random
// sets of fields, over HTTP as well as in process.
func TestFastRendererAgrees(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	addOddLogs(t, w)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, res := range resources {
		ids, _, err := e.db.ListIDs(t.Context(), store.Query{Model: res.Type(), Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := e.api.rows(res)(t.Context(), ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, query := range selectionQueries(res, rng) {
			r := httptest.NewRequest("GET", "http://fk.example:8080"+res.Path+"?"+query, nil)
			_, pg, err := res.parseList(r)
			if err != nil {
				t.Fatalf("%s?%s: %v", res.Path, query, err)
			}
			sh := full
			if pg.brief {
				sh = briefShape
			}
			for _, row := range rows {
				want, err := web.Marshal(pg.sel.apply(e.api.renderObject(r, res, res.Model, row, sh)))
				if err != nil {
					t.Fatal(err)
				}
				jw := e.api.newJSONWriter(r, 0)
				jw.object(res, res.Model, row, sh, pg.sel)
				if got := append(jw.buf, '\n'); !bytes.Equal(got, want) {
					t.Fatalf("%s?%s, id %v:\n got %s\nwant %s", res.Path, query, row["id"], got, want)
				}
			}
		}
	}
	// Over HTTP: the envelope and the results as the reference writes them.
	for _, query := range []string{"", "?limit=2", "?limit=2&offset=2", "?exclude=output", "?brief=1", "?cursor=&limit=3",
		"?fields=id,device,url&limit=50"} {
		got := e.do("GET", logPath+query, e.admin, nil)
		var body struct {
			listBody
			Results []struct {
				ID int64 `json:"id"`
			} `json:"results"`
		}
		if err := json.Unmarshal(got.body, &body); err != nil || got.status != 200 {
			t.Fatalf("%s: %d %s", query, got.status, got.body)
		}
		r := httptest.NewRequest("GET", e.srv.URL+logPath+query, nil)
		r.Host = strings.TrimPrefix(e.srv.URL, "http://")
		_, pg, _ := logResource.parseList(r)
		var ids []int64
		for _, x := range body.Results {
			ids = append(ids, x.ID)
		}
		rows, err := loadOrdered(t.Context(), e.api.rows(logResource), store.Row.ID, ids)
		if err != nil {
			t.Fatal(err)
		}
		results := []any{}
		for _, row := range rows {
			results = append(results, pg.sel.apply(e.api.renderObject(r, logResource, store.CommandLogs, row, map[bool]shape{true: briefShape}[pg.brief])))
		}
		want, _ := web.Marshal(listBody{Count: body.Count, Next: body.Next, Previous: body.Previous, Results: results})
		if !bytes.Equal(got.body, want) {
			t.Errorf("%s:\n got %s\nwant %s", query, got.body, want)
		}
	}
}

// addOddLogs adds logs whose values test the encoding: text JSON escapes (control
// characters, quotes, invalid UTF-8, U+2028, HTML characters left as they are),
// JSON columns stored with spaces, floats in exponent form, references to deleted
// objects, a credential set and a source.
// selectionQueries are the list queries that shape a resource's objects: none, brief,
// every field kept alone, dropped, dropped from the brief form, and random sets of
// fields kept and dropped.
func selectionQueries(res *Resource, rng *rand.Rand) []string {
	names := slices.Sorted(maps.Keys(res.fieldNames()))
	queries := []string{"", "brief=true"}
	for _, n := range names {
		queries = append(queries, "fields="+n, "exclude="+n, "brief=true&exclude="+n)
	}
	for range 20 {
		var keep []string
		for _, n := range names {
			if rng.IntN(2) == 0 {
				keep = append(keep, n)
			}
		}
		if len(keep) > 0 {
			queries = append(queries, "fields="+strings.Join(keep, ","), "exclude="+strings.Join(keep, ","))
		}
	}
	return queries
}

// TestFlatPagesAgree holds the pages written from objects loaded flat (store.Flat) to
// those written from a Row each, byte for byte, for every resource that loads flat and
// every selection of its fields: nulls, odd text, references to a device, a command
// and a user since deleted, a log with none, ids in any order and one that is gone.
func TestFlatPagesAgree(t *testing.T) {
	w := newLogWorld(t)
	e := w.e
	addOddLogs(t, w)
	ctx := t.Context()
	for _, del := range []struct {
		m  *store.Model
		id int64
	}{{store.Devices, w.south}, {store.Commands, w.config}, {store.Users, w.carolID}} {
		if err := e.db.Delete(ctx, del.m, del.id); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"Core", "Édge ☃", "<b>\"x\"</b>"} {
		e.must(201, "POST", "/api/extras/tags/", e.admin, map[string]any{"name": name, "slug": fmt.Sprint("t", i)})
	}
	e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "empty"})
	ops := num(e.must(201, "POST", "/api/users/groups/", e.admin, map[string]any{"name": "ops"})["id"])
	e.must(200, "PATCH", fmt.Sprintf("/api/users/users/%d/", w.bobID), e.admin, map[string]any{"groups": []any{ops}})
	rng := rand.New(rand.NewPCG(5, 6))
	var tested []string
	for _, res := range resources {
		if !res.Model.Flattens() {
			continue
		}
		ids, _, err := e.db.ListIDs(ctx, store.Query{Model: res.Type(), Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			continue // a NetBox type FieldKit keeps empty
		}
		tested = append(tested, res.Type())
		slices.Reverse(ids)
		ids = append(ids[:2], append([]int64{999999}, ids[2:]...)...)
		for _, query := range selectionQueries(res, rng) {
			r := httptest.NewRequest("GET", "http://fk.example:8080"+res.Path+"?"+query, nil)
			_, pg, err := res.parseList(r)
			if err != nil {
				t.Fatalf("%s?%s: %v", res.Path, query, err)
			}
			if !res.flattens(pg.shape()) {
				continue
			}
			envelope := paginate(r, 1000, pg, nil, nil)
			load := func(ctx context.Context, ids []int64) ([]store.Row, error) {
				return e.db.RowsLeaving(ctx, res.Model, ids, pg.leaves(res.Model))
			}
			rows, err := loadOrdered(ctx, load, store.Row.ID, ids)
			if err != nil {
				t.Fatal(err)
			}
			want := e.api.newJSONWriter(r, 0).page(res, rows, pg, envelope)
			fl, err := e.db.FlatRowsLeaving(ctx, res.Model, ids, pg.leaves(res.Model))
			if err != nil {
				t.Fatal(err)
			}
			if got := e.api.newJSONWriter(r, 0).flatPage(res, fl, pg, envelope); !bytes.Equal(got, want) {
				t.Fatalf("%s?%s:\n got %s\nwant %s", res.Path, query, got, want)
			}
		}
	}
	for _, typ := range []string{store.TypeCommandLog, store.TypeTag, store.TypeGroup} {
		if !slices.Contains(tested, typ) {
			t.Errorf("%s: not compared (tested: %v)", typ, tested)
		}
	}
}

func addOddLogs(t *testing.T, w *logWorld) {
	t.Helper()
	odd := "tab\tnl\ncr\r bs\b ff\f nul\x00 esc\x1b quote\" back\\ <b>&amp; \xff\xfe bad \u2028\u2029 é 日本 😀"
	logs := []store.Values{
		{"command_name": odd, "device_name": "gone \"device\"", "username": "ghost", "output": odd, "success": false,
			"error_message": odd, "execution_duration": 1e-7, "created": w.base.Add(10 * time.Hour),
			"parsed_output": json.RawMessage(`{ "success" : true, "method":"textfsm", "data": [ {"a" : "1",  "b":[ "x", "<y>" ]} ] }`), "variables": json.RawMessage(`{ "v" : "<x>" }`),
			"failure": json.RawMessage(`{"phase": "login", "reason": "auth", "address": "10.0.0.1", "port": 22, "timeout_seconds": 1.5e-7}`), "source": "api", "sent_command": odd,
			"client_address": "127.0.0.1", "credential_set_name": "kept set"},
		{"command": w.show, "command_name": w.showName, "device": w.north, "device_name": w.northName, "username": "bob",
			"user": w.bobID, "output": "", "success": true, "execution_duration": 3e21, "created": w.base.Add(11 * time.Hour),
			"source": "bulk", "syntax_error": json.RawMessage(`{"detected": true,  "line": "% bad"}`)},
		{"command": w.show, "command_name": w.showName, "device": w.south, "device_name": w.southName, "username": "carol",
			"user": w.carolID, "output": "x", "success": true, "execution_duration": 123456.789, "created": w.base.Add(12 * time.Hour)},
	}
	if err := w.e.db.InsertLogs(t.Context(), logs); err != nil {
		t.Fatal(err)
	}
}

// TestAppendScalarsAsEncodingJSON compares the writer's strings and floats with
// encoding/json's on values chosen to hit every escape and both float forms.
func TestAppendScalarsAsEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", "\x00\x01\x1f\x7f", "\"\\/", "<>&", "\u2028\u2029\u2027", "\xff", "a\xc3", "\xed\xa0\x80",
		"é日本😀", "\ufffd", strings.Repeat("x\n", 40)}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		strs = append(strs, string(b))
	}
	for _, s := range strs {
		want, _ := web.Marshal(s)
		if got := append(appendString(nil, s), '\n'); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 1e20, 1e21, 1.2345e22, -3e-9,
		123456.789, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3}
	for range 2000 {
		floats = append(floats, math.Float64frombits(rng.Uint64()))
	}
	for _, f := range floats {
		want, err := web.Marshal(f)
		got, ok := appendFloat(nil, f)
		if (err == nil) != ok {
			t.Fatalf("%v: ok %v, encoding/json error %v", f, ok, err)
		}
		if ok && !bytes.Equal(append(got, '\n'), want) {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
}
