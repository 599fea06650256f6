package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// TestNoDrift holds every routed resource to its schema, over HTTP: the fields a
// response carries are the schema's read properties; every write property is accepted
// and read back as written (nothing silently dropped); every read-only property sent
// in a write is refused by name.
func TestNoDrift(t *testing.T) {
	e := newEnv(t)
	fx := driftFixture(e)
	doc := schemaDoc(t, e)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	props := func(name string) map[string]any {
		s, _ := schemas[name].(map[string]any)
		p, _ := s["properties"].(map[string]any)
		return p
	}
	for _, res := range e.api.routedResources() {
		t.Run(res.Name(), func(t *testing.T) {
			id := fx.ids[res.Type()]
			obj := e.must(200, "GET", res.Path+itoa(id)+"/", e.admin, nil)
			read := props(res.Name())
			if got, want := slices.Sorted(maps.Keys(obj)), readProps(read); !slices.Equal(got, want) {
				t.Errorf("response fields %v, schema read properties %v", got, want)
			}
			if !e.api.routed(http.MethodPatch, res.Path+":id/") {
				return
			}
			write := props("PatchedWritable" + res.Name() + "Request")
			for _, name := range slices.Sorted(maps.Keys(write)) {
				if s, _ := write[name].(map[string]any); s["writeOnly"] == true && read[name] == nil {
					fx.writeOnly(t, res, id, name)
					continue
				}
				fx.roundTrip(t, res, id, name, write[name].(map[string]any), obj[name])
			}
			for name := range props("Writable" + res.Name() + "Request") {
				if _, ok := write[name]; !ok {
					fx.createOnly(t, res, id, name)
				}
			}
			for _, name := range slices.Sorted(maps.Keys(read)) {
				if _, ok := write[name]; ok || name == "id" {
					continue
				}
				r := e.do("PATCH", res.Path+itoa(id)+"/", e.admin, map[string]any{name: obj[name]})
				if r.status != 400 || r.json(t)[name] == nil {
					t.Errorf("PATCH of read-only %s: %d %s, want a 400 naming it", name, r.status, r.body)
				}
			}
		})
	}
}

// readProps are the properties a response shows: all but the write-only ones.
func readProps(p map[string]any) []string {
	var out []string
	for k, v := range p {
		if s, _ := v.(map[string]any); s["writeOnly"] != true {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// driftFix is the objects the drift test writes to and refers to.
type driftFix struct {
	e   *env
	ids map[string]int64 // the object under test, by object type
	// refs is an object of each type a reference may point to, other than the one the
	// object under test holds where that matters.
	refs map[string]int64
	// with are fields a write of the key must carry too ("Command.variables" needs a
	// command that uses them).
	with map[string]map[string]any
	// samples are the values written, where the schema alone cannot tell a valid one.
	samples map[string]any
}

func driftFixture(e *env) *driftFix {
	a := e.admin
	id := func(path string, body map[string]any) int64 {
		return int64(e.must(201, "POST", path, a, body)["id"].(float64))
	}
	site := id(pathSites, map[string]any{"name": "North", "slug": "north"})
	site2 := id(pathSites, map[string]any{"name": "South", "slug": "south"})
	plat := id(pathPlatforms, map[string]any{"name": "IOS", "slug": "ios"})
	plat2 := id(pathPlatforms, map[string]any{"name": "EOS", "slug": "eos"})
	tag := id(pathTags, map[string]any{"name": "Core", "slug": "core"})
	dev := id(pathDevices, map[string]any{"name": "sw1", "site": site, "platform": plat})
	iface := id(pathInterfaces, map[string]any{"device": dev, "name": "Gi1"})
	iface2 := id(pathInterfaces, map[string]any{"device": dev, "name": "Gi2"})
	vlan := id(pathVLANs, map[string]any{"vid": 10, "name": "users"})
	ip4 := id(pathIPAddresses, map[string]any{"address": "10.0.0.1/24", "assigned_object_type": "dcim.interface", "assigned_object_id": iface})
	ip6 := id(pathIPAddresses, map[string]any{"address": "2001:db8::1/64", "assigned_object_type": "dcim.interface", "assigned_object_id": iface})
	loose := id(pathIPAddresses, map[string]any{"address": "10.0.0.9/24"})
	cmd := id(pathCommands, map[string]any{"name": "Version", "command": "show version", "platforms": []any{plat}})
	group := id(pathGroups, map[string]any{"name": "noc"})
	user := id(pathUsers, map[string]any{"username": "bob", "password": "secret"})
	token := int64(e.must(201, "POST", pathTokens, a, map[string]any{"user": user})["id"].(float64))
	perm := id(pathPermissions, map[string]any{"name": "p", "object_types": []any{"dcim.site"}, "actions": []any{"view"}})
	log, err := e.db.CreateLog(context.Background(), store.Values{"command": cmd, "command_name": "Version", "device": dev, "device_name": "sw1",
		"user": 1, "username": "admin", "success": true, "created": time.Now()})
	if err != nil {
		e.t.Fatal(err)
	}
	kr, _ := store.NewKeyring(make([]byte, 32))
	set1, err := e.db.CreateServiceCredentialSet(context.Background(), kr, 1, store.CredentialInput{Name: ptrTo("svc1"), Username: ptrTo("u")}, store.True)
	if err != nil {
		e.t.Fatal(err)
	}
	set2, err := e.db.CreateServiceCredentialSet(context.Background(), kr, 1, store.CredentialInput{Name: ptrTo("svc2"), Username: ptrTo("u")}, store.True)
	if err != nil {
		e.t.Fatal(err)
	}
	sched := id(pathSchedules, map[string]any{"name": "nightly", "command": cmd, "devices": []any{dev}, "interval": 3600,
		"credential_set": set1})
	e.api.Exec.Keyring = kr
	hook := id(pathWebhooks, map[string]any{"name": "noc", "payload_url": "http://127.0.0.1:9/hook", "secret": "s3cret"})
	hook2 := id(pathWebhooks, map[string]any{"name": "noc2", "payload_url": "http://127.0.0.1:9/hook2"})
	rule := id(pathEventRules, map[string]any{"name": "failures", "object_types": []any{store.TypeCommandLog},
		"event_types": []any{"object_created"}, "action_object_id": hook})
	if err := e.db.QueueEvent(context.Background(), store.Event{ObjectType: store.TypeCommandLog, ObjectID: log,
		EventType: "object_created", At: time.Now()}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.Dispatched(context.Background(), []store.NewDelivery{{WebhookID: hook, RuleID: rule, ObjectType: store.TypeCommandLog,
		ObjectID: log, EventType: "object_created", State: "firing", Context: []byte(`{}`)}}, nil, nil); err != nil {
		e.t.Fatal(err)
	}
	cv, err := e.db.KeepConfig(context.Background(), kr, store.ConfigRead{DeviceID: dev, DeviceName: "sw1", LogID: log,
		Text: "hostname sw1\nend\n", Masked: "hostname sw1\nend\n", MinLines: 1, MaxShrink: 0.5})
	if err != nil {
		e.t.Fatal(err)
	}
	fx := &driftFix{e: e,
		ids: map[string]int64{store.TypeSite: site, store.TypePlatform: plat, store.TypeTag: tag, store.TypeDevice: dev,
			store.TypeInterface: iface2, store.TypeVLAN: vlan, store.TypeIPAddress: loose, store.TypeCommand: cmd,
			store.TypeGroup: group, store.TypeUser: user, store.TypeToken: token, store.TypePermission: perm,
			store.TypeCommandLog: log, store.TypeSchedule: sched, store.TypeWebhook: hook, store.TypeEvent: rule,
			store.TypeDelivery: 1, store.TypeConfigVersion: cv.VersionID},
		refs: map[string]int64{"Site": site2, "Platform": plat2, "Tag": tag, "Device": dev, "Interface": iface, "VLAN": vlan,
			"Group": group, "User": 1, "CredentialSet": set2, "Command": cmd},
		with: map[string]map[string]any{
			"Command.command":                {"variables": []any{}},
			"Command.variables":              {"command": "show drift <v>"},
			"Interface.untagged_vlan":        {"mode": "access"},
			"Interface.tagged_vlans":         {"mode": "tagged"},
			"IPAddress.assigned_object_id":   {"assigned_object_type": "dcim.interface"},
			"IPAddress.assigned_object_type": {"assigned_object_id": iface},
			"Schedule.cron":                  {"interval": nil},
			"Schedule.interval":              {"cron": ""},
			"Schedule.window_start":          {"window_end": "05:00"},
			"Schedule.window_end":            {"window_start": "01:00"},
			"Webhook.content_types":          {"type_create": true},
			"EventRule.object_types":         {"event_types": []any{"job_failed"}},
			"EventRule.event_types":          {"object_types": []any{store.TypeSchedule}},
		},
		samples: map[string]any{
			"Device.primary_ip4": ip4, "Device.mgmt_ip": "10.8.8.8/24", "Device.ssh_port": 2200, "Device.primary_ip6": ip6, "Device.custom_fields": map[string]any{"ssh_port": 2022},
			"Command.variables": []any{map[string]any{"name": "v", "display_name": "V"}}, "Command.command": "show drift",
			"IPAddress.address": "10.7.7.7/24", "IPAddress.dns_name": "drift.example", "IPAddress.assigned_object_id": iface,
			"User.username": "drift_user", "User.email": "drift@example.com", "Tag.color": "abcdef",
			"Token.expires": "2031-01-02T03:04:05.000000Z", "ObjectPermission.constraints": map[string]any{"id": 1},
			"ObjectPermission.object_types": []any{"dcim.device"}, "Site.slug": "drift", "Platform.slug": "drift",
			"Tag.slug": "drift", "VLAN.vid": 123,
			"Schedule.cron": "0 2 * * *", "Schedule.interval": 600, "Schedule.window_start": "01:00", "Schedule.window_end": "05:00",
			"Schedule.kind": "command", "Schedule.variables": map[string]any{},
			"Webhook.secret": secretMask, "Webhook.payload_url": "https://example.net/{{ data.id }}", "Webhook.content_types": []any{store.TypeCommandLog},
			"Webhook.conditions": map[string]any{"attr": "success", "value": false}, "Webhook.additional_headers": "X-Drift: yes",
			"EventRule.object_types": []any{store.TypeSchedule}, "EventRule.event_types": []any{"job_failed"},
			"EventRule.conditions":  map[string]any{"and": []any{map[string]any{"attr": "name", "value": "x"}}},
			"EventRule.action_type": "webhook", "EventRule.action_object_type": store.TypeWebhook, "EventRule.action_object_id": hook2,
		},
	}
	for typ, id := range seedReadOnly(e, site) {
		fx.ids[typ] = id
	}
	return fx
}

// roundTrip writes one field and reads it back.
func (fx *driftFix) roundTrip(t *testing.T, res *Resource, id int64, name string, s map[string]any, current any) {
	t.Helper()
	key := res.Name() + "." + name
	v, ok := fx.samples[key]
	if !ok {
		v = fx.sample(s, current)
	}
	body := map[string]any{name: v}
	maps.Copy(body, fx.with[key])
	r := fx.e.do("PATCH", res.Path+itoa(id)+"/", fx.e.admin, body)
	if r.status != 200 {
		t.Errorf("PATCH %s=%v: %d %s", name, v, r.status, r.body)
		return
	}
	got := fx.e.must(200, "GET", res.Path+itoa(id)+"/", fx.e.admin, nil)[name]
	if !sameValue(v, got) {
		t.Errorf("wrote %s=%v, read back %v", name, v, got)
	}
}

// createOnly writes a field a create takes and an update refuses (a token's key, shown
// in the create's response only).
func (fx *driftFix) createOnly(t *testing.T, res *Resource, id int64, name string) {
	t.Helper()
	v := strings.Repeat("ab", 20)
	if r := fx.e.must(201, "POST", res.Path, fx.e.admin, map[string]any{name: v}); r[name] != v {
		t.Errorf("create with %s: %v", name, r)
	}
	if r := fx.e.do("PATCH", res.Path+itoa(id)+"/", fx.e.admin, map[string]any{name: v}); r.status != 400 || r.json(t)[name] == nil {
		t.Errorf("PATCH of create-only %s: %d %s, want a 400 naming it", name, r.status, r.body)
	}
}

// writeOnly writes a write-only field: accepted, never shown.
func (fx *driftFix) writeOnly(t *testing.T, res *Resource, id int64, name string) {
	t.Helper()
	r := fx.e.must(200, "PATCH", res.Path+itoa(id)+"/", fx.e.admin, map[string]any{name: "drift-secret"})
	if _, shown := r[name]; shown {
		t.Errorf("write-only %s is shown: %v", name, r)
	}
}

// sample is a valid value for a schema property that differs from the current one.
func (fx *driftFix) sample(s map[string]any, current any) any {
	if all, ok := s["allOf"].([]any); ok {
		s = all[0].(map[string]any)
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, v := range enum {
			if v != nil && !sameValue(v, current) {
				return v
			}
		}
	}
	if one, ok := s["oneOf"].([]any); ok {
		return fx.refs[refName(one)]
	}
	if opts, ok := s["anyOf"].([]any); ok {
		return fx.refs[refName(opts)]
	}
	switch s["type"] {
	case "boolean":
		b, _ := current.(bool)
		return !b
	case "integer":
		return 7
	case "object":
		return map[string]any{"drift": "yes"}
	case "array":
		item := s["items"].(map[string]any)
		if enum, ok := item["enum"].([]any); ok {
			return []any{enum[0]}
		}
		return []any{fx.sample(item, nil)}
	}
	if s["format"] == "date-time" {
		return "2031-01-02T03:04:05.000000Z"
	}
	return "drift"
}

// refName is the resource a reference's "The id of the X." names.
func refName(opts []any) string {
	desc, _ := opts[0].(map[string]any)["description"].(string)
	return strings.TrimSuffix(strings.TrimPrefix(desc, "The id of the "), ".")
}

// sameValue reports whether what was written reads back as v: a reference by its id, a
// choice by its value, a list of references by their ids, an object by its keys.
func sameValue(written, read any) bool {
	norm := func(x any) any {
		b, _ := json.Marshal(x)
		var v any
		_ = json.Unmarshal(b, &v)
		return v
	}
	w, r := norm(written), norm(read)
	switch x := r.(type) {
	case map[string]any:
		wm, ok := w.(map[string]any)
		if !ok {
			if id, isRef := x["id"]; isRef {
				return id == w
			}
			return x["value"] == w
		}
		for k, v := range wm {
			if fmt.Sprint(x[k]) != fmt.Sprint(v) {
				return false
			}
		}
		return true
	case []any:
		wl, ok := w.([]any)
		if !ok || len(wl) != len(x) {
			return false
		}
		for i := range x {
			if wm, isMap := wl[i].(map[string]any); isMap {
				if xm, _ := x[i].(map[string]any); xm["name"] != wm["name"] {
					return false
				}
			} else if !sameValue(wl[i], x[i]) {
				return false
			}
		}
		return true
	case string:
		if t1, err := time.Parse(time.RFC3339, x); err == nil {
			t2, err := time.Parse(time.RFC3339, fmt.Sprint(w))
			return err == nil && t1.Equal(t2)
		}
	}
	return fmt.Sprint(w) == fmt.Sprint(r)
}
