package handlers

import (
	"net/http"
	"strings"
	"testing"

	"fieldkit/netbox"
	"fieldkit/netbox/fakenetbox"
	"fieldkit/store"
)

// syncEnv is a server whose NetBox sync reads the fake NetBox.
func syncEnv(t *testing.T) (*env, *fakenetbox.NetBox) {
	nb := fakenetbox.Start(t, "../testdata/netbox", false)
	e := newEnv(t, func(db *store.DB, o *Options) {
		o.NetBox = netbox.NewSyncer(db, netbox.Config{URL: nb.URL, Token: fakenetbox.Token, Filter: "tag=managed"}, o.Logger)
	})
	return e, nb
}

// TestInventorySyncEndpoint: POST runs a sync for whoever may add and change every
// device; GET says how it went, never with the token.
func TestInventorySyncEndpoint(t *testing.T) {
	e, _ := syncEnv(t)
	viewer := e.user("viewer", false)
	e.grant("viewer", store.TypeDevice, []string{"view"}, "")
	scoped := e.user("scoped", false)
	e.grant("scoped", store.TypeDevice, []string{"view", "add", "change"}, `{"site__slug": "paris-1"}`)
	writer := e.user("writer", false)
	e.grant("writer", store.TypeDevice, []string{"view", "add", "change"}, "")
	for _, tok := range []string{viewer, scoped} {
		if r := e.do("POST", pathInventorySync, tok, nil); r.status != 403 {
			t.Errorf("sync without the permission: %d %s", r.status, r.body)
		}
	}
	if r := e.do("POST", pathInventorySync, "", nil); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
	if n := e.must(200, "GET", pathDevices, e.admin, nil)["count"]; n != 0.0 {
		t.Fatalf("a refused sync synced: %v devices", n)
	}
	rep := e.must(200, "POST", pathInventorySync, writer, nil)
	if rep["objects"].(map[string]any)["devices"].(map[string]any)["created"] != 4.0 {
		t.Errorf("report: %v", rep)
	}
	st := e.do("GET", pathInventorySync, viewer, nil)
	body := st.json(t)
	runs := body["runs"].([]any)
	if st.status != 200 || body["configured"] != true || body["filter"] != "tag=managed" || len(runs) != 1 ||
		runs[0].(map[string]any)["state"] != "done" || strings.Contains(string(st.body), fakenetbox.Token) {
		t.Errorf("status: %d %s", st.status, st.body)
	}
	if r := e.do("GET", pathInventorySync, e.user("nobody", false), nil); r.status != 403 {
		t.Errorf("status without view: %d", r.status)
	}
}

// TestInventorySyncFailure: NetBox's refusal comes back as a 502 with its reason.
func TestInventorySyncFailure(t *testing.T) {
	e, nb := syncEnv(t)
	nb.Hook = func(r *http.Request) int {
		if r.URL.Path == "/api/ipam/ip-addresses/" {
			return http.StatusServiceUnavailable
		}
		return 0
	}
	r := e.do("POST", pathInventorySync, e.admin, nil)
	if r.status != 502 || !strings.Contains(r.json(t)["detail"].(string), "503 Service Unavailable") {
		t.Errorf("%d %s", r.status, r.body)
	}
	if n := e.must(200, "GET", pathDevices, e.admin, nil)["count"]; n != 0.0 {
		t.Errorf("%v devices after a failed sync", n)
	}
	unconfigured := newEnv(t)
	if r := unconfigured.do("POST", pathInventorySync, unconfigured.admin, nil); r.status != 400 || !strings.Contains(string(r.body), "netbox_url") {
		t.Errorf("no NetBox: %d %s", r.status, r.body)
	}
}

// TestSyncedObjectsRefuseWrites: every object type a sync brings refuses a change or a
// delete through the API with a 400 that says it comes from NetBox; FieldKit's own
// settings of it may change; an import may not change it either.
func TestSyncedObjectsRefuseWrites(t *testing.T) {
	e, _ := syncEnv(t)
	e.must(200, "POST", pathInventorySync, e.admin, nil)
	first := func(path string) string {
		res := e.must(200, "GET", path+"?netbox_id__isnull=false&limit=1", e.admin, nil)["results"].([]any)
		if len(res) == 0 {
			t.Fatalf("no synced object at %s", path)
		}
		return path + itoa(int64(res[0].(map[string]any)["id"].(float64))) + "/"
	}
	for _, c := range []struct {
		path  string
		write map[string]any
	}{
		{pathSites, map[string]any{"description": "x"}}, {pathPlatforms, map[string]any{"name": "x"}},
		{pathDevices, map[string]any{"status": "offline"}}, {pathDevices, map[string]any{"mgmt_ip": "10.0.0.1/24"}},
		{pathInterfaces, map[string]any{"enabled": false}}, {pathVLANs, map[string]any{"name": "x"}},
		{pathIPAddresses, map[string]any{"dns_name": "x.example"}}, {pathTags, map[string]any{"color": "000000"}},
	} {
		obj := first(c.path)
		r := e.do("PATCH", obj, e.admin, c.write)
		if r.status != 400 || !strings.Contains(string(r.body), "comes from NetBox") {
			t.Errorf("PATCH %s %v: %d %s", obj, c.write, r.status, r.body)
		}
		if r := e.do("DELETE", obj, e.admin, nil); r.status != 400 || !strings.Contains(string(r.body), "comes from NetBox") {
			t.Errorf("DELETE %s: %d %s", obj, r.status, r.body)
		}
	}
	e.must(200, "PATCH", first(pathPlatforms), e.admin, map[string]any{"driver": "cisco_ios", "connect_timeout": 20})
	e.must(200, "PATCH", first(pathDevices), e.admin, map[string]any{"command_timeout": 60})
	// A local object beside the synced ones is FieldKit's as ever.
	site := e.must(200, "GET", first(pathSites), e.admin, nil)
	e.must(201, "POST", pathDevices, e.admin, map[string]any{"name": "local-1", "site": site["id"], "mgmt_ip": "10.9.9.9/24"})
	r := e.importFile(e.admin, "devices.csv", "name,site,description\npar-core-1,paris-1,edited\n", nil)
	if r.status != 400 || !strings.Contains(string(r.body), "comes from NetBox") {
		t.Errorf("import over a synced device: %d %s", r.status, r.body)
	}
}
