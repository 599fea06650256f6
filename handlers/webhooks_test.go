package handlers

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/events"
	"fieldkit/exec/devsim"
	"fieldkit/schedules"
	"fieldkit/store"
)

// receiver is a webhook receiver on 127.0.0.1: it keeps every request, and checks
// X-Hook-Signature against its own HMAC-SHA512 of the body.
type receiver struct {
	t      testing.TB
	secret string
	mu     sync.Mutex
	got    []received
	srv    *http.Server
	addr   string
	status int           // answered; 200 when 0
	hold   chan struct{} // when set, each request waits for it
	// onArrive, when set, is called for each request kept (benchmarks time it).
	onArrive func()
}

type received struct {
	header http.Header
	body   []byte
	json   map[string]any
	signed bool // the signature was there and right
}

// listen starts the receiver on addr ("127.0.0.1:0" for any port).
func (rc *receiver) listen(addr string) {
	rc.t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		rc.t.Fatal(err)
	}
	rc.addr = ln.Addr().String()
	rc.srv = &http.Server{Handler: http.HandlerFunc(rc.serve)}
	go rc.srv.Serve(ln)
	rc.t.Cleanup(func() { rc.srv.Close() })
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if rc.hold != nil {
		<-rc.hold
	}
	mac := hmac.New(sha512.New, []byte(rc.secret))
	mac.Write(body)
	got := received{header: r.Header.Clone(), body: body,
		signed: hmac.Equal([]byte(r.Header.Get("X-Hook-Signature")), []byte(hex.EncodeToString(mac.Sum(nil))))}
	_ = json.Unmarshal(body, &got.json)
	rc.mu.Lock()
	rc.got = append(rc.got, got)
	status := rc.status
	rc.mu.Unlock()
	if rc.onArrive != nil {
		rc.onArrive()
	}
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	io.WriteString(w, "thanks")
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// waitFor waits until the receiver holds n requests, and then a moment more to see that
// no more come.
func (rc *receiver) waitFor(n int, within time.Duration) []received {
	rc.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) && len(rc.requests()) < n {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	got := rc.requests()
	if len(got) != n {
		rc.t.Fatalf("the receiver got %d requests, want %d", len(got), n)
	}
	return got
}

// events starts the server's event processor, with quick retries, until the test ends.
func (x *xenv) events(cfg events.Config) *events.Processor {
	x.t.Helper()
	if cfg.RetryMin == 0 {
		cfg.RetryMin, cfg.RetryMax = 50*time.Millisecond, 200*time.Millisecond
	}
	p := events.New(events.Options{DB: x.db, Keyring: x.kr, Render: x.api, Logger: x.api.Logger, Config: cfg, Version: "test"})
	x.api.Events = p
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	x.t.Cleanup(func() { cancel(); <-done })
	return p
}

// Done when: a failed execution fires one signed webhook whose HMAC the receiver
// verifies, a second and a third failure fire nothing (a state change fires once), and
// the recovery fires one more.
func TestFailedExecutionFiresOnceAndItsRecoveryOnce(t *testing.T) {
	x := newXEnv(t, 100)
	rc := &receiver{t: t, secret: "Hook-S3cret"}
	rc.listen("127.0.0.1:0")
	x.events(events.Config{})
	cmd := x.command("Version", "show version", "show")
	hook := x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "noc", "payload_url": "http://" + rc.addr + "/hook",
		"secret": rc.secret, "additional_headers": "X-Device: {{ data.device.name }}"})
	if hook["secret"] != secretMask {
		t.Fatalf("the webhook reads its secret back as %q", hook["secret"])
	}
	x.must(201, "POST", pathEventRules, x.admin, map[string]any{"name": "failures", "object_types": []string{store.TypeCommandLog},
		"event_types": []string{"object_created"}, "conditions": map[string]any{"attr": "success", "value": false},
		"action_object_id": hook["id"]})
	run := func() bool {
		return x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token})["success"].(bool)
	}
	if !run() {
		t.Fatal("the first execution failed")
	}
	x.ios.SetFault(devsim.FaultDisconnect)
	for range 3 {
		if run() {
			t.Fatal("an execution on a device that hangs up succeeded")
		}
	}
	got := rc.waitFor(1, 10*time.Second)
	first := got[0]
	data := first.json["data"].(map[string]any)
	if !first.signed || first.json["event"] != "created" || first.json["model"] != "commandlog" || first.json["state"] != "firing" ||
		data["success"] != false || data["device"].(map[string]any)["name"] != "sw1" || first.header.Get("X-Device") != "sw1" ||
		first.json["username"] != "admin" || data["site"].(map[string]any)["slug"] != "lab" || first.json["event_rule"] != "failures" {
		t.Fatalf("the failure's webhook: signed %v, headers %v, body %s", first.signed, first.header, first.body)
	}
	x.ios.SetFault(devsim.FaultNone)
	if !run() {
		t.Fatal("the execution after the fault failed")
	}
	got = rc.waitFor(2, 10*time.Second)
	if !got[1].signed || got[1].json["state"] != "resolved" || got[1].json["data"].(map[string]any)["success"] != true {
		t.Fatalf("the recovery's webhook: %s", got[1].body)
	}
	// What was sent, and how it went, is kept.
	ds := x.must(200, "GET", pathDeliveries+"?webhook="+itoa(int64(hook["id"].(float64))), x.admin, nil)
	if ds["count"].(float64) != 2 {
		t.Fatalf("deliveries: %v", ds)
	}
	x.must(200, "OPTIONS", pathDeliveries+itoa(int64(ds["results"].([]any)[0].(map[string]any)["id"].(float64)))+"/", x.admin, nil)
	for _, d := range ds["results"].([]any) {
		d := d.(map[string]any)
		if d["status"].(map[string]any)["value"] != "delivered" || d["response_status"].(float64) != 200 || d["response_body"] != "thanks" {
			t.Fatalf("delivery: %v", d)
		}
	}
	if strings.Contains(x.logs.String(), rc.secret) {
		t.Fatal("the webhook's secret reached the log")
	}
}

// Done when: a receiver down for a while gets every event afterwards, in order, even
// across a restart of the processor; and no execution waits for it meanwhile.
func TestReceiverDownGetsEveryEventAfterwards(t *testing.T) {
	x := newXEnv(t, 100)
	// A port nothing listens on: the receiver is down.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, stop := context.WithCancel(context.Background())
	first := events.New(events.Options{DB: x.db, Keyring: x.kr, Render: x.api, Logger: x.api.Logger,
		Config: events.Config{RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond}})
	x.api.Events = first
	done := make(chan struct{})
	go func() { _ = first.Run(ctx); close(done) }()

	cmd := x.command("Version", "show version", "show")
	hook := x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "siem", "payload_url": "http://" + addr + "/",
		"body_template": `{"log": {{ data.id }}, "device": {{ data.device.name | tojson }}, "ok": {{ data.success | tojson }}}`})
	x.must(201, "POST", pathEventRules, x.admin, map[string]any{"name": "every execution", "object_types": []string{store.TypeCommandLog},
		"event_types": []string{"object_created"}, "action_object_id": hook["id"], "state_changes_only": false})
	var logIDs []float64
	for range 5 {
		start := time.Now()
		m := x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token})
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("an execution took %s while the receiver was down", took)
		}
		logIDs = append(logIDs, m["command_log_id"].(float64))
	}
	// The tries fail meanwhile, and are recorded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := x.must(200, "GET", pathDeliveries+"?ordering=id&limit=1", x.admin, nil)["results"].([]any)
		if len(d) == 1 && d[0].(map[string]any)["attempts"].(float64) >= 2 {
			if e := d[0].(map[string]any)["error"].(string); !strings.Contains(e, "connect") {
				t.Fatalf("a failed try's error: %q", e)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no retried delivery: %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The server stops with the deliveries pending, and starts again.
	stop()
	<-done
	x.events(events.Config{})
	rc := &receiver{t: t}
	rc.listen(addr)
	got := rc.waitFor(5, 15*time.Second)
	for i, r := range got {
		if r.json["log"].(float64) != logIDs[i] || r.json["device"] != "sw1" || r.json["ok"] != true {
			t.Fatalf("request %d: %s, want the log %v (in order)", i, r.body, logIDs[i])
		}
	}
}

// A receiver that takes its time holds no execution: the log is written and answered
// while the request to the receiver is still waiting.
func TestWebhooksNeverBlockAnExecution(t *testing.T) {
	x := newXEnv(t, 100)
	rc := &receiver{t: t, hold: make(chan struct{})}
	rc.listen("127.0.0.1:0")
	x.events(events.Config{Timeout: 30 * time.Second})
	cmd := x.command("Version", "show version", "show")
	hook := x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "slow", "payload_url": "http://" + rc.addr + "/"})
	x.must(201, "POST", pathEventRules, x.admin, map[string]any{"name": "all", "object_types": []string{store.TypeCommandLog},
		"event_types": []string{"object_created"}, "action_object_id": hook["id"], "state_changes_only": false})
	for range 3 {
		x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token})
	}
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("%d requests answered while the receiver holds them", n)
	}
	close(rc.hold)
	rc.waitFor(3, 10*time.Second)
}

// A schedule's failed run fires job_failed once; its next good run resolves it.
func TestScheduleFailureFiresOnce(t *testing.T) {
	x := newXEnv(t, 100)
	rc := &receiver{t: t, secret: "s"}
	rc.listen("127.0.0.1:0")
	p := x.events(events.Config{})
	cmd := x.command("Version", "show version", "show")
	svc := x.serviceSet("nightly")
	id := int64(x.must(201, "POST", pathSchedules, x.admin, scheduleBody("health", cmd, svc,
		map[string]any{"devices": []int64{x.iosID}}))["id"].(float64))
	s := schedules.New(schedules.Options{DB: x.db, Planner: x.api, Logger: x.api.Logger, Events: p})
	x.api.Schedules = s
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(sctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	hook := x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "noc", "payload_url": "http://" + rc.addr + "/", "secret": "s"})
	x.must(201, "POST", pathEventRules, x.admin, map[string]any{"name": "schedule failed", "object_types": []string{store.TypeSchedule},
		"event_types": []string{"job_failed", "job_errored"}, "action_object_id": hook["id"]})
	since := ""
	runNow := func() map[string]any {
		x.must(202, "POST", pathSchedules+itoa(id)+"/run/", x.admin, nil)
		r := x.lastRun(id, since, 20*time.Second)
		since = r["started"].(string)
		return r
	}
	x.ios.SetFault(devsim.FaultDisconnect)
	for range 2 {
		if r := runNow(); r["status"] != "failed" {
			t.Fatalf("run: %v", r)
		}
	}
	got := rc.waitFor(1, 10*time.Second)
	if !got[0].signed || got[0].json["event"] != "job_failed" || got[0].json["model"] != "schedule" ||
		got[0].json["data"].(map[string]any)["last_run"].(map[string]any)["status"] != "failed" || got[0].json["username"] != "admin" {
		t.Fatalf("job_failed: %s", got[0].body)
	}
	x.ios.SetFault(devsim.FaultNone)
	if r := runNow(); r["status"] != "completed" {
		t.Fatalf("run: %v", r)
	}
	got = rc.waitFor(2, 10*time.Second)
	if got[1].json["event"] != "job_completed" || got[1].json["state"] != "resolved" {
		t.Fatalf("recovery: %s", got[1].body)
	}
}

// Webhooks and event rules refuse what could not work, and say which field.
func TestWebhookAndRuleWritesAreChecked(t *testing.T) {
	x := newXEnv(t, 100)
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		field      string
	}{
		{"not http", pathWebhooks, map[string]any{"name": "a", "payload_url": "ftp://x/"}, "payload_url"},
		{"a loop in the body", pathWebhooks, map[string]any{"name": "b", "payload_url": "http://x/", "body_template": "{% for t in data.tags %}x{% endfor %}"}, "body_template"},
		{"code in the body", pathWebhooks, map[string]any{"name": "c", "payload_url": "http://x/", "body_template": "{{ data.__class__.__mro__ | attr('x') }}"}, "body_template"},
		{"a bad header", pathWebhooks, map[string]any{"name": "d", "payload_url": "http://x/", "additional_headers": "no colon here"}, "additional_headers"},
		{"NetBox 3 triggers on nothing", pathWebhooks, map[string]any{"name": "e", "payload_url": "http://x/", "content_types": []string{store.TypeCommandLog}}, "content_types"},
		{"NetBox 3 triggers on a type without events", pathWebhooks, map[string]any{"name": "f", "payload_url": "http://x/", "content_types": []string{"dcim.site"}, "type_create": true}, "content_types"},
		{"a type without events", pathEventRules, map[string]any{"name": "g", "object_types": []string{"dcim.site"}, "event_types": []string{"object_created"}, "action_object_id": 1}, "object_types"},
		{"events its types never raise", pathEventRules, map[string]any{"name": "h", "object_types": []string{store.TypeCommandLog}, "event_types": []string{"job_failed"}, "action_object_id": 1}, "event_types"},
		{"bad conditions", pathEventRules, map[string]any{"name": "i", "object_types": []string{store.TypeCommandLog}, "event_types": []string{"object_created"}, "action_object_id": 1, "conditions": map[string]any{"attr": "success", "value": true, "op": "regex"}}, "conditions"},
		{"a bad regex", pathEventRules, map[string]any{"name": "j", "object_types": []string{store.TypeCommandLog}, "event_types": []string{"object_created"}, "action_object_id": 1, "conditions": map[string]any{"attr": "device.name", "value": "(", "op": "regex"}}, "conditions"},
		{"no webhook", pathEventRules, map[string]any{"name": "k", "object_types": []string{store.TypeCommandLog}, "event_types": []string{"object_created"}, "action_object_id": 99}, "action_object_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path == pathEventRules && tc.field != "action_object_id" {
				x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "hook " + tc.name, "payload_url": "http://x/"})
			}
			r := x.do("POST", tc.path, x.admin, tc.body)
			if r.status != 400 || r.json(t)[tc.field] == nil {
				t.Fatalf("%d %s, want a 400 naming %s", r.status, r.body, tc.field)
			}
		})
	}
	// A webhook an event rule sends cannot be deleted.
	hook := x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "used", "payload_url": "http://x/"})
	x.must(201, "POST", pathEventRules, x.admin, map[string]any{"name": "uses it", "object_types": []string{store.TypeCommandLog},
		"event_types": []string{"object_created"}, "action_object_id": hook["id"]})
	if r := x.do("DELETE", pathWebhooks+itoa(int64(hook["id"].(float64)))+"/", x.admin, nil); r.status != 409 {
		t.Fatalf("deleting a webhook a rule sends: %d %s", r.status, r.body)
	}
}

// Webhooks, event rules and deliveries are object types of their own: a user sees and
// writes them only with a permission on them.
func TestWebhookPermissions(t *testing.T) {
	x := newXEnv(t, 100)
	bob := x.user("bob", false)
	for _, p := range []string{pathWebhooks, pathEventRules, pathDeliveries} {
		if r := x.do("GET", p, bob, nil); r.status != 403 {
			t.Fatalf("GET %s without view: %d %s", p, r.status, r.body)
		}
	}
	x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "noc", "payload_url": "http://x/"})
	if r := x.do("POST", pathWebhooks, bob, map[string]any{"name": "mine", "payload_url": "http://x/"}); r.status != 403 {
		t.Fatalf("POST webhook without add: %d %s", r.status, r.body)
	}
	x.grant("bob", store.TypeWebhook, []string{"view", "add"}, "")
	x.must(201, "POST", pathWebhooks, bob, map[string]any{"name": "mine", "payload_url": "http://x/"})
	if n := x.must(200, "GET", pathWebhooks, bob, nil)["count"].(float64); n != 2 {
		t.Fatalf("bob sees %v webhooks with view", n)
	}
	if r := x.do("GET", pathEventRules, bob, nil); r.status != 403 {
		t.Fatalf("event rules with a permission on webhooks only: %d %s", r.status, r.body)
	}
}

// Each event is delivered once: a burst of executions makes as many requests, one per
// log, in the order of the logs (the sender reads a webhook's next delivery and records
// a finished one under one lock, so a delivery read before its try was recorded is
// never sent again).
func TestEachEventDeliveredOnce(t *testing.T) {
	x := newXEnv(t, 1000)
	rc := &receiver{t: t}
	rc.listen("127.0.0.1:0")
	x.events(events.Config{})
	cmd := x.command("Version", "show version", "show")
	hook := x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "all", "payload_url": "http://" + rc.addr + "/",
		"body_template": `{{ data.id }}`})
	x.must(201, "POST", pathEventRules, x.admin, map[string]any{"name": "every", "object_types": []string{store.TypeCommandLog},
		"event_types": []string{"object_created"}, "action_object_id": hook["id"], "state_changes_only": false})
	var execs []any
	for range 20 {
		execs = append(execs, map[string]any{"command_id": cmd, "device_id": x.iosID, "credential_token": x.token})
	}
	for range 3 {
		x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": execs})
	}
	got := rc.waitFor(60, 20*time.Second)
	prev := 0
	for _, r := range got {
		id, err := strconv.Atoi(string(r.body))
		if err != nil || id <= prev {
			t.Fatalf("log %q after %d: each log once, in order", r.body, prev)
		}
		prev = id
	}
}
