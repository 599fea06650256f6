//go:build !windows

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"fieldkit/exec/devsim"
	"fieldkit/store"
	"fieldkit/web/webtest"
)

// lab is a data directory seeded for executions against one simulated device that
// answers slowly: an admin with an API token, the device, "show version" and a
// credential set whose secrets are encrypted under key.
type lab struct {
	data, key        string
	token, credToken string
	deviceID, cmdID  int64
	dev              *devsim.Device
}

const labKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func newLab(t *testing.T, latency time.Duration) *lab {
	t.Helper()
	l := &lab{data: t.TempDir(), key: labKey}
	dev, err := devsim.Start(devsim.Config{Vendor: "cisco_ios", Hostname: "slow-1", Username: demoDeviceUser,
		Password: demoDevicePass, EnableSecret: demoEnable, Latency: latency})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	l.dev = dev
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(l.data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kr, err := loadKeyring(ctx, env{getenv: func(k string) string {
		if k == "FIELDKIT_SECRET_KEY" {
			return labKey
		}
		return ""
	}}, db, l.data, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	s := &seeder{ctx: ctx, db: db}
	admin := s.user("admin", "admin-Pa55word")
	site := s.ref(store.TypeSite, map[string]any{"slug": "lab"}, func() (int64, error) {
		return db.Create(ctx, store.Sites, store.Values{"name": "Lab", "slug": "lab"}, store.All)
	})
	platform := s.platform("Cisco IOS", "cisco_ios")
	vlans := []int64{s.vlan(site, 10, "USERS"), s.vlan(site, 20, "VOICE")}
	l.deviceID = s.device(demoDevice{name: "slow-1", vendor: "cisco_ios", ifaces: []string{"GigabitEthernet1/0/1"}},
		site, platform, dev.Port(), vlans)
	if s.err != nil {
		t.Fatal(s.err)
	}
	l.cmdID, err = db.Create(ctx, store.Commands, store.Values{"name": "Show version", "command": "show version",
		"command_type": "show", "platforms": []int64{platform}}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	if _, l.credToken, err = db.CreateCredentialSet(ctx, kr, admin, store.CredentialInput{Name: ptr("lab"),
		Username: ptr(demoDeviceUser), Password: ptr(demoDevicePass), EnableSecret: ptr(demoEnable)}); err != nil {
		t.Fatal(err)
	}
	if _, l.token, err = db.CreateToken(ctx, store.TokenInput{UserID: admin, WriteEnabled: true}, store.All); err != nil {
		t.Fatal(err)
	}
	return l
}

// server is a running `fieldkit serve` process.
type server struct {
	cmd  *exec.Cmd
	base string
	logs *webtest.Buffer
	done chan error
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer runs the built binary's serve with a JSON log on stderr and waits until
// the API answers.
func startServer(t *testing.T, l *lab, extraEnv []string, args ...string) *server {
	t.Helper()
	return startServerAt(t, l, freeAddr(t), extraEnv, args...)
}

// startServerAt is startServer listening on addr.
func startServerAt(t *testing.T, l *lab, addr string, extraEnv []string, args ...string) *server {
	t.Helper()
	s, err := launchServer(t, l, addr, extraEnv, args...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// launchServer is startServerAt answering an error, with the server's log, when serve
// exits or is not ready within 20 s.
func launchServer(t *testing.T, l *lab, addr string, extraEnv []string, args ...string) (*server, error) {
	t.Helper()
	s := &server{base: "http://" + addr, logs: &webtest.Buffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(testBinary(t), append([]string{"serve", "--data", l.data, "--listen", addr}, args...)...)
	s.cmd.Env = append(append(serverEnv(), "FIELDKIT_SECRET_KEY="+l.key, "FIELDKIT_LOG_FORMAT=json"), extraEnv...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("serve log:\n%s", s.logs.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(s.base + "/api/status/"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s, nil
			}
		}
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("serve exited: %v\n%s", err, s.logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("serve not ready:\n%s", s.logs.String())
}

// execute runs show version on the lab device through the API.
func (s *server) execute(l *lab) (int, map[string]any, error) {
	body := fmt.Sprintf(`{"device_id": %d, "credential_token": %q, "timeout": 120}`, l.deviceID, l.credToken)
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/plugins/toolkit/commands/%d/execute/", s.base, l.cmdID), strings.NewReader(body))
	req.Header.Set("Authorization", "Token "+l.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		return res.StatusCode, nil, fmt.Errorf("%w: %s", err, raw)
	}
	return res.StatusCode, out, nil
}

// waitLogin waits until the simulated device has seen a login: an execution is under way.
func waitLogin(t *testing.T, dev *devsim.Device, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for dev.Logins() < n {
		if time.Now().After(deadline) {
			t.Fatal("the execution never reached the device")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type result struct {
	status int
	body   map[string]any
	err    error
}

func (s *server) executeAsync(l *lab) <-chan result {
	ch := make(chan result, 1)
	go func() {
		st, b, err := s.execute(l)
		ch <- result{st, b, err}
	}()
	return ch
}

func logRows(t *testing.T, data string) (n, ok int) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Reader().QueryRow(`SELECT count(*), coalesce(sum(success), 0) FROM command_logs`).Scan(&n, &ok); err != nil {
		t.Fatal(err)
	}
	return n, ok
}

// TestStopDuringExecution: SIGTERM while an execution runs on a slow device. The
// server stops taking requests, the execution finishes and answers, its log row is
// written, and the process exits 0.
func TestStopDuringExecution(t *testing.T) {
	if testing.Short() {
		t.Skip("real process and a slow device: not in -short")
	}
	l := newLab(t, 400*time.Millisecond)
	s := startServer(t, l, nil)
	res := s.executeAsync(l)
	waitLogin(t, l.dev, 1)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil || r.status != 200 || r.body["success"] != true {
		t.Fatalf("the running execution was dropped: %d %v %v", r.status, r.body, r.err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit after the execution finished")
	}
	if n, ok := logRows(t, l.data); n != 1 || ok != 1 {
		t.Fatalf("want the execution's log row: %d rows, %d successful", n, ok)
	}
	out := s.logs.String()
	if !strings.Contains(out, "shutting down") || !strings.Contains(out, `"msg":"stopped"`) {
		t.Fatalf("log lacks the shutdown:\n%s", out)
	}
	if _, err := os.Stat(pidFile(l.data)); !os.IsNotExist(err) {
		t.Fatalf("pid file left behind: %v", err)
	}
}

// TestReloadDuringExecution: SIGHUP while an execution runs. The execution is not
// dropped, the process keeps running, and the new log level and rate limit apply:
// debug lines appear and the device's second execution is refused (limit 1). A broken
// configuration on the next reload is refused and the server keeps serving.
func TestReloadDuringExecution(t *testing.T) {
	if testing.Short() {
		t.Skip("real process and a slow device: not in -short")
	}
	l := newLab(t, 300*time.Millisecond)
	conf := filepath.Join(t.TempDir(), "fieldkit.yaml")
	write := func(s string) {
		if err := os.WriteFile(conf, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("log:\n  level: info\nrate_limit:\n  device_command_limit: 5\n")
	s := startServer(t, l, nil, "--config", conf)
	res := s.executeAsync(l)
	waitLogin(t, l.dev, 1)
	write("log:\n  level: debug\nrate_limit:\n  device_command_limit: 1\nexport:\n  schedule: hourly\n")
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil || r.status != 200 || r.body["success"] != true {
		t.Fatalf("the running execution was dropped by the reload: %d %v %v", r.status, r.body, r.err)
	}
	waitFor(t, s, `"msg":"configuration reloaded"`)
	st, body, err := s.execute(l)
	if err != nil || st != 429 {
		t.Fatalf("after the reload the limit is 1: want 429, got %d %v %v", st, body, err)
	}
	if !strings.Contains(s.logs.String(), `"level":"DEBUG"`) {
		t.Fatal("no debug line after the reload to log.level debug")
	}
	status := getJSON(t, s.base+"/api/status/", "")
	if !strings.Contains(fmt.Sprint(status["scheduler"]), "log_export") || !strings.Contains(fmt.Sprint(status["scheduler"]), "hourly") {
		t.Fatalf("the export schedule was not reloaded: %v", status["scheduler"])
	}
	write("log:\n  level: loud\n")
	s.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, s, "reload refused")
	if _, err := http.Get(s.base + "/api/status/"); err != nil {
		t.Fatalf("a refused reload stopped the server: %v", err)
	}
	select {
	case err := <-s.done:
		t.Fatalf("serve exited on SIGHUP: %v", err)
	default:
	}
	metrics := getText(t, s.base+"/metrics")
	for _, want := range []string{
		`fieldkit_executions_total{driver="cisco_ios",outcome="success"} 1`,
		`fieldkit_rate_limit_rejections_total 1`,
		`fieldkit_security_events_total{kind="rate_limited"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if n, ok := logRows(t, l.data); n != 1 || ok != 1 {
		t.Fatalf("log rows: %d, %d successful", n, ok)
	}
}

func waitFor(t *testing.T, s *server, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.logs.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("log never said %q", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func getJSON(t *testing.T, url, token string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func getText(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// logLines parses a JSON log.
func logLines(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestNotifySocket plays systemd for a Type=notify unit: the server says READY=1 once
// the API answers, RELOADING=1 then READY=1 around a SIGHUP, STOPPING=1 on SIGTERM.
func TestNotifySocket(t *testing.T) {
	if testing.Short() {
		t.Skip("real process: not in -short")
	}
	l := newLab(t, 0)
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msgs := make(chan string, 16)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(msgs)
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	next := func(want string) {
		t.Helper()
		select {
		case m := <-msgs:
			if !strings.HasPrefix(m, want) {
				t.Fatalf("notify: got %q, want %s", m, want)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("notify: no %s", want)
		}
	}
	s := startServer(t, l, []string{"NOTIFY_SOCKET=" + sock})
	next("READY=1")
	s.cmd.Process.Signal(syscall.SIGHUP)
	next("RELOADING=1")
	next("READY=1")
	s.cmd.Process.Signal(syscall.SIGTERM)
	next("STOPPING=1")
	if err := <-s.done; err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// TestExecutionMetrics: a bulk request's executions are pending in /metrics while it
// runs and none are after; a device that refuses the login and one that is gone count
// as SSH failures by stage.
func TestExecutionMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("real process and a slow device: not in -short")
	}
	l := newLab(t, 250*time.Millisecond)
	s := startServer(t, l, []string{"FIELDKIT_RATE_LIMIT_ENABLED=false"})
	item := fmt.Sprintf(`{"command_id": %d, "device_id": %d, "credential_token": %q, "timeout": 60}`, l.cmdID, l.deviceID, l.credToken)
	body := `{"executions": [` + item + "," + item + "," + item + `]}`
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", s.base+"/api/plugins/toolkit/commands/bulk-execute/", strings.NewReader(body))
		req.Header.Set("Authorization", "Token "+l.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		done <- res.StatusCode
	}()
	waitLogin(t, l.dev, 1)
	pending := regexp.MustCompile(`(?m)^fieldkit_bulk_pending_executions (\d+)$`)
	if m := pending.FindStringSubmatch(getText(t, s.base+"/metrics")); m == nil || m[1] == "0" {
		t.Fatalf("no pending bulk executions while the bulk runs: %v", m)
	}
	if st := <-done; st != 200 {
		t.Fatalf("bulk-execute: %d", st)
	}
	text := getText(t, s.base+"/metrics")
	if m := pending.FindStringSubmatch(text); m == nil || m[1] != "0" {
		t.Fatalf("pending after the bulk: %v", m)
	}
	if !strings.Contains(text, `fieldkit_executions_total{driver="cisco_ios",outcome="success"} 3`) ||
		!strings.Contains(text, `fieldkit_execution_duration_seconds_count{driver="cisco_ios",outcome="success"} 3`) {
		t.Fatalf("executions not counted:\n%s", grepLines(text, "fieldkit_execution"))
	}
	l.dev.Close() // the device is gone: connect fails
	if st, b, err := s.execute(l); err != nil || st != 200 || b["success"] != false {
		t.Fatalf("execute on a gone device: %d %v %v", st, b, err)
	}
	text = getText(t, s.base+"/metrics")
	for _, want := range []string{`fieldkit_ssh_failures_total{stage="connect"} 1`,
		`fieldkit_executions_total{driver="cisco_ios",outcome="connect_error"} 1`} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(text, "fieldkit_"))
		}
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for _, ln := range strings.Split(text, "\n") {
		if strings.HasPrefix(ln, prefix) {
			out = append(out, ln)
		}
	}
	return strings.Join(out, "\n")
}

// TestJournalPriorities runs the server as systemd would with StandardError=journal:
// stderr is the stream named by JOURNAL_STREAM (here a file standing in for the
// journal's socket). Each line then carries its syslog priority for journald, "<6>"
// for info and "<4>" for a security event, and no timestamp of its own.
func TestJournalPriorities(t *testing.T) {
	if testing.Short() {
		t.Skip("real process: not in -short")
	}
	l := newLab(t, 0)
	journal, err := os.Create(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer journal.Close()
	st, _ := journal.Stat()
	sys := st.Sys().(*syscall.Stat_t)
	stream := fmt.Sprintf("%d:%d", sys.Dev, sys.Ino)
	addr := freeAddr(t)
	cmd := exec.Command(testBinary(t), "serve", "--data", l.data, "--listen", addr)
	cmd.Env = append(serverEnv(), "FIELDKIT_SECRET_KEY="+l.key, "JOURNAL_STREAM="+stream)
	cmd.Stderr = journal
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		// A wrong token: a 401 that is a security event (one without a token is not).
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/dcim/sites/", nil)
		req.Header.Set("Authorization", "Token "+strings.Repeat("0", 40))
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no answer")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	raw, _ := os.ReadFile(journal.Name())
	text := string(raw)
	for _, want := range []string{"<6>level=INFO msg=\"fieldkit listening\"", "<6>level=INFO msg=\"http request\"", "<4>level=WARN msg=\"security event\""} {
		if !strings.Contains(text, want) {
			t.Errorf("journal lacks %q:\n%s", want, text)
		}
	}
	for _, ln := range strings.Split(strings.TrimSpace(text), "\n") {
		if !regexp.MustCompile(`^<[0-7]>`).MatchString(ln) || strings.Contains(ln, "time=") {
			t.Errorf("journal line without a priority or with a timestamp: %q", ln)
		}
	}
}
