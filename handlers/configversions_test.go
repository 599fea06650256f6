package handlers

import (
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/exec/devsim"
)

// simClock is a simulated device's clock that a test moves.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *simClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *simClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const pathCollect = pathConfigVers + "collect/"

// collect backs up devices through the API and returns each device's result.
func (x *xenv) collect(token, setToken string, devices ...int64) []map[string]any {
	x.t.Helper()
	m := x.must(200, "POST", pathCollect, token, map[string]any{"device_ids": devices, "credential_token": setToken})
	var out []map[string]any
	for _, r := range m["results"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

// versionsOf lists a device's config versions, newest first.
func (x *xenv) versionsOf(device int64) []map[string]any {
	x.t.Helper()
	var out []map[string]any
	for _, v := range x.must(200, "GET", pathConfigVers+"?device_id="+itoa(device), x.admin, nil)["results"].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

func n64(v any) int64 { f, _ := v.(float64); return int64(f) }

// TestConfigVersionsOnSimulator walks a switch's config history: a second read whose
// only change is the clock line keeps one version; a config command between two reads
// makes a version attributed to it; a console change one made outside FieldKit; a
// flip back is marked oscillating once; a truncated read is quarantined with its
// transcript; secrets are masked everywhere but the raw text.
func TestConfigVersionsOnSimulator(t *testing.T) {
	clock := &simClock{now: time.Date(2024, 3, 4, 10, 0, 0, 0, time.UTC)}
	x := newXEnv(t, 100)
	sim, dev := x.deviceWith("edge1", "cisco_ios", x.iosPlat, func(c *devsim.Config) { c.Clock = clock.Now })

	first := x.collect(x.admin, x.token, dev)[0]
	if first["status"] != "stored" || first["device_name"] != "edge1" || first["command_log_id"] == nil {
		t.Fatalf("first collection: %v", first)
	}
	clock.Add(5 * time.Minute)
	again := x.collect(x.admin, x.token, dev)[0]
	if again["status"] != "unchanged" || n64(again["version_id"]) != n64(first["version_id"]) {
		t.Fatalf("only the clock line changed: %v", again)
	}
	if vs := x.versionsOf(dev); len(vs) != 1 {
		t.Fatalf("versions after two reads with only the clock changed: %d", len(vs))
	}
	if !strings.Contains(sim.RunningConfig(), "! Last configuration change at 10:05:00") {
		t.Fatalf("the simulator's clock line did not move:\n%s", sim.RunningConfig())
	}

	// The stored version: masked, normalised, its log marked as a backup.
	v := x.must(200, "GET", pathConfigVers+itoa(n64(first["version_id"]))+"/", x.admin, nil)
	text := v["text"].(string)
	if !strings.Contains(text, "username admin privilege 15 secret 9 <secret hidden>") || strings.Contains(text, "$9$") ||
		strings.Contains(text, "Last configuration change") || !strings.HasSuffix(text, "end\n") || n64(v["secrets"]) < 1 {
		t.Errorf("stored text:\n%s", text)
	}
	lg := x.must(200, "GET", pathCommandLogs+itoa(n64(first["command_log_id"]))+"/", x.admin, nil)
	if lg["source"] != "backup" || strings.Contains(lg["output"].(string), "$9$") ||
		lg["command"].(map[string]any)["name"] != "Config backup" || lg["sent_command"] != "show running-config" {
		t.Errorf("the collection's log: source %v command %v sent %v", lg["source"], lg["command"], lg["sent_command"])
	}

	// A config command between two reads: a version attributed to it.
	desc := x.command("Describe Gi0/1", "interface GigabitEthernet0/1\n description to-core", "config")
	x.must(200, "POST", execPath(desc), x.admin, map[string]any{"device_id": dev, "credential_token": x.token})
	changed := x.collect(x.admin, x.token, dev)[0]
	v2 := x.must(200, "GET", pathConfigVers+itoa(n64(changed["version_id"]))+"/", x.admin, nil)
	changes := v2["changes"].([]any)
	if changed["status"] != "stored" || v2["changed_outside"] != false || len(changes) != 1 ||
		changes[0].(map[string]any)["username"] != "admin" ||
		changes[0].(map[string]any)["sent_command"] != "interface GigabitEthernet0/1\n description to-core" ||
		n64(v2["previous_id"]) != n64(first["version_id"]) || n64(v2["added"]) != 1 {
		t.Errorf("a version after a FieldKit change: %v", v2)
	}
	d := x.must(200, "GET", pathConfigVers+itoa(n64(changed["version_id"]))+"/diff/?against=previous", x.admin, nil)
	if !strings.Contains(d["unified"].(string), "\n+ description to-core\n") {
		t.Errorf("diff with the previous version:\n%s", d["unified"])
	}

	// A change at the console: outside FieldKit.
	sim.SetDescription("GigabitEthernet0/1", "to-core-2")
	outside := x.collect(x.admin, x.token, dev)[0]
	v3 := x.must(200, "GET", pathConfigVers+itoa(n64(outside["version_id"]))+"/", x.admin, nil)
	if v3["changed_outside"] != true || len(v3["changes"].([]any)) != 0 || v3["oscillating"] != false {
		t.Errorf("a change outside FieldKit: %v", v3)
	}
	// Back to the previous description: equal to the version before the previous one.
	sim.SetDescription("GigabitEthernet0/1", "to-core")
	back := x.collect(x.admin, x.token, dev)[0]
	v4 := x.must(200, "GET", pathConfigVers+itoa(n64(back["version_id"]))+"/", x.admin, nil)
	flip, _ := v4["flipping"].(map[string]any)
	if v4["oscillating"] != true || v4["hash"] != v2["hash"] || flip == nil ||
		flip["removed"].([]any)[0] != " description to-core-2" || flip["added"].([]any)[0] != " description to-core" {
		t.Errorf("a flip back: oscillating %v flipping %v", v4["oscillating"], v4["flipping"])
	}
	sim.SetDescription("GigabitEthernet0/1", "to-core-2")
	again2 := x.collect(x.admin, x.token, dev)[0]
	if v5 := x.must(200, "GET", pathConfigVers+itoa(n64(again2["version_id"]))+"/", x.admin, nil); v5["oscillating"] != false {
		t.Errorf("an oscillation is marked once, not at every flip: %v", v5)
	}

	// A read cut short: quarantined with its reason and transcript, never a version.
	sim.SetFault(devsim.FaultTruncate)
	cut := x.collect(x.admin, x.token, dev)[0]
	sim.SetFault(devsim.FaultNone)
	q := x.must(200, "GET", pathConfigVers+itoa(n64(cut["version_id"]))+"/", x.admin, nil)
	if cut["status"] != "quarantined" || q["status"] != "quarantined" ||
		!strings.Contains(q["reason"].(string), "end marker") || q["hash"] != "" || q["text"] != "" || q["command_log_id"] == nil {
		t.Errorf("a truncated read: %v / %v", cut, q)
	}
	transcript := x.must(200, "GET", pathCommandLogs+itoa(n64(q["command_log_id"]))+"/", x.admin, nil)
	if out := transcript["output"].(string); !strings.Contains(out, "hostname edge1") || strings.Contains(out, "\nend") {
		t.Errorf("the quarantined read's transcript:\n%s", out)
	}
	if latest := x.must(200, "GET", pathConfigVers+"?device_id="+itoa(dev)+"&latest=true", x.admin, nil)["results"].([]any); len(latest) != 1 ||
		n64(latest[0].(map[string]any)["id"]) != n64(again2["version_id"]) {
		t.Errorf("the latest version after a quarantined read: %v", latest)
	}
}

// TestConfigRawPermission: the raw text needs view_raw_config on the version; viewing
// is not enough, and a user who cannot view the version gets a 404.
func TestConfigRawPermission(t *testing.T) {
	x := newXEnv(t, 100)
	v := x.collect(x.admin, x.token, x.iosID)[0]
	raw := pathConfigVers + itoa(n64(v["version_id"])) + "/raw/"

	m := x.must(200, "GET", raw, x.admin, nil)
	if !strings.Contains(m["raw"].(string), "secret 9 $9$") {
		t.Errorf("a superuser's raw text: %v", m)
	}
	viewer := x.user("viewer", false)
	x.grant("viewer", "netbox_toolkit_plugin.configversion", []string{"view"}, "")
	x.must(200, "GET", pathConfigVers+itoa(n64(v["version_id"]))+"/", viewer, nil)
	if r := x.do("GET", raw, viewer, nil); r.status != 403 {
		t.Errorf("raw without view_raw_config: %d %s", r.status, r.body)
	}
	auditor := x.user("auditor", false)
	x.grant("auditor", "netbox_toolkit_plugin.configversion", []string{"view", "view_raw_config"}, `{"device__name": "sw1"}`)
	if m := x.must(200, "GET", raw, auditor, nil); !strings.Contains(m["raw"].(string), "$9$") {
		t.Errorf("raw with view_raw_config: %v", m)
	}
	x.user("stranger", false)
	if r := x.do("GET", raw, x.keyOf("stranger"), nil); r.status != 404 {
		t.Errorf("raw of a version out of sight: %d", r.status)
	}
}

// TestConfigCollectChecks: collecting needs execute_show and a valid credential
// token; devices out of sight, or of a platform without a running-config command,
// are rejected one by one; the floor quarantines a short read.
func TestConfigCollectChecks(t *testing.T) {
	x := newXEnv(t, 100)
	x.user("nobody", false)
	if r := x.do("POST", pathCollect, x.keyOf("nobody"), map[string]any{"device_ids": []int64{x.iosID}, "credential_token": x.token}); r.status != 403 {
		t.Errorf("no execute_show: %d", r.status)
	}
	for _, tt := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"credential_token": x.token}, "device_ids"},
		{map[string]any{"device_ids": []int64{}, "credential_token": x.token}, "device_ids"},
		{map[string]any{"device_ids": []int64{x.iosID}}, "credential_token"},
		{map[string]any{"device_ids": []int64{x.iosID}, "credential_token": "fkc_nope"}, "credential_token"},
	} {
		if r := x.do("POST", pathCollect, x.admin, tt.body); r.status != 400 || r.json(t)[tt.field] == nil {
			t.Errorf("%v: %d %s", tt.body, r.status, r.body)
		}
	}
	op := x.user("op", false)
	x.grant("op", "netbox_toolkit_plugin.command", []string{"execute_show"}, "")
	x.grant("op", "dcim.device", []string{"view"}, `{"name": "sw1"}`)
	opToken, _ := x.credSet("op", "op's", nil)
	_, hidden := x.device("sw9", "cisco_ios", x.iosPlat)
	linuxPlat := tkPlatform(t, x.db, "Linux", "linux")
	_, lin := x.device("srv1", "linux", linuxPlat)
	x.grant("op", "dcim.device", []string{"view"}, `{"name": "srv1"}`)
	res := x.collect(op, opToken, x.iosID, hidden, lin)
	if res[0]["status"] != "stored" || res[1]["status"] != "rejected" || res[1]["reason"] != "Device not found." ||
		res[2]["status"] != "rejected" || !strings.Contains(res[2]["reason"].(string), "config_command") {
		t.Errorf("results: %v", res)
	}

	short := newXEnv(t, 100)
	short.api.Backup.MinLines = 500
	if r := short.collect(short.admin, short.token, short.iosID)[0]; r["status"] != "quarantined" ||
		!strings.Contains(r["reason"].(string), "below the floor of 500") {
		t.Errorf("below the floor: %v", r)
	}
}

// TestConfigSearchAndLastGood: the search of the latest configurations finds a masked
// secret only for users who may see secrets; the last-good list names every device,
// those never backed up first.
func TestConfigSearchAndLastGood(t *testing.T) {
	x := newXEnv(t, 100)
	_, never := x.device("sw2", "cisco_ios", x.iosPlat)
	x.collect(x.admin, x.token, x.iosID)
	find := func(token, q string) map[string]any {
		return x.must(200, "GET", pathConfigVers+"search/?q="+q, token, nil)
	}
	m := find(x.admin, "secret%209%20%249")
	if n64(m["count"]) != 1 {
		t.Fatalf("an admin searches the text as read: %v", m)
	}
	hit := m["results"].([]any)[0].(map[string]any)
	if hit["raw"] != true || !strings.Contains(hit["lines"].([]any)[0].(string), "secret 9 $9$") || hit["device"].(map[string]any)["name"] != "sw1" {
		t.Errorf("an admin's hit: %v", hit)
	}
	viewer := x.user("viewer", false)
	x.grant("viewer", "netbox_toolkit_plugin.configversion", []string{"view"}, "")
	if m := find(viewer, "secret%209%20%249"); n64(m["count"]) != 0 {
		t.Errorf("a viewer finds a masked secret: %v", m)
	}
	if m := find(viewer, "hostname%20SW1"); n64(m["count"]) != 1 || m["results"].([]any)[0].(map[string]any)["raw"] != false {
		t.Errorf("a viewer's search of the text as shown: %v", m)
	}
	if r := x.do("GET", pathConfigVers+"search/", viewer, nil); r.status != 400 || r.json(t)["q"] == nil {
		t.Errorf("a search without q: %d %s", r.status, r.body)
	}
	// The list's own q, on the text as shown, with latest.
	if l := x.must(200, "GET", pathConfigVers+"?q=hostname+sw1&latest=true&exclude=text", viewer, nil); n64(l["count"]) != 1 {
		t.Errorf("?q= on the list: %v", l)
	}

	lg := x.must(200, "GET", pathConfigVers+"last-good/", x.admin, nil)
	rows := lg["results"].([]any)
	if len(rows) != 2 || rows[0].(map[string]any)["device"].(map[string]any)["id"] != float64(never) ||
		rows[0].(map[string]any)["last_good"] != nil || rows[1].(map[string]any)["last_good"] == nil {
		t.Errorf("last good backups: %v", rows)
	}
	if r := x.do("GET", pathConfigVers+"last-good/?site_id=x", x.admin, nil); r.status != 400 || r.json(t)["site_id"] == nil {
		t.Errorf("a bad site_id: %d %s", r.status, r.body)
	}
	if r := x.do("GET", pathConfigVers+"1/diff/?against=x", x.admin, nil); r.status != 400 || r.json(t)["against"] == nil {
		t.Errorf("a bad against: %d %s", r.status, r.body)
	}
	x.user("nobody", false)
	if r := x.do("GET", pathConfigVers+"last-good/", x.keyOf("nobody"), nil); r.status != 403 {
		t.Errorf("last-good without device view: %d", r.status)
	}
}
