package handlers

import (
	"context"
	"strings"
	"testing"
	"time"

	"fieldkit/events"
	"fieldkit/exec/devsim"
	"fieldkit/schedules"
	"fieldkit/store"
)

// A config backup schedule backs its targets up by itself, as the API's collect does:
// each device's running configuration kept as a config version, its log marked as the
// schedule's; an event rule on config versions hears of the version stored, once, and of
// a quarantined read.
func TestConfigBackupSchedule(t *testing.T) {
	x := newXEnv(t, 100)
	rc := &receiver{t: t, secret: "s"}
	rc.listen("127.0.0.1:0")
	p := x.events(events.Config{})
	x.api.Backup.Events = p
	svc := x.serviceSet("backups")
	hook := x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "configs", "payload_url": "http://" + rc.addr + "/", "secret": "s"})
	x.must(201, "POST", pathEventRules, x.admin, map[string]any{"name": "config changes", "object_types": []string{store.TypeConfigVersion},
		"event_types": []string{"object_created"}, "action_object_id": hook["id"], "state_changes_only": false})
	for _, body := range []map[string]any{
		{"name": "x", "kind": "config_backup", "command": x.command("V", "show version", "show"), "credential_set": svc, "cron": "@daily", "devices": []int64{x.iosID}},
		{"name": "y", "kind": "config_backup", "variables": map[string]any{"a": "b"}, "credential_set": svc, "cron": "@daily", "devices": []int64{x.iosID}},
	} {
		if r := x.do("POST", pathSchedules, x.admin, body); r.status != 400 {
			t.Fatalf("a config backup with a command or variables: %d %s", r.status, r.body)
		}
	}
	id := int64(x.must(201, "POST", pathSchedules, x.admin, map[string]any{"name": "nightly configs", "kind": "config_backup",
		"credential_set": svc, "cron": "0 2 * * *", "devices": []int64{x.iosID}})["id"].(float64))
	x.scheduler(nil, schedules.Limits{})
	x.must(202, "POST", pathSchedules+itoa(id)+"/run/", x.admin, nil)
	run := x.lastRun(id, "", 20*time.Second)
	if run["status"] != "completed" || run["successful"].(float64) != 1 {
		t.Fatalf("first run: %v", run)
	}
	vs := x.versionsOf(x.iosID)
	if len(vs) != 1 || vs[0]["status"] != "stored" {
		t.Fatalf("versions after the run: %v", vs)
	}
	logs := x.must(200, "GET", pathCommandLogs+"?schedule_id="+itoa(id), x.admin, nil)["results"].([]any)
	if len(logs) != 1 || logs[0].(map[string]any)["source"] != "schedule" || logs[0].(map[string]any)["sent_command"] != "show running-config" {
		t.Fatalf("the run's logs: %v", logs)
	}
	got := rc.waitFor(1, 10*time.Second)
	if !got[0].signed || got[0].json["model"] != "configversion" || got[0].json["data"].(map[string]any)["status"] != "stored" ||
		got[0].json["data"].(map[string]any)["text"] != nil {
		t.Fatalf("the stored version's webhook: %s", got[0].body)
	}
	// Unchanged: a good run, no new version, no event.
	x.must(202, "POST", pathSchedules+itoa(id)+"/run/", x.admin, nil)
	if run = x.lastRun(id, run["started"].(string), 20*time.Second); run["status"] != "completed" {
		t.Fatalf("second run: %v", run)
	}
	rc.waitFor(1, time.Second)
	// A read cut short is quarantined: the run fails for that device, the rule hears of it.
	x.ios.SetFault(devsim.FaultDisconnect)
	x.must(202, "POST", pathSchedules+itoa(id)+"/run/", x.admin, nil)
	if run = x.lastRun(id, run["started"].(string), 20*time.Second); run["status"] != "failed" || run["failed"].(float64) != 1 {
		t.Fatalf("run on a device that hangs up: %v", run)
	}
	got = rc.waitFor(2, 10*time.Second)
	if got[1].json["data"].(map[string]any)["status"] != "quarantined" {
		t.Fatalf("the quarantined read's webhook: %s", got[1].body)
	}
}

// Backup health: each device's last good backup against its limit, the site's own when
// its custom field sets one; never backed up first. The list needs view on config
// versions and shows only the devices the user may view; a device whose backup grows
// stale raises backup_stale once, and backup_fresh when a backup is good again.
func TestBackupHealth(t *testing.T) {
	x := newXEnv(t, 100)
	rc := &receiver{t: t}
	rc.listen("127.0.0.1:0")
	p := x.events(events.Config{})
	_, other := x.device("never1", "cisco_ios", x.iosPlat)
	x.collect(x.admin, x.token, x.iosID)
	h := x.must(200, "GET", pathBackupHealth, x.admin, nil)
	rows := h["results"].([]any)
	if h["count"].(float64) != 2 || rows[0].(map[string]any)["device"].(map[string]any)["id"].(float64) != float64(other) ||
		rows[0].(map[string]any)["status"] != "never" || rows[1].(map[string]any)["status"] != "ok" ||
		rows[1].(map[string]any)["limit_seconds"].(float64) != 26*3600 || h["summary"].(map[string]any)["never"].(float64) != 1 {
		t.Fatalf("backup health: %v", h)
	}
	// The site's own limit: 36 ms (0.00001 h), so the backup is stale at once.
	x.must(200, "PATCH", pathSites+"1/", x.admin, map[string]any{"custom_fields": map[string]any{store.SiteBackupLimit: 0.00001}})
	if r := x.do("PATCH", pathSites+"1/", x.admin, map[string]any{"custom_fields": map[string]any{store.SiteBackupLimit: "soon"}}); r.status != 400 {
		t.Fatalf("a backup limit that is no number: %d %s", r.status, r.body)
	}
	time.Sleep(50 * time.Millisecond)
	stale := x.must(200, "GET", pathBackupHealth+"?status=stale", x.admin, nil)
	if stale["count"].(float64) != 1 || stale["results"].([]any)[0].(map[string]any)["limit_from"] != "site" {
		t.Fatalf("stale: %v", stale)
	}
	if r := x.do("GET", pathBackupHealth+"?status=old", x.admin, nil); r.status != 400 || !strings.Contains(string(r.body), "status") {
		t.Fatalf("a status that is none: %d %s", r.status, r.body)
	}
	// Permissions: view on config versions, and only the devices one may view.
	bob := x.user("bob", false)
	if r := x.do("GET", pathBackupHealth, bob, nil); r.status != 403 {
		t.Fatalf("without view on config versions: %d %s", r.status, r.body)
	}
	x.grant("bob", store.TypeConfigVersion, []string{"view"}, "")
	x.grant("bob", store.TypeDevice, []string{"view"}, `{"name": "never1"}`)
	if m := x.must(200, "GET", pathBackupHealth, bob, nil); m["count"].(float64) != 1 {
		t.Fatalf("bob's backup health: %v", m)
	}
	// Events on the change of state, once.
	hook := x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "backups", "payload_url": "http://" + rc.addr + "/"})
	x.must(201, "POST", pathEventRules, x.admin, map[string]any{"name": "stale backups", "object_types": []string{store.TypeDevice},
		"event_types": []string{"backup_stale"}, "action_object_id": hook["id"]})
	watch := func() {
		rows, err := x.db.BackupHealthOf(context.Background(), 26*time.Hour, store.True, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := p.WatchBackups(context.Background(), rows); err != nil {
			t.Fatal(err)
		}
	}
	watch()
	watch()
	got := rc.waitFor(1, 10*time.Second)
	backup := got[0].json["data"].(map[string]any)["backup"].(map[string]any)
	if got[0].json["event"] != "backup_stale" || got[0].json["state"] != "firing" || backup["status"] != "stale" ||
		got[0].json["data"].(map[string]any)["name"] != "sw1" {
		t.Fatalf("the stale backup's webhook: %s", got[0].body)
	}
	x.must(200, "PATCH", pathSites+"1/", x.admin, map[string]any{"custom_fields": map[string]any{store.SiteBackupLimit: 24}})
	watch()
	got = rc.waitFor(2, 10*time.Second)
	if got[1].json["event"] != "backup_fresh" || got[1].json["state"] != "resolved" || !strings.Contains(string(got[1].body), `"limit_seconds":86400`) {
		t.Fatalf("the fresh backup's webhook: %s", got[1].body)
	}
}
