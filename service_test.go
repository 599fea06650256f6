//go:build !windows

package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kardianos/service"
)

// awkwardInstall has paths with spaces and the characters systemd and sh treat
// specially.
func awkwardInstall(t *testing.T) install {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Field Kit 100%")
	in, err := newInstall(filepath.Join(dir, "conf $HOME", "fieldkit.yaml"), filepath.Join(dir, "data dir"), "fieldkit", 330*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestSystemdUnit has kardianos/service install the unit as a user service under a
// temporary HOME (nothing on the machine changes; systemctl then fails, which is not
// what is tested) and checks the file it wrote: the unit rendered here, with
// readiness, reload, restart on failure, the account, and a stop timeout beyond the
// longest execution. ExecStart is read back with systemd's quoting rules.
func TestSystemdUnit(t *testing.T) {
	var systemd service.System
	for _, s := range service.AvailableSystems() {
		if s.String() == "linux-systemd" {
			systemd = s
		}
	}
	if systemd == nil {
		t.Skip("no systemd flavour of kardianos/service on this platform")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	in := awkwardInstall(t)
	sc, err := serviceConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	sc.Option["UserService"] = true
	s, err := systemd.New(&program{}, sc)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Install()
	raw, err := os.ReadFile(filepath.Join(home, ".config/systemd/user/fieldkit.service"))
	if err != nil {
		t.Fatal(err)
	}
	unit := string(raw)
	want, _ := systemdUnit(in)
	if unit != want {
		t.Fatalf("the library changed the unit:\n%s\nwant:\n%s", unit, want)
	}
	for _, line := range []string{"Type=notify", "NotifyAccess=main", "ExecReload=/bin/kill -HUP $MAINPID",
		"Restart=on-failure", "User=fieldkit", "Group=fieldkit", "TimeoutStopSec=360s", "KillMode=mixed",
		"StandardError=journal", "WantedBy=multi-user.target", "WorkingDirectory=" + strings.ReplaceAll(in.data, "%", "%%")} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `$`).MatchString(unit) {
			t.Errorf("unit lacks %q", line)
		}
	}
	if stop := 360 * time.Second; stop <= maxExecution+stopMargin/2 {
		t.Errorf("stop timeout %v does not exceed the longest execution %v", stop, maxExecution)
	}
	exec := regexp.MustCompile(`(?m)^ExecStart=(.*)$`).FindStringSubmatch(unit)
	got := systemdWords(t, exec[1])
	wantWords := append([]string{in.exe}, in.args()...)
	if strings.Join(got, "\x00") != strings.Join(wantWords, "\x00") {
		t.Fatalf("ExecStart reads back as %q, want %q", got, wantWords)
	}
	verifyUnit(t, unit, in)
}

// systemdWords splits an ExecStart value as systemd does: double-quoted words with
// backslash escapes, "%%" for "%" and "$$" for "$".
func systemdWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	for _, m := range regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(s, -1) {
		w := regexp.MustCompile(`\\(.)`).ReplaceAllString(m[1], "$1")
		words = append(words, strings.NewReplacer("%%", "%", "$$", "$").Replace(w))
	}
	return words
}

// verifyUnit runs systemd-analyze verify on the unit when the tool is here.
func verifyUnit(t *testing.T, unit string, in install) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: the unit's syntax is not verified")
		return
	}
	dir := t.TempDir()
	os.MkdirAll(in.data, 0o700)
	// verify resolves User= against this machine: use an account that exists here.
	unit = strings.NewReplacer("User=fieldkit", "User=root", "Group=fieldkit", "Group=root").Replace(unit)
	file := filepath.Join(dir, "fieldkit.service")
	os.WriteFile(file, []byte(unit), 0o644)
	out, err := exec.Command(analyze, "verify", file).CombinedOutput()
	text := string(out)
	// Without systemd as PID 1 verify still parses the unit; its complaints about a
	// line of this file ("fieldkit.service:4: Failed to parse …") are what count.
	for _, ln := range strings.Split(text, "\n") {
		if regexp.MustCompile(`fieldkit\.service:\d+:`).MatchString(ln) {
			t.Errorf("systemd-analyze verify: %s", ln)
		}
	}
	t.Logf("systemd-analyze verify: %v\n%s", err, text)
}

// TestSysVScript runs the rendered init script for real (from a temporary path, on a
// data directory whose path has spaces): start returns once the API answers, a stop
// during a slow execution waits for it to finish, status says running then stopped,
// and the log went to the rotated <data>/fieldkit.log.
func TestSysVScript(t *testing.T) {
	if testing.Short() {
		t.Skip("real process and a slow device: not in -short")
	}
	l := newLab(t, 300*time.Millisecond)
	spaced := filepath.Join(t.TempDir(), "field kit", "data")
	os.MkdirAll(filepath.Dir(spaced), 0o700)
	if err := os.Rename(l.data, spaced); err != nil {
		t.Fatal(err)
	}
	l.data = spaced
	in, err := newInstall("", l.data, "root", 330*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	in.exe = testBinary(t)
	script, err := sysvScript(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(script, "{{") || !strings.Contains(script, "STOP_WAIT=360") {
		t.Fatalf("script:\n%s", script)
	}
	file := filepath.Join(t.TempDir(), "fieldkit")
	os.WriteFile(file, []byte(script), 0o755)
	if out, err := exec.Command("sh", "-n", file).CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	initd := func(action string) (string, int) {
		cmd := exec.Command(file, action)
		cmd.Env = append(serverEnv(), "FIELDKIT_SECRET_KEY="+l.key, "FIELDKIT_SERVER_LISTEN="+addr, "FIELDKIT_LOG_FORMAT=json")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile(l.data)); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
		}
	})
	if out, code := initd("status"); code != 3 || !strings.Contains(out, "stopped") {
		t.Fatalf("status before start: %d %q", code, out)
	}
	if out, code := initd("start"); code != 0 || !strings.Contains(out, "started") {
		t.Fatalf("start: %d %q", code, out)
	}
	// start returned: the API answers at once, without waiting
	res, err := http.Get("http://" + addr + "/api/status/")
	if err != nil {
		t.Fatalf("start returned before the API answered: %v", err)
	}
	res.Body.Close()
	if out, code := initd("status"); code != 0 || !strings.Contains(out, "running") {
		t.Fatalf("status: %d %q", code, out)
	}
	if st := sysvStatus(file); st != (serviceState{"running", 0}) {
		t.Fatalf("fieldkit service status (running): %v", st)
	}
	s := &server{base: "http://" + addr}
	pending := s.executeAsync(l)
	waitLogin(t, l.dev, 1)
	out, code := initd("stop")
	if code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("stop: %d %q", code, out)
	}
	r := <-pending
	if r.err != nil || r.status != 200 || r.body["success"] != true {
		t.Fatalf("the stop dropped the execution: %d %v %v", r.status, r.body, r.err)
	}
	if n, ok := logRows(t, l.data); n != 1 || ok != 1 {
		t.Fatalf("log rows: %d, %d successful", n, ok)
	}
	if out, code := initd("status"); code != 3 || !strings.Contains(out, "stopped") {
		t.Fatalf("status after stop: %d %q", code, out)
	}
	if st := sysvStatus(file); st != (serviceState{"stopped", 3}) {
		t.Fatalf("fieldkit service status (stopped): %v", st)
	}
	if st := sysvStatus(file + "-missing"); st != (serviceState{"not installed", 4}) {
		t.Fatalf("fieldkit service status (no script): %v", st)
	}
	logText, err := os.ReadFile(filepath.Join(l.data, "fieldkit.log"))
	if err != nil || !strings.Contains(string(logText), `"msg":"http request"`) || !strings.Contains(string(logText), `"msg":"stopped"`) {
		t.Fatalf("the SysV service's log is <data>/fieldkit.log: %v\n%s", err, logText)
	}
}

// TestRemoveRunlevelLinks: uninstall removes every rc?.d link to the script and
// nothing else.
func TestRemoveRunlevelLinks(t *testing.T) {
	root := t.TempDir()
	script := filepath.Join(root, "init.d", "fieldkit")
	other := filepath.Join(root, "init.d", "ssh")
	os.MkdirAll(filepath.Dir(script), 0o755)
	os.WriteFile(script, nil, 0o755)
	os.WriteFile(other, nil, 0o755)
	var ours []string
	for _, rl := range []string{"0", "1", "2", "3", "4", "5", "6", "S"} {
		dir := filepath.Join(root, "rc"+rl+".d")
		os.MkdirAll(dir, 0o755)
		os.Symlink(script, filepath.Join(dir, "S50fieldkit"))
		os.Symlink("../init.d/fieldkit", filepath.Join(dir, "K01fieldkit")) // update-rc.d writes relative links
		os.Symlink(other, filepath.Join(dir, "S02ssh"))
		ours = append(ours, filepath.Join(dir, "S50fieldkit"), filepath.Join(dir, "K01fieldkit"))
	}
	removed, err := removeRunlevelLinks(root, script)
	if err != nil || len(removed) != len(ours) {
		t.Fatalf("removed %d links (%v), want %d", len(removed), err, len(ours))
	}
	for _, l := range ours {
		if _, err := os.Lstat(l); !os.IsNotExist(err) {
			t.Errorf("%s is left", l)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(root, "rc?.d", "S02ssh")); len(left) != 8 {
		t.Errorf("other services' links were touched: %d left", len(left))
	}
}

// TestWindowsServiceOptions: the Windows service restarts after a crash (recovery
// actions), starts delayed after boot, and gets absolute paths.
func TestWindowsServiceOptions(t *testing.T) {
	in := awkwardInstall(t)
	sc, err := serviceConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"OnFailure": "restart", "OnFailureDelayDuration": "10s", "OnFailureResetPeriod": 86400,
		"DelayedAutoStart": true, "StartType": "automatic"}
	for k, v := range want {
		if sc.Option[k] != v {
			t.Errorf("option %s = %v, want %v", k, sc.Option[k], v)
		}
	}
	if d, err := time.ParseDuration(sc.Option["OnFailureDelayDuration"].(string)); err != nil || d <= 0 {
		t.Errorf("restart delay %v: %v", d, err)
	}
	args := sc.Arguments
	if len(args) != 5 || args[0] != "serve" || args[1] != "--config" || !filepath.IsAbs(args[2]) || args[3] != "--data" || args[4] != in.data {
		t.Fatalf("arguments: %q", args)
	}
}

// TestServiceAccount: without an account only the data directory is made (0700); a
// missing account is created as a system account with no login whose home is the
// data directory; an existing one gets the data directory.
func TestServiceAccount(t *testing.T) {
	ctx := context.Background()
	var ran [][]string
	fake := func(_ context.Context, name string, args ...string) error {
		ran = append(ran, append([]string{name}, args...))
		return errors.New("not on this machine")
	}
	e := env{getenv: func(string) string { return "" }, stderr: &strings.Builder{}}
	in := install{data: filepath.Join(t.TempDir(), "root-data")}
	if err := prepareAccount(ctx, e, in, fake); err != nil || len(ran) != 0 {
		t.Fatalf("root: %v %v", err, ran)
	}
	if st, err := os.Stat(in.data); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("data directory: %v %v", st, err)
	}
	in.user = "fk-no-such-account"
	err := prepareAccount(ctx, e, in, fake)
	if err == nil || !strings.Contains(err.Error(), "--user root") || len(ran) != 1 {
		t.Fatalf("missing account: %v %v", err, ran)
	}
	got := strings.Join(ran[0], " ")
	for _, want := range []string{"useradd --system --user-group --no-create-home", "--home-dir " + in.data, "nologin", "fk-no-such-account"} {
		if !strings.Contains(got, want) {
			t.Errorf("useradd line %q lacks %q", got, want)
		}
	}
	if os.Getuid() != 0 {
		t.Skip("chown needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no nobody account")
	}
	in.user = "nobody"
	os.WriteFile(filepath.Join(in.data, "secret.key"), []byte("x"), 0o600)
	if err := prepareAccount(ctx, e, in, fake); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{in.data, filepath.Join(in.data, "secret.key")} {
		var st os.FileInfo
		st, _ = os.Stat(p)
		if uid := fileUID(st); strconv.Itoa(uid) != nobody.Uid {
			t.Errorf("%s owned by %d, want nobody", p, uid)
		}
	}
	// a configuration file the account cannot read is named at install time
	in.config = filepath.Join(t.TempDir(), "fieldkit.yaml")
	os.WriteFile(in.config, []byte("log:\n  level: info\n"), 0o600)
	var warn strings.Builder
	e.stderr = &warn
	prepareAccount(ctx, e, in, fake)
	if !strings.Contains(warn.String(), "not readable by nobody") {
		t.Fatalf("no warning for a 0600 root file: %q", warn.String())
	}
	os.Chmod(in.config, 0o644)
	warn.Reset()
	prepareAccount(ctx, e, in, fake)
	if warn.Len() != 0 {
		t.Fatalf("warning for a readable file: %q", warn.String())
	}
}

func fileUID(st os.FileInfo) int {
	if st == nil {
		return -1
	}
	return int(st.Sys().(*syscall.Stat_t).Uid)
}

// TestServicePlatformNames: the SysV special cases are keyed on the library's name
// for SysV, which must be one of its systems.
func TestServicePlatformNames(t *testing.T) {
	var names []string
	for _, s := range service.AvailableSystems() {
		names = append(names, s.String())
	}
	if !strings.Contains(strings.Join(names, ","), sysvPlatform) {
		t.Fatalf("kardianos/service has no system %q: %v", sysvPlatform, names)
	}
}

// TestServiceStatusNotInstalled asks this machine, where FieldKit is not installed as a
// service, through the real binary: "not installed", exit 4 (not "exit status 1").
func TestServiceStatusNotInstalled(t *testing.T) {
	if _, err := os.Stat("/etc/init.d/" + serviceName); err == nil {
		t.Skip("a fieldkit service is installed on this machine")
	}
	if _, err := os.Stat("/etc/systemd/system/" + serviceName + ".service"); err == nil {
		t.Skip("a fieldkit service is installed on this machine")
	}
	out, errOut, code := runExit(t, "service", "status", "--data", t.TempDir())
	if code != 4 || strings.TrimSpace(out) != "not installed" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
