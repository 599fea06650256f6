package handlers

import (
	"encoding/json"
	"strings"
	"testing"
)

// OPTIONS describes a resource's fields from its declaration, in order, with what a
// form needs: type, label, required, choices with labels, where references come from.
func TestOptionsMetadata(t *testing.T) {
	e := newEnv(t)
	r := e.do("OPTIONS", pathDevices, e.admin, nil)
	if r.status != 200 {
		t.Fatalf("OPTIONS: %d %s", r.status, r.body)
	}
	// the fields come in the declaration's order
	if i, j := strings.Index(string(r.body), `"name":{`), strings.Index(string(r.body), `"site":{`); i < 0 || j < i {
		t.Errorf("fields out of order: %s", r.body)
	}
	var m struct {
		Name    string
		Actions map[string]map[string]struct {
			Type, Label string
			ListURL     string `json:"list_url"`
			Required    bool
			ReadOnly    bool `json:"read_only"`
			Choices     []struct {
				Value       string
				DisplayName string `json:"display_name"`
			}
			Default any
		}
	}
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatal(err)
	}
	post := m.Actions["POST"]
	if m.Name != "Devices" || post["name"].Type != "string" || !post["name"].Required {
		t.Errorf("name: %+v", m)
	}
	if s := post["site"]; s.Type != "field" || s.ListURL != pathSites || !s.Required {
		t.Errorf("site: %+v", s)
	}
	if s := post["status"]; s.Type != "choice" || s.Default != "active" || len(s.Choices) != 7 || s.Choices[1].DisplayName != "Offline" {
		t.Errorf("status: %+v", s)
	}
	if s := post["primary_ip"]; !s.ReadOnly {
		t.Errorf("primary_ip: %+v", s)
	}
	if _, ok := post["host_key"]; ok {
		t.Error("an internal column is described")
	}
	plat := e.do("OPTIONS", pathPlatforms, e.admin, nil).json(t)
	driver := plat["actions"].(map[string]any)["POST"].(map[string]any)["driver"].(map[string]any)
	if driver["type"] != "choice" || !strings.Contains(string(must(json.Marshal(driver["choices"]))), `"value":"cisco_ios"`) {
		t.Errorf("driver choices come from exec: %v", driver)
	}
	if put := e.do("OPTIONS", pathDevices+"1/", e.admin, nil).json(t)["actions"].(map[string]any); put["PUT"] == nil {
		t.Errorf("object OPTIONS: %v", put)
	}
	bob := e.user("bob", false)
	e.grant("bob", "dcim.device", []string{"view"}, "")
	if acts := e.do("OPTIONS", pathDevices, bob, nil).json(t)["actions"].(map[string]any); len(acts) != 0 {
		t.Errorf("a user who may not add sees actions: %v", acts)
	}
	if r := e.do("OPTIONS", pathDevices, "", nil); r.status != 401 {
		t.Errorf("anonymous OPTIONS: %d", r.status)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// OPTIONS names every ordering a list accepts, and the list accepts each, both ways: the
// web UI makes exactly those columns sortable.
func TestOptionsOrderingIsAccepted(t *testing.T) {
	e := newEnv(t)
	for _, res := range e.api.routedResources() {
		t.Run(res.Path, func(t *testing.T) {
			r := e.do("OPTIONS", res.Path, e.admin, nil)
			var m struct{ Ordering []string }
			if err := json.Unmarshal(r.body, &m); err != nil || r.status != 200 {
				t.Fatalf("OPTIONS: %d %s", r.status, r.body)
			}
			if len(m.Ordering) == 0 {
				t.Fatalf("no ordering named: %s", r.body)
			}
			for _, name := range m.Ordering {
				for _, o := range []string{name, "-" + name} {
					if r := e.do("GET", res.Path+"?limit=1&ordering="+o, e.admin, nil); r.status != 200 {
						t.Errorf("ordering=%s: %d %s", o, r.status, r.body)
					}
				}
			}
		})
	}
	if r := e.do("GET", pathDevices+"?ordering=no_such_field", e.admin, nil); r.status != 400 {
		t.Errorf("an ordering not named is refused: %d %s", r.status, r.body)
	}
}
