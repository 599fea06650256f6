package handlers

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"fieldkit/hub"
	"fieldkit/store"
)

// newHubEnv is a test server that is a hub.
func newHubEnv(t *testing.T) *env {
	return newEnv(t, func(db *store.DB, o *Options) { o.Hub = hub.NewIngest(db, slog.New(slog.DiscardHandler)) })
}

// push posts a gzip batch to the hub with a site token; the answer is validated
// against the schema.
func (e *env) push(token, batch string) resp {
	e.t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(batch))
	zw.Close()
	req, _ := http.NewRequest("POST", e.srv.URL+pathHubPush, &buf)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Encoding", "gzip")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	e.conform("POST", pathHubPush, res.StatusCode, res.Header, raw)
	return resp{status: res.StatusCode, header: res.Header, body: raw}
}

// TestHubSitesAPI: a hub's sites through the API, each permission both ways; the token
// is shown by the create and by a new token alone.
func TestHubSitesAPI(t *testing.T) {
	e := newHubEnv(t)
	created := e.must(201, "POST", pathHubSites, e.admin, map[string]any{"name": "Paris 1", "description": "branch"})
	token, _ := created["token"].(string)
	if !strings.HasPrefix(token, store.HubSiteTokenPrefix) || created["state"] != "never" {
		t.Fatalf("created: %v", created)
	}
	id := fmt.Sprint(created["id"])
	site := created["site"].(map[string]any)
	if site["name"] != "Paris 1" {
		t.Fatalf("its dcim site: %v", site)
	}
	list := e.must(200, "GET", pathHubSites, e.admin, nil)
	if list["count"] != 1.0 || strings.Contains(fmt.Sprint(list), token) {
		t.Fatalf("the list: %v", list)
	}
	e.must(200, "GET", pathHubSites+id+"/", e.admin, nil)
	e.must(200, "PATCH", pathHubSites+id+"/", e.admin, map[string]any{"description": "a branch"})
	e.must(200, "PUT", pathHubSites+id+"/", e.admin, map[string]any{"name": "Paris 1", "description": "the branch"})
	e.must(200, "OPTIONS", pathHubSites, e.admin, nil)
	e.must(200, "OPTIONS", pathHubSites+id+"/", e.admin, nil)
	e.must(400, "POST", pathHubSites, e.admin, map[string]any{"description": "no name"})
	e.must(400, "POST", pathHubSites, e.admin, map[string]any{"name": "Paris 1"})
	e.must(400, "PATCH", pathHubSites+id+"/", e.admin, map[string]any{"epoch": "x"})
	e.must(400, "PUT", pathHubSites+id+"/", e.admin, map[string]any{"description": "no name"})
	e.must(404, "GET", pathHubSites+"999/", e.admin, nil)
	e.must(404, "POST", pathHubSites+"999/revoke/", e.admin, nil)

	// A viewer sees the sites and may change none; a user without a grant sees none.
	viewer := e.user("viewer", false)
	e.grant("viewer", store.TypeHubSite, []string{"view"}, "")
	if m := e.must(200, "GET", pathHubSites, viewer, nil); m["count"] != 1.0 {
		t.Fatalf("the viewer's list: %v", m)
	}
	e.must(403, "POST", pathHubSites, viewer, map[string]any{"name": "Lyon"})
	e.must(403, "POST", pathHubSites+id+"/revoke/", viewer, nil)
	e.must(403, "POST", pathHubSites+id+"/token/", viewer, nil)
	nobody := e.user("nobody", false)
	e.must(403, "GET", pathHubSites, nobody, nil)
	e.must(404, "GET", pathHubSites+id+"/", nobody, nil)
	e.must(401, "OPTIONS", pathHubSites, "", nil)
	e.must(401, "OPTIONS", pathHubSites+id+"/", "", nil)

	// A user who may change sites revokes one (its token gets 401), then gives it a new
	// token that works.
	ops := e.user("ops", false)
	e.grant("ops", store.TypeHubSite, []string{"view", "change"}, "")
	batch := `{"protocol": 1, "instance": "i", "epoch": "e", "epoch_start": 1, "records": []}`
	if r := e.push(token, batch); r.status != 200 {
		t.Fatalf("a push: %d %s", r.status, r.body)
	}
	if m := e.must(200, "POST", pathHubSites+id+"/revoke/", ops, nil); m["state"] != "revoked" {
		t.Fatalf("revoked: %v", m)
	}
	if r := e.push(token, batch); r.status != 401 {
		t.Fatalf("a revoked token's push: %d %s", r.status, r.body)
	}
	renewed := e.must(200, "POST", pathHubSites+id+"/token/", ops, nil)
	fresh, _ := renewed["token"].(string)
	if fresh == "" || fresh == token || renewed["revoked"] != nil {
		t.Fatalf("a new token: %v", renewed)
	}
	if r := e.push(fresh, `{"protocol": 1, "instance": "j", "epoch": "e2", "epoch_start": 1, "records": []}`); r.status != 200 {
		t.Fatalf("the new token (and a new database): %d %s", r.status, r.body)
	}
	if r := e.push(fresh, `{"protocol": 1, "epoch": ""}`); r.status != 400 {
		t.Fatalf("a bad batch: %d %s", r.status, r.body)
	}
	if r := e.push(fresh, `{"protocol": 1, "instance": "k", "epoch": "e3", "epoch_start": 1}`); r.status != 403 {
		t.Fatalf("another database with the token: %d %s", r.status, r.body)
	}
}

// TestHubSitesNotOnAnEdge: a FieldKit that is no hub has neither the push nor the
// sites.
func TestHubSitesNotOnAnEdge(t *testing.T) {
	e := newEnv(t)
	e.must(404, "GET", pathHubSites, e.admin, nil)
	if r := e.push("fkh_x", `{}`); r.status != 404 {
		t.Fatalf("push on an edge: %d", r.status)
	}
}
