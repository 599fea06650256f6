package ui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"fieldkit/exec"
	"fieldkit/exec/devsim"
	"fieldkit/store"
)

// event is one server-sent event of a streamed run.
type event struct {
	name string
	data map[string]any
	at   time.Time
}

// stream is a streamed run as a browser reads it.
type stream struct {
	t      *testing.T
	status int
	body   []byte // a refusal's JSON
	events chan event
	close  func()
}

// startRun posts a run from b's session and reads its events as they come.
func (b *browser) startRun(command int64, body map[string]any, hdr ...string) *stream {
	t := b.e.t
	t.Helper()
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", fmt.Sprintf("%s/ui/api/commands/%d/run/", b.e.srv.URL, command), bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRFToken", b.csrf)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &stream{t: t, status: res.StatusCode, events: make(chan event, 1000), close: func() { res.Body.Close() }}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		s.body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		close(s.events)
		return s
	}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				var d map[string]any
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
					t.Errorf("event %s: %v", name, err)
				}
				s.events <- event{name, d, time.Now()}
			}
		}
	}()
	return s
}

// next waits for the next event.
func (s *stream) next() event {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(30 * time.Second):
		s.t.Fatal("no event for 30 s")
	}
	return event{}
}

// until reads events up to the one named, returning all of them.
func (s *stream) until(name string) []event {
	s.t.Helper()
	var evs []event
	for {
		ev := s.next()
		evs = append(evs, ev)
		if ev.name == name {
			return evs
		}
	}
}

// runEnv is an xenv with a user allowed to run show commands and a credential set.
type runEnv struct {
	*xenv
	b     *browser
	setID int64
}

func newRunEnv(t *testing.T, mod func(*devsim.Config)) *runEnv {
	return newRunEnvPool(t, mod, nil)
}

// newRunEnvPool is newRunEnv with executions going through pool, as the server runs them.
func newRunEnvPool(t *testing.T, mod func(*devsim.Config), pool *exec.Pool) *runEnv {
	x := newXEnvPool(t, mod, pool)
	uid, _ := x.user("alice", "pw", false)
	x.grant(uid, store.TypeDevice, "view")
	x.grant(uid, store.TypeCommand, "view", "execute_show")
	x.grant(uid, store.TypeCommandLog, "view")
	b := x.browser()
	b.login("alice", "pw")
	set := b.must(201, "POST", setsPath, map[string]any{"name": "lab", "username": simUser, "password": simPass, "enable_secret": simEnable})
	return &runEnv{xenv: x, b: b, setID: num(set["id"])}
}

func (r *runEnv) commandOf(name, text, typ string) int64 {
	const now = "2026-01-01T00:00:00.000000Z"
	id := r.exec(`INSERT INTO commands (name, command, command_type, created, last_updated) VALUES (?, ?, ?, ?, ?)`, name, text, typ, now, now)
	r.exec(`INSERT INTO command_platforms (command_id, platform_id) VALUES (?, ?)`, id, r.plat)
	return id
}

// A streamed run sends the output as the device prints it, then execute's own answer,
// and leaves the same log row an API execute leaves.
func TestRunStreamsTheOutput(t *testing.T) {
	r := newRunEnv(t, func(c *devsim.Config) { c.Fault = devsim.FaultSlowOutput })
	cmd := r.commandOf("Brief", "show ip interface brief", "show")
	s := r.b.startRun(cmd, map[string]any{"device_id": r.device, "credential_set_id": r.setID})
	if s.status != 200 {
		t.Fatalf("run: %d %s", s.status, s.body)
	}
	started := s.next()
	if started.name != "started" || started.data["run_id"] == "" || started.data["cancellable"] != true {
		t.Fatalf("first event %+v", started)
	}
	evs := s.until("result")
	res := evs[len(evs)-1]
	var outputs []event
	var text strings.Builder
	for _, ev := range evs {
		if ev.name == "output" {
			outputs = append(outputs, ev)
			text.WriteString(ev.data["text"].(string))
		}
	}
	if len(outputs) < 3 || res.at.Sub(outputs[0].at) < 300*time.Millisecond {
		t.Fatalf("%d output events before the result: not streamed", len(outputs))
	}
	t.Logf("%d output events; the first %v after started, the result %v after it", len(outputs),
		outputs[0].at.Sub(started.at).Round(time.Millisecond), res.at.Sub(started.at).Round(time.Millisecond))
	body := res.data
	if body["success"] != true || strings.TrimSpace(text.String()) != strings.TrimSpace(body["output"].(string)) {
		t.Fatalf("result %v\nstreamed %q", body, text.String())
	}
	logID := num(body["command_log_id"])
	l := r.b.must(200, "GET", fmt.Sprintf("/api/plugins/toolkit/command-logs/%d/", logID), nil)
	if l["username"] != "alice" || l["output"] != body["output"] || l["success"] != true {
		t.Errorf("log %v", l)
	}
	for _, k := range []string{"success", "output", "error_message", "execution_time", "command", "device", "syntax_error", "parsed_output", "command_log_id", "output_truncated", "failure"} {
		if _, ok := body[k]; !ok {
			t.Errorf("the result lacks execute's %q", k)
		}
	}
}

// A run is refused exactly where the API's execute refuses, with its status and body,
// before anything runs; an API token or a missing CSRF token never gets in.
func TestRunRefusesAsExecuteDoes(t *testing.T) {
	r := newRunEnv(t, nil)
	show := r.command
	config := r.commandOf("Describe", "interface Gi0/1\n description x", "config")
	before := r.dev.Logins()
	for _, c := range []struct {
		name    string
		command int64
		body    map[string]any
		hdr     []string
		status  int
		want    string
	}{
		{"no permission for config", config, map[string]any{"device_id": r.device, "credential_set_id": r.setID}, nil, 403, "execute config commands"},
		{"unknown command", 999, map[string]any{"device_id": r.device, "credential_set_id": r.setID}, nil, 404, "Not found"},
		{"another's set", show, map[string]any{"device_id": r.device, "credential_set_id": r.setID + 100}, nil, 400, "Credential set not found."},
		{"bad timeout", show, map[string]any{"device_id": r.device, "credential_set_id": r.setID, "timeout": 1}, nil, 400, "timeout"},
		{"API token", show, map[string]any{"device_id": r.device, "credential_set_id": r.setID}, []string{"Authorization", "Token abc"}, 403, msgWebOnly},
		{"no CSRF", show, map[string]any{"device_id": r.device, "credential_set_id": r.setID}, []string{"X-CSRFToken", ""}, 403, "CSRF"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := r.b.startRun(c.command, c.body, c.hdr...)
			if s.status != c.status || !strings.Contains(string(s.body), c.want) {
				t.Errorf("%d %s, want %d with %q", s.status, s.body, c.status, c.want)
			}
		})
	}
	if r.dev.Logins() != before {
		t.Error("a refused run reached the device")
	}
	// The rate limit counts streamed runs as it counts executes (3 per window here).
	for i := 0; i < 3; i++ {
		s := r.b.startRun(show, map[string]any{"device_id": r.device, "credential_set_id": r.setID})
		if evs := s.until("result"); evs[len(evs)-1].data["success"] != true {
			t.Fatalf("run %d: %v", i, evs[len(evs)-1].data)
		}
	}
	s := r.b.startRun(show, map[string]any{"device_id": r.device, "credential_set_id": r.setID})
	if s.status != 429 || !strings.Contains(string(s.body), "Rate limit exceeded") {
		t.Errorf("fourth run: %d %s", s.status, s.body)
	}
}

// Cancel stops a streamed show command: the session to the device closes (the pool
// that keeps sessions between runs does not keep it), the result and the log say
// "Cancelled by alice" and keep the output read so far. Nobody else may cancel it, and
// a config command is never cancelled halfway.
func TestRunCancel(t *testing.T) {
	pool := exec.NewPool(exec.PoolConfig{Idle: time.Minute, PerDevice: 2})
	t.Cleanup(pool.Close)
	r := newRunEnvPool(t, nil, pool)
	// A first run leaves its session kept open; the cancelled run goes over it.
	ver := r.commandOf("Ver", "show version", "show")
	if evs := r.b.startRun(ver, map[string]any{"device_id": r.device, "credential_set_id": r.setID}).until("result"); evs[len(evs)-1].data["success"] != true {
		t.Fatalf("first run: %v", evs[len(evs)-1].data)
	}
	if r.dev.Conns() != 1 {
		t.Fatalf("%d connections kept after a run, want 1", r.dev.Conns())
	}
	tech := r.commandOf("Tech", "show tech-support", "show")
	s := r.b.startRun(tech, map[string]any{"device_id": r.device, "credential_set_id": r.setID, "timeout": 60})
	id := s.next().data["run_id"].(string)
	s.until("output")

	r.user("bob", "pw", true)
	bob := r.browser()
	bob.login("bob", "pw")
	if res := bob.do("POST", "/ui/api/runs/"+id+"/cancel/", map[string]any{}); res.status != 404 {
		t.Errorf("another user's cancel: %d %s", res.status, res.body)
	}
	if res := r.b.do("POST", "/ui/api/runs/"+id+"/cancel/", map[string]any{}, "Authorization", "Token x"); res.status != 403 {
		t.Errorf("a cancel with a token: %d", res.status)
	}
	start := time.Now()
	r.b.must(202, "POST", "/ui/api/runs/"+id+"/cancel/", map[string]any{})
	evs := s.until("result")
	body := evs[len(evs)-1].data
	took := time.Since(start)
	t.Logf("the result came %v after the cancel", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("the cancel took %v", took)
	}
	msg, _ := body["error_message"].(string)
	if body["success"] != false || !strings.HasPrefix(msg, "Cancelled by alice") || !strings.Contains(body["output"].(string), "show version") {
		t.Fatalf("cancelled result: %q, %d bytes of output", msg, len(body["output"].(string)))
	}
	l := r.b.must(200, "GET", fmt.Sprintf("/api/plugins/toolkit/command-logs/%d/", num(body["command_log_id"])), nil)
	if l["error_message"] != msg || l["output"] != body["output"] || l["failure"].(map[string]any)["cancelled_by"] != "alice" {
		t.Errorf("log %q %v", l["error_message"], l["failure"])
	}
	deadline := time.Now().Add(3 * time.Second)
	for r.dev.Conns() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := r.dev.Conns(); n != 0 {
		t.Errorf("%d connections to the device after the cancel", n)
	}
	if res := r.b.do("POST", "/ui/api/runs/"+id+"/cancel/", map[string]any{}); res.status != 404 {
		t.Errorf("cancel after the end: %d", res.status)
	}

	// A config command: bob (a superuser) starts one on a slow device; cancel is refused.
	r.dev.SetLatency(500 * time.Millisecond)
	setB := bob.must(201, "POST", setsPath, map[string]any{"name": "lab", "username": simUser, "password": simPass, "enable_secret": simEnable})
	cfg := r.commandOf("Describe", "interface GigabitEthernet1/0/1\n description x", "config")
	cs := bob.startRun(cfg, map[string]any{"device_id": r.device, "credential_set_id": num(setB["id"])})
	started := cs.next()
	if started.data["cancellable"] != false {
		t.Errorf("a config run says it can be cancelled: %v", started.data)
	}
	res := bob.do("POST", "/ui/api/runs/"+started.data["run_id"].(string)+"/cancel/", map[string]any{})
	if res.status != 409 || !strings.Contains(string(res.body), "half-configured") {
		t.Errorf("config cancel: %d %s", res.status, res.body)
	}
	if evs := cs.until("result"); evs[len(evs)-1].data["success"] != true {
		t.Errorf("the config command did not run to its end: %v", evs[len(evs)-1].data)
	}
}

// A browser that goes away neither stops nor loses its run: it runs to its end and is
// logged.
func TestRunOutlivesTheBrowser(t *testing.T) {
	r := newRunEnv(t, func(c *devsim.Config) { c.Fault = devsim.FaultSlowOutput })
	cmd := r.commandOf("Brief", "show ip interface brief", "show")
	s := r.b.startRun(cmd, map[string]any{"device_id": r.device, "credential_set_id": r.setID})
	s.next()
	s.close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		l := r.b.must(200, "GET", fmt.Sprintf("/api/plugins/toolkit/command-logs/?command_id=%d", cmd), nil)
		if l["count"] == float64(1) {
			got := l["results"].([]any)[0].(map[string]any)
			if got["success"] != true || !strings.Contains(got["output"].(string), "Interface") {
				t.Errorf("log %v", got)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the run was not logged after its browser left")
}
