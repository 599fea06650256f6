package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/exec/ratelimit"
	"fieldkit/store"
	"fieldkit/web/webtest"
)

// cli runs one command in-process with the given environment and stdin.
// initData makes a data directory with an empty database, as a first serve leaves it.
func initData(t *testing.T, data string) string {
	t.Helper()
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return data
}

func cli(t *testing.T, envv map[string]string, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	var environ []string
	for k, v := range envv {
		environ = append(environ, k+"="+v)
	}
	getenv := func(k string) string { return envv[k] }
	err := run(context.Background(), args, getenv, environ, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fieldkit.yaml")
	os.WriteFile(file, []byte("server:\n  listen: 127.0.0.1:9000\n  time_zone: Europe/Paris\nrate_limit:\n  device_command_limit: 3\n  bypass_users: [ops, bot]\n"), 0o600)
	// The benchmarks' variables are set around a server that scripts/bench-logs.sh
	// starts: they are not settings, and not errors.
	env := map[string]string{"FIELDKIT_RATE_LIMIT_DEVICE_COMMAND_LIMIT": "7", "FIELDKIT_SERVER_LISTEN": "127.0.0.1:9001",
		"FIELDKIT_BENCH_LOGS": "5000000", "FIELDKIT_BENCH_OUTPUT": "16384"}
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	get := func(k string) string { return env[k] }
	cfg, err := loadConfig(file, get, environ, map[string]string{"server.listen": "127.0.0.1:9002"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Listen != "127.0.0.1:9002" {
		t.Errorf("flag should win: %s", cfg.Server.Listen)
	}
	if cfg.RateLimit.DeviceCommandLimit != 7 {
		t.Errorf("env should win over file: %d", cfg.RateLimit.DeviceCommandLimit)
	}
	if cfg.Server.TimeZone != "Europe/Paris" || len(cfg.RateLimit.BypassUsers) != 2 {
		t.Errorf("file should win over defaults: %+v", cfg)
	}
	if cfg.RateLimit.TimeWindowMinutes != 1 || cfg.Exec.BulkMax != 100 {
		t.Errorf("defaults: %+v", cfg)
	}
}

// TestDefaultRateLimitSparesAPerson: the default limit never stops a person at a
// console (with the old 10 in 5 minutes, one engineer on one switch was locked out
// for about 4 minutes), yet stops a script's flood within seconds, and a refusal
// lasts under a minute.
func TestDefaultRateLimitSparesAPerson(t *testing.T) {
	cfg := defaults()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	fresh := func() *ratelimit.Limiter {
		l := ratelimit.New(1, time.Minute)
		l.Configure(limitPolicy(cfg))
		l.SetClock(func() time.Time { return now })
		return l
	}
	// A person troubleshooting fast: a command every 2 s (read, think, run again) for
	// 20 minutes, every one successful.
	l := fresh()
	for i := range 600 {
		slot, st, ok := l.Acquire(1)
		if !ok {
			t.Fatalf("a person's run %d at %v was refused: %+v", i+1, now.Format("15:04:05"), st)
		}
		slot.Release(true)
		now = now.Add(2 * time.Second)
	}
	// A script's loop: ten a second. It is stopped within ten seconds, and the device
	// takes commands again within a minute.
	l = fresh()
	var refused time.Duration
	for i := range 100 {
		slot, st, ok := l.Acquire(2)
		if !ok {
			refused = time.Duration(i) * 100 * time.Millisecond
			if st.RetryAfter <= 0 || st.RetryAfter > time.Minute {
				t.Errorf("refused for %v", st.RetryAfter)
			}
			break
		}
		slot.Release(true)
		now = now.Add(100 * time.Millisecond)
	}
	if refused == 0 || refused > 10*time.Second {
		t.Errorf("a flood of ten a second was stopped after %v", refused)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, yaml, env, want string }{
		{"unknown key", "server:\n  listn: x\n", "", "server.listn"},
		{"unknown section", "servr:\n  listen: x\n", "", "servr.listen"},
		{"bad int", "exec:\n  bulk_max: lots\n", "", "exec.bulk_max"},
		{"bad value", "ssh:\n  host_key_policy: trusting\n", "", "ssh.host_key_policy"},
		{"bad schedule", "export:\n  schedule: weekly\n", "", "export.schedule"},
		{"bad zone", "server:\n  time_zone: Mars/Olympus\n", "", "server.time_zone"},
		{"unknown env", "", "FIELDKIT_SERVER_LISTN=x", "FIELDKIT_SERVER_LISTN"},
		{"bad env", "", "FIELDKIT_RATE_LIMIT_ENABLED=perhaps", "FIELDKIT_RATE_LIMIT_ENABLED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := ""
			if c.yaml != "" {
				file = filepath.Join(dir, c.name+".yaml")
				os.WriteFile(file, []byte(c.yaml), 0o600)
			}
			var environ []string
			if c.env != "" {
				environ = []string{c.env}
			}
			_, err := loadConfig(file, func(string) string { return "" }, environ, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v does not name %s", err, c.want)
			}
		})
	}
}

func TestUserAndTokenCreate(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"FIELDKIT_DATA": data}
	if _, _, err := cli(t, env, "s3cret-pass\n", "user", "create", "alice", "--superuser", "--password-stdin", "--group", "ops", "--init"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cli(t, env, "", "user", "create", "alice"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate user: %v", err)
	}
	out, _, err := cli(t, env, "", "token", "create", "alice", "--read-only", "--expires", "24h", "--description", "ci")
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(out)
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(key) || strings.Count(out, "\n") != 1 {
		t.Fatalf("stdout must be the key alone: %q", out)
	}
	db, err := store.Open(context.Background(), filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := db.Authenticate(context.Background(), key)
	if err != nil || p.Username != "alice" || p.WriteEnabled || !p.IsSuperuser || len(p.GroupIDs) != 1 {
		t.Fatalf("token does not authenticate as a read-only alice in ops: %+v %v", p, err)
	}
	var hash string
	db.Reader().QueryRow(`SELECT password_hash FROM users WHERE username = 'alice'`).Scan(&hash)
	if hash == "" || strings.Contains(hash, "s3cret") {
		t.Fatalf("password not hashed: %q", hash)
	}
	if _, _, err := cli(t, env, "", "token", "create", "nobody"); err == nil {
		t.Fatal("token for an unknown user")
	}
	// A lifetime in days, weeks or a mix, as people count a token's life.
	for arg, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "1d12h": 36 * time.Hour} {
		out, _, err := cli(t, env, "", "token", "create", "alice", "--expires", arg, "--description", arg)
		if err != nil {
			t.Fatalf("--expires %s: %v", arg, err)
		}
		var stamp string
		if err := db.Reader().QueryRow(`SELECT expires FROM tokens WHERE description = ?`, arg).Scan(&stamp); err != nil {
			t.Fatal(err)
		}
		expires, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			t.Fatalf("expires %q: %v", stamp, err)
		}
		if d := time.Until(expires); d < want-time.Minute || d > want {
			t.Errorf("--expires %s: the token expires in %v, want %v (%s)", arg, d, want, out)
		}
	}
}

func TestServeShutsDownGracefully(t *testing.T) {
	data := t.TempDir()
	cfg, err := loadConfig("", func(string) string { return "" }, nil, map[string]string{"server.data": data, "server.listen": "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var logs bytes.Buffer
	go func() {
		done <- serve(ctx, env{getenv: func(string) string { return "" }, stdout: &logs, stderr: &logs}, cfg, serveOptions{ready: ready})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "stopped") {
		t.Fatalf("logs: %s", logs.String())
	}
}

func TestMasterKey(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e := env{getenv: func(string) string { return "" }}
	kr, err := loadKeyring(ctx, e, db, data, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(data, "secret.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret.key must be created 0600: %v %v", st, err)
	}
	uid, _ := db.CreateUser(ctx, store.UserInput{Username: ptr("a")}, store.All)
	if _, _, err := db.CreateCredentialSet(ctx, kr, uid, store.CredentialInput{Name: ptr("s"), Username: ptr("u"), Password: ptr("p")}); err != nil {
		t.Fatal(err)
	}
	if _, err := loadKeyring(ctx, e, db, data, slog.Default()); err != nil {
		t.Fatalf("same key must load: %v", err)
	}
	wrong := env{getenv: func(k string) string {
		if k == "FIELDKIT_SECRET_KEY" {
			return strings.Repeat("ab", 32)
		}
		return ""
	}}
	if _, err := loadKeyring(ctx, wrong, db, data, slog.Default()); err == nil || !strings.Contains(err.Error(), "does not decrypt") {
		t.Fatalf("wrong key must fail loudly: %v", err)
	}
	os.Remove(filepath.Join(data, "secret.key"))
	if _, err := loadKeyring(ctx, e, db, data, slog.Default()); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing key with sets must fail: %v", err)
	}
}

func TestExportLogsCommand(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	var logs []store.Values
	for i, at := range []time.Time{day(1, 23), day(2, 0), day(2, 12), day(3, 23), day(4, 0)} {
		logs = append(logs, store.Values{"command_name": "show version", "command_type": "show", "device_name": "sw1",
			"username": "alice", "success": i != 2, "error_message": map[bool]string{true: "=cmd|' /C calc'!A0"}[i == 2],
			"execution_time": at, "created": at})
	}
	if err := db.InsertLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out := filepath.Join(t.TempDir(), "logs.csv")
	env := map[string]string{"FIELDKIT_DATA": data}
	if _, _, err := cli(t, env, "", "export", "logs", "--start-date", "2026-03-02", "--end-date", "2026-03-03", "--output", out); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "id,created,username,device_id,device,command_id,command,command_type,success,execution_duration,error_message,"+
		"sent_command,variables,credential_set_id,credential_set,source,client_address,notes,site_id,site" {
		t.Fatalf("header: %v", rows[0])
	}
	if len(rows) != 4 { // days 2 and 3 inclusive: three logs
		t.Fatalf("want 3 rows for 2026-03-02..03, got %d: %v", len(rows)-1, rows)
	}
	if cell := rows[2][10]; cell != "'=cmd|' /C calc'!A0" {
		t.Fatalf("formula not neutralised: %q", cell)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Fatalf("temporary files left beside the export: %v", entries)
	}
	if _, _, err := cli(t, env, "", "export", "logs", "--start-date", "2026-02-30"); err == nil || !strings.Contains(err.Error(), "--start-date") {
		t.Fatalf("bad date must name the flag: %v", err)
	}
}

// TestReloadWhileServing reloads an in-process server several times while clients read
// /api/status/ (the scheduler's health) and execute nothing: under -race this checks
// that a reload and the requests share nothing unguarded, and that the new schedule
// shows.
func TestReloadWhileServing(t *testing.T) {
	data := t.TempDir()
	flags := map[string]string{"server.data": data, "server.listen": "127.0.0.1:0"}
	schedule := "hourly"
	var mu sync.Mutex
	load := func() (Config, error) {
		mu.Lock()
		defer mu.Unlock()
		return loadConfig("", func(string) string { return "" }, []string{"FIELDKIT_EXPORT_SCHEDULE=" + schedule}, flags)
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	reload := make(chan struct{})
	done := make(chan error, 1)
	var logs webtest.Buffer
	go func() {
		done <- serve(ctx, env{getenv: func(string) string { return "" }, stdout: &logs, stderr: &logs}, cfg,
			serveOptions{ready: ready, reload: reload, load: load})
	}()
	base := <-ready
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if res, err := http.Get(base + "/api/status/"); err == nil {
					res.Body.Close()
				}
			}
		}()
	}
	for i, s := range []string{"daily 02:00", "", "hourly", "daily 03:30"} {
		mu.Lock()
		schedule = s
		mu.Unlock()
		reload <- struct{}{}
		for !strings.Contains(logs.String(), fmt.Sprintf("export_schedule=%q", s)) && strings.Count(logs.String(), "configuration reloaded") <= i {
			time.Sleep(5 * time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	res, err := http.Get(base + "/api/status/")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Scheduler struct {
			Jobs []struct{ Name, Schedule string }
		}
	}
	json.NewDecoder(res.Body).Decode(&st)
	res.Body.Close()
	found := false
	for _, j := range st.Scheduler.Jobs {
		found = found || (j.Name == "log_export" && j.Schedule == "daily 03:30")
	}
	if !found {
		t.Fatalf("the last reload's schedule is not in use: %+v", st.Scheduler.Jobs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
