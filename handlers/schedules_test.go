package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldkit/exec/devsim"
	"fieldkit/schedules"
	"fieldkit/store"
)

// serviceSet makes a service credential set (the device simulator's login), as an
// administrator does in the web interface.
func (x *xenv) serviceSet(name string) int64 {
	x.t.Helper()
	id, err := x.db.CreateServiceCredentialSet(context.Background(), x.kr, 1, store.CredentialInput{Name: &name,
		Username: ptrTo(simUser), Password: ptrTo(simPass), EnableSecret: ptrTo(simEnable)}, store.True)
	if err != nil {
		x.t.Fatal(err)
	}
	return id
}

// scheduler starts the schedules of the server, with the clock now, until the test ends.
func (x *xenv) scheduler(now func() time.Time, limits schedules.Limits) *schedules.Scheduler {
	x.t.Helper()
	s := schedules.New(schedules.Options{DB: x.db, Planner: x.api, Logger: x.api.Logger, Limits: limits, Now: now,
		Grace: time.Second})
	x.api.Schedules = s
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	x.t.Cleanup(func() { cancel(); <-done })
	return s
}

// lastRun waits for a schedule's last run to be recorded (after since, its start).
func (x *xenv) lastRun(id int64, since string, within time.Duration) map[string]any {
	x.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		m := x.must(200, "GET", pathSchedules+itoa(id)+"/", x.admin, nil)
		if run, ok := m["last_run"].(map[string]any); ok && run["finished"] != nil && run["started"].(string) > since {
			return run
		}
		time.Sleep(100 * time.Millisecond)
	}
	x.t.Fatalf("schedule %d: no run recorded within %s", id, within)
	return nil
}

func scheduleBody(name string, cmd, set int64, extra map[string]any) map[string]any {
	b := map[string]any{"name": name, "command": cmd, "credential_set": set, "cron": "@daily"}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// A schedule names what it runs, where, when and with what; the API refuses what
// could not run (and says which field), a person's own credential set above all.
func TestScheduleWritesAreChecked(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	svc := x.serviceSet("nightly")
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"a person's own set", scheduleBody("a", cmd, x.setID, map[string]any{"devices": []int64{x.iosID}}), "credential_set"},
		{"no set", map[string]any{"name": "b", "command": cmd, "cron": "@daily", "devices": []int64{x.iosID}}, "credential_set"},
		{"no target", scheduleBody("c", cmd, svc, nil), "devices"},
		{"no time", map[string]any{"name": "d", "command": cmd, "credential_set": svc, "devices": []int64{x.iosID}}, "cron"},
		{"cron and interval", scheduleBody("e", cmd, svc, map[string]any{"devices": []int64{x.iosID}, "interval": 600}), "interval"},
		{"bad cron", scheduleBody("f", cmd, svc, map[string]any{"devices": []int64{x.iosID}, "cron": "61 * * * *"}), "cron"},
		{"short interval", map[string]any{"name": "g", "command": cmd, "credential_set": svc, "devices": []int64{x.iosID}, "interval": 5}, "interval"},
		{"half a window", scheduleBody("h", cmd, svc, map[string]any{"devices": []int64{x.iosID}, "window_start": "22:00"}), "window_end"},
		{"bad window", scheduleBody("i", cmd, svc, map[string]any{"devices": []int64{x.iosID}, "window_start": "25:00", "window_end": "01:00"}), "window_start"},
		{"unknown variable", scheduleBody("j", cmd, svc, map[string]any{"devices": []int64{x.iosID}, "variables": map[string]any{"vlan": "10"}}), "variables"},
		{"no command", map[string]any{"name": "k", "credential_set": svc, "cron": "@daily", "devices": []int64{x.iosID}}, "command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := x.do("POST", pathSchedules, x.admin, tc.body)
			if r.status != 400 || r.json(t)[tc.field] == nil {
				t.Fatalf("%d %s, want a 400 naming %s", r.status, r.body, tc.field)
			}
		})
	}
	m := x.must(201, "POST", pathSchedules, x.admin, scheduleBody("ok", cmd, svc, map[string]any{"tags": []any{}, "devices": []int64{x.iosID}}))
	if m["status"].(map[string]any)["value"] != "active" || m["owner"].(map[string]any)["username"] != "admin" ||
		m["credential_set"].(map[string]any)["name"] != "nightly" || m["next_run"] != nil {
		t.Fatalf("created: %v", m)
	}
	// The command a schedule runs cannot be deleted from under it.
	if r := x.do("DELETE", pathCommands+itoa(cmd)+"/", x.admin, nil); r.status != 409 {
		t.Fatalf("deleting a scheduled command: %d %s, want 409", r.status, r.body)
	}
}

// Making a schedule with a service credential set takes the service action on that
// set; a user without it is refused, one with it becomes the schedule's owner.
func TestScheduleServiceSetPermission(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	svc := x.serviceSet("nightly")
	ops := x.user("ops", false)
	x.grant("ops", store.TypeSchedule, []string{"view", "add", "change"}, "")
	body := scheduleBody("ops-nightly", cmd, svc, map[string]any{"devices": []int64{x.iosID}})
	if r := x.do("POST", pathSchedules, ops, body); r.status != 403 || !strings.Contains(string(r.body), "service action") {
		t.Fatalf("without the service action: %d %s, want 403", r.status, r.body)
	}
	x.grant("ops", store.TypeCredentialSet, []string{"service"}, `{"name": "other"}`)
	if r := x.do("POST", pathSchedules, ops, body); r.status != 403 {
		t.Fatalf("with the service action on another set only: %d %s, want 403", r.status, r.body)
	}
	x.grant("ops", store.TypeCredentialSet, []string{"service"}, `{"name": "nightly"}`)
	m := x.must(201, "POST", pathSchedules, ops, body)
	if m["owner"].(map[string]any)["username"] != "ops" {
		t.Fatalf("owner: %v", m["owner"])
	}
	// An admin who saves it takes it over: runs then execute as the admin.
	id := int64(m["id"].(float64))
	m = x.must(200, "PATCH", pathSchedules+itoa(id)+"/", x.admin, map[string]any{"description": "taken over"})
	if m["owner"].(map[string]any)["username"] != "admin" {
		t.Fatalf("owner after the admin's save: %v", m["owner"])
	}
}

// Deleting or deactivating its service credential set pauses a schedule, and it says
// why; deactivating its owner does too.
func TestSchedulePausesWithoutItsSet(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	svc := x.serviceSet("nightly")
	id := int64(x.must(201, "POST", pathSchedules, x.admin, scheduleBody("n", cmd, svc, map[string]any{"devices": []int64{x.iosID}}))["id"].(float64))
	status := func() (string, string) {
		m := x.must(200, "GET", pathSchedules+itoa(id)+"/", x.admin, nil)
		return m["status"].(map[string]any)["value"].(string), m["status_reason"].(string)
	}
	off := false
	if err := x.db.UpdateServiceCredentialSet(context.Background(), x.kr, svc, store.CredentialInput{IsActive: &off}, store.True); err != nil {
		t.Fatal(err)
	}
	if s, why := status(); s != "paused" || !strings.Contains(why, "nightly is inactive") {
		t.Fatalf("set inactive: %s %q", s, why)
	}
	if err := x.db.DeleteServiceCredentialSet(context.Background(), svc, store.True); err != nil {
		t.Fatal(err)
	}
	if s, why := status(); s != "paused" || !strings.Contains(why, "was deleted") {
		t.Fatalf("set deleted: %s %q", s, why)
	}
	x.must(200, "PATCH", pathSchedules+itoa(id)+"/", x.admin, map[string]any{"enabled": false, "credential_set": x.serviceSet("other")})
	if s, _ := status(); s != "disabled" {
		t.Fatalf("disabled: %s", s)
	}
	if r := x.do("POST", pathSchedules+itoa(id)+"/run/", x.admin, nil); r.status != 503 {
		t.Fatalf("run now on a server without a scheduler: %d %s, want 503", r.status, r.body)
	}
	x.api.Schedules = schedules.New(schedules.Options{DB: x.db, Planner: x.api})
	if r := x.do("POST", pathSchedules+itoa(id)+"/run/", x.admin, nil); r.status != 409 || !strings.Contains(string(r.body), "Disabled") {
		t.Fatalf("run a disabled schedule: %d %s, want 409 saying why", r.status, r.body)
	}
}

// Done when: a schedule every minute on a tag runs on a device tagged after it was
// made. The scheduler's clock is set a second before a minute starts; the rest is real:
// the simulator's SSH server, the execution, the log.
func TestScheduleRunsOnADeviceTaggedAfterIt(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	svc := x.serviceSet("nightly")
	core := x.must(201, "POST", pathTags, x.admin, map[string]any{"name": "Core", "slug": "core"})
	id := int64(x.must(201, "POST", pathSchedules, x.admin, scheduleBody("every minute", cmd, svc,
		map[string]any{"cron": "* * * * *", "tags": []any{core["id"]}}))["id"].(float64))

	d, dev := x.device("core1", "cisco_ios", x.iosPlat)
	x.must(200, "PATCH", pathDevices+itoa(dev)+"/", x.admin, map[string]any{"tags": []any{core["id"]}})

	real := time.Now()
	offset := real.Truncate(time.Minute).Add(time.Minute - 1500*time.Millisecond).Sub(real)
	x.scheduler(func() time.Time { return time.Now().Add(offset) }, schedules.Limits{})
	run := x.lastRun(id, "", 20*time.Second)
	if run["status"] != "completed" || run["devices"].(float64) != 1 || run["trigger"] != "schedule" {
		t.Fatalf("run: %v", run)
	}
	logs := x.must(200, "GET", pathCommandLogs+"?schedule_id="+itoa(id), x.admin, nil)
	if logs["count"].(float64) != 1 {
		t.Fatalf("logs of the schedule: %v", logs)
	}
	l := logs["results"].([]any)[0].(map[string]any)
	if l["device"].(map[string]any)["name"] != "core1" || l["source"] != "schedule" ||
		l["schedule"].(map[string]any)["name"] != "every minute" || l["username"] != "admin" || l["success"] != true ||
		l["credential_set"].(map[string]any)["name"] != "nightly" {
		t.Fatalf("log: %v", l)
	}
	if !slices.Contains(d.Commands(), "show version") {
		t.Fatalf("the device received %q", d.Commands())
	}
	if x.ios.Logins() != 0 {
		t.Fatal("the untagged device was logged in to")
	}
	next := x.must(200, "GET", pathSchedules+itoa(id)+"/", x.admin, nil)["next_run"]
	if next == nil {
		t.Fatal("no next_run after a run")
	}
}

// Done when: a device that hangs does not delay the others beyond their own deadline.
// Two workers for the site: the hung device holds one until its 5 s deadline while the
// four others pass through the other, each well within its own.
func TestHungDeviceDoesNotDelayTheOthers(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	svc := x.serviceSet("nightly")
	hung, hungID := x.deviceWith("hung", "cisco_ios", x.iosPlat, nil)
	hung.SetFault(devsim.FaultSilence)
	devices := []int64{hungID}
	for i := range 4 {
		_, id := x.device(fmt.Sprintf("ok%d", i), "cisco_ios", x.iosPlat)
		devices = append(devices, id)
	}
	id := int64(x.must(201, "POST", pathSchedules, x.admin, scheduleBody("health", cmd, svc,
		map[string]any{"devices": devices, "timeout": 5}))["id"].(float64))
	x.scheduler(nil, schedules.Limits{Workers: 4, PerSite: 2})
	start := time.Now()
	x.must(202, "POST", pathSchedules+itoa(id)+"/run/", x.admin, nil)
	if r := x.do("POST", pathSchedules+itoa(id)+"/run/", x.admin, nil); r.status != 409 {
		t.Fatalf("a second run while one is going: %d %s, want 409", r.status, r.body)
	}
	run := x.lastRun(id, "", 30*time.Second)
	if run["status"] != "failed" || run["successful"].(float64) != 4 || run["failed"].(float64) != 1 || run["trigger"] != "manual" {
		t.Fatalf("run: %v", run)
	}
	var hungAt time.Time
	var okAt []time.Time
	for _, l := range x.must(200, "GET", pathCommandLogs+"?schedule_id="+itoa(id)+"&limit=10", x.admin, nil)["results"].([]any) {
		l := l.(map[string]any)
		at, _ := time.Parse(time.RFC3339Nano, l["created"].(string))
		if l["device"].(map[string]any)["name"] == "hung" {
			hungAt = at
			if l["success"] != false || l["failure"].(map[string]any)["reason"] != "timeout" {
				t.Fatalf("hung device's log: %v", l)
			}
			continue
		}
		if l["success"] != true || l["execution_duration"].(float64) >= 5 {
			t.Fatalf("healthy device's log: %v", l)
		}
		okAt = append(okAt, at)
	}
	if len(okAt) != 4 || hungAt.IsZero() {
		t.Fatalf("logs: %d healthy, hung at %v", len(okAt), hungAt)
	}
	for _, at := range okAt {
		if !at.Before(hungAt) {
			t.Fatalf("a healthy device finished at %v, after the hung one's deadline (%v): it waited for it", at, hungAt)
		}
	}
	t.Logf("run took %s; the hung device's deadline was 5 s", time.Since(start).Round(time.Millisecond))
}

// Running a schedule now takes the run action on it.
func TestScheduleRunNowPermission(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	svc := x.serviceSet("nightly")
	id := int64(x.must(201, "POST", pathSchedules, x.admin, scheduleBody("n", cmd, svc, map[string]any{"devices": []int64{x.iosID}}))["id"].(float64))
	x.scheduler(nil, schedules.Limits{})
	viewer := x.user("viewer", false)
	x.grant("viewer", store.TypeSchedule, []string{"view", "change"}, "")
	if r := x.do("POST", pathSchedules+itoa(id)+"/run/", viewer, nil); r.status != 403 {
		t.Fatalf("without run: %d %s, want 403", r.status, r.body)
	}
	x.grant("viewer", store.TypeSchedule, []string{"run"}, "")
	x.must(202, "POST", pathSchedules+itoa(id)+"/run/", viewer, nil)
	run := x.lastRun(id, "", 20*time.Second)
	if run["status"] != "completed" || run["triggered_by"] != "viewer" {
		t.Fatalf("run: %v", run)
	}
	// The run executed as the schedule's owner, not as whoever asked for it.
	l := x.must(200, "GET", pathCommandLogs+"?schedule_id="+itoa(id), x.admin, nil)["results"].([]any)[0].(map[string]any)
	if l["username"] != "admin" {
		t.Fatalf("the run executed as %v", l["username"])
	}
}

// A run executes with its owner's permissions: a device the owner may not see is not
// run on, a command the owner may not execute is refused on every device.
func TestScheduleRunsWithItsOwnersPermissions(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	svc := x.serviceSet("nightly")
	_, other := x.device("other", "cisco_ios", x.iosPlat)
	ops := x.user("ops", false)
	x.grant("ops", store.TypeSchedule, []string{"view", "add", "change", "run"}, "")
	x.grant("ops", store.TypeCredentialSet, []string{"service"}, "")
	x.grant("ops", store.TypeDevice, []string{"view"}, fmt.Sprintf(`{"id": %d}`, x.iosID))
	x.grant("ops", store.TypeCommand, []string{"view"}, "")
	id := int64(x.must(201, "POST", pathSchedules, ops, scheduleBody("ops", cmd, svc,
		map[string]any{"devices": []int64{x.iosID, other}}))["id"].(float64))
	x.scheduler(nil, schedules.Limits{})
	x.must(202, "POST", pathSchedules+itoa(id)+"/run/", ops, nil)
	run := x.lastRun(id, "", 20*time.Second)
	rejected, _ := json.Marshal(run["rejected"])
	if run["status"] != "failed" || run["devices"].(float64) != 1 || !strings.Contains(string(rejected), "permission to execute show") {
		t.Fatalf("run without execute_show: %v", run)
	}
	x.grant("ops", store.TypeCommand, []string{"execute_show"}, "")
	x.must(202, "POST", pathSchedules+itoa(id)+"/run/", ops, nil)
	run = x.lastRun(id, run["started"].(string), 20*time.Second)
	if run["status"] != "completed" || run["devices"].(float64) != 1 || run["successful"].(float64) != 1 {
		t.Fatalf("run with execute_show: %v", run)
	}
}

// After a restart, runs missed while the server was down are handled by one rule: one
// run at start-up (inside the schedule's window), the others counted as missed, never
// run one after the other.
func TestMissedRunsRunOnceAfterARestart(t *testing.T) {
	x := newXEnv(t, 100)
	cmd := x.command("Version", "show version", "show")
	svc := x.serviceSet("nightly")
	id := int64(x.must(201, "POST", pathSchedules, x.admin, scheduleBody("hourly", cmd, svc,
		map[string]any{"cron": "0 * * * *", "devices": []int64{x.iosID}}))["id"].(float64))
	spec, err := x.db.ScheduleSpecByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	// The server stopped three and a half hours before its next run: that one and the
	// three after it are past.
	down := time.Now().Truncate(time.Hour).Add(-3 * time.Hour)
	if err := x.db.SetScheduleNext(context.Background(), id, spec.When(), down); err != nil {
		t.Fatal(err)
	}
	x.scheduler(nil, schedules.Limits{})
	run := x.lastRun(id, "", 20*time.Second)
	if run["trigger"] != "catch_up" || run["status"] != "completed" {
		t.Fatalf("run at start-up: %v", run)
	}
	m := x.must(200, "GET", pathSchedules+itoa(id)+"/", x.admin, nil)
	if m["missed_runs"].(float64) != 3 {
		t.Fatalf("missed_runs %v, want 3 (due at %s and the three hours after, one run)", m["missed_runs"], down.Format("15:04"))
	}
	if n := x.must(200, "GET", pathCommandLogs+"?schedule_id="+itoa(id), x.admin, nil)["count"].(float64); n != 1 {
		t.Fatalf("%v logs, want one run's", n)
	}
}

// The scheduler against a real CLI: a schedule every minute on a tag holding the FRR
// peer (vtysh over sshd) runs show version on it with a service credential set of the
// peer's login, by itself.
func TestScheduleRunsOnRealFRR(t *testing.T) {
	host, port, user, password := frrPeer(t)
	x := newXEnv(t, 100)
	frr := x.peerDevice("frr1", "cisco_ios", host, port)
	core := x.must(201, "POST", pathTags, x.admin, map[string]any{"name": "Core", "slug": "core"})
	x.must(200, "PATCH", pathDevices+itoa(frr)+"/", x.admin, map[string]any{"tags": []any{core["id"]}})
	cmd := x.command("Version", "show version", "show")
	set, err := x.db.CreateServiceCredentialSet(context.Background(), x.kr, 1, store.CredentialInput{Name: ptrTo("frr"),
		Username: &user, Password: &password}, store.True)
	if err != nil {
		t.Fatal(err)
	}
	id := int64(x.must(201, "POST", pathSchedules, x.admin, scheduleBody("frr health", cmd, set,
		map[string]any{"cron": "* * * * *", "tags": []any{core["id"]}}))["id"].(float64))
	real := time.Now()
	offset := real.Truncate(time.Minute).Add(time.Minute - 1500*time.Millisecond).Sub(real)
	x.scheduler(func() time.Time { return time.Now().Add(offset) }, schedules.Limits{})
	run := x.lastRun(id, "", 30*time.Second)
	if run["status"] != "completed" || run["devices"].(float64) != 1 || run["trigger"] != "schedule" {
		t.Fatalf("run: %v", run)
	}
	l := x.must(200, "GET", pathCommandLogs+"?schedule_id="+itoa(id)+"&fields=id,success,device,source", x.admin, nil)["results"].([]any)[0].(map[string]any)
	full := x.must(200, "GET", pathCommandLogs+itoa(int64(l["id"].(float64)))+"/", x.admin, nil)
	if l["success"] != true || l["source"] != "schedule" || !strings.Contains(full["output"].(string), "FRRouting") {
		t.Fatalf("the FRR peer's log: %v\n%v", l, full["output"])
	}
}
