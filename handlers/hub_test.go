package handlers

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
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

// TestHubJobsAPI: on a hub, an execute of a site's command queues a job for the site
// (202 with nobody to take it), the site's poll takes it once, and its answer, pushed as
// a job record, is the job's result; the job is its requester's to read.
func TestHubJobsAPI(t *testing.T) {
	e := newHubEnv(t)
	created := e.must(201, "POST", pathHubSites, e.admin, map[string]any{"name": "Paris"})
	token := created["token"].(string)
	records := `{"protocol": 1, "instance": "i", "epoch": "e", "epoch_start": 1, "records": [
		{"seq": 1, "kind": "platform", "op": "upsert", "id": 3, "body": {"id": 3, "name": "Cisco IOS", "slug": "cisco_ios"}},
		{"seq": 2, "kind": "device", "op": "upsert", "id": 5, "body": {"id": 5, "name": "r1", "platform": {"id": 3, "slug": "cisco_ios"}, "status": "active"}},
		{"seq": 3, "kind": "command", "op": "upsert", "id": 8, "body": {"id": 8, "name": "Version", "command": "show version",
			"command_type": "show", "platforms": [{"id": 3, "slug": "cisco_ios"}]}}]}`
	if r := e.push(token, records); r.status != 200 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	cmd := int(e.must(200, "GET", pathCommands+"?name=Version", e.admin, nil)["results"].([]any)[0].(map[string]any)["id"].(float64))
	dev := int(e.must(200, "GET", pathDevices+"?name=r1", e.admin, nil)["results"].([]any)[0].(map[string]any)["id"].(float64))
	exec := fmt.Sprintf("%s%d/execute/", pathCommands, cmd)

	// A device of the hub's own is not at the site.
	site := int(e.must(201, "POST", pathSites, e.admin, map[string]any{"name": "HQ", "slug": "hq"})["id"].(float64))
	own := int(e.must(201, "POST", pathDevices, e.admin, map[string]any{"name": "hq1", "site": site})["id"].(float64))
	e.must(400, "POST", exec, e.admin, map[string]any{"device_id": own})
	viewer := e.user("viewer", false)
	e.grant("viewer", store.TypeCommand, []string{"view"}, "")
	e.grant("viewer", store.TypeDevice, []string{"view"}, "")
	e.must(403, "POST", exec, viewer, map[string]any{"device_id": dev})

	queued := e.must(202, "POST", exec, e.admin, map[string]any{"device_id": dev, "timeout": 5, "expires_in": 600})
	if queued["state"] != "queued" {
		t.Fatalf("queued: %v", queued)
	}
	job := fmt.Sprintf("%s%d/", pathHubJobs, int(queued["id"].(float64)))
	e.must(404, "GET", job, viewer, nil)
	e.must(404, "GET", pathHubJobs+"999/", e.admin, nil)

	poll := func(tok string) resp {
		req, _ := http.NewRequest("GET", e.srv.URL+pathHubPoll+"?wait=0", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set(hub.InstanceHeader, "i")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		e.conform("GET", pathHubPoll, res.StatusCode, res.Header, raw)
		return resp{status: res.StatusCode, body: raw}
	}
	if r := poll("fkh_nope"); r.status != 401 {
		t.Fatalf("a poll without the site's token: %d", r.status)
	}
	r := poll(token)
	var jobs hub.Jobs
	if json.Unmarshal(r.body, &jobs); r.status != 200 || len(jobs.Jobs) != 1 || jobs.Jobs[0].CommandID != 8 || jobs.Jobs[0].DeviceID != 5 {
		t.Fatalf("the site's poll: %d %s", r.status, r.body)
	}
	if r := poll(token); !strings.Contains(string(r.body), `"jobs":[]`) {
		t.Fatalf("a second poll took the job again: %s", r.body)
	}
	if m := e.must(200, "GET", job, e.admin, nil); m["state"] != "sent" {
		t.Fatalf("the job: %v", m)
	}
	answer := fmt.Sprintf(`{"protocol": 1, "instance": "i", "epoch": "e", "epoch_start": 1, "records": [
		{"seq": 4, "kind": "job", "op": "upsert", "id": 1, "body": {"job": %d, "status": 200,
			"answer": {"success": true, "output": "IOS", "command": {"id": 8}, "device": {"id": 5}, "command_log_id": 77}}}]}`, jobs.Jobs[0].ID)
	if r := e.push(token, answer); r.status != 200 {
		t.Fatalf("the answer's push: %d %s", r.status, r.body)
	}
	done := e.must(200, "GET", job, e.admin, nil)
	result, _ := done["result"].(map[string]any)
	if done["state"] != "done" || done["status"] != 200.0 || result["output"] != "IOS" ||
		result["device"].(map[string]any)["id"] != float64(dev) || result["command_log_id"] != nil {
		t.Fatalf("the job done: %v", done)
	}
}
