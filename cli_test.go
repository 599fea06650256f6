package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// testBinary builds the fieldkit binary once per test run (tests that need a real
// process: exit codes, signals, services).
func testBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fieldkit-test-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "fieldkit")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// runExit runs the built binary and returns stdout, stderr and the exit status.
func runExit(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testBinary(t), args...)
	cmd.Env = serverEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestEveryCommandHasHelp runs "-h" and "--help" on every command of the table in the
// real binary: usage on stdout, nothing on stderr, exit 0.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands {
		for _, h := range []string{"-h", "--help"} {
			args := append(strings.Fields(c.path), h)
			out, errOut, code := runExit(t, args...)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: fieldkit "+c.path) {
				t.Errorf("fieldkit %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
			}
		}
	}
	// A group's help lists its subcommands, as "help GROUP" does.
	top, subs := commandTree()
	for _, group := range top {
		if len(subs[group]) == 0 {
			continue
		}
		for _, args := range [][]string{{group, "--help"}, {group, "-h"}, {"help", group}} {
			out, errOut, code := runExit(t, args...)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: fieldkit "+group+" SUBCOMMAND") {
				t.Errorf("fieldkit %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
			}
			for _, sub := range subs[group] {
				if !strings.Contains(out, group+" "+sub) {
					t.Errorf("fieldkit %s does not list %q:\n%s", strings.Join(args, " "), sub, out)
				}
			}
		}
	}
	out, _, code := runExit(t, "--help")
	if code != 0 || !strings.Contains(out, "service status") || !strings.Contains(out, "completion powershell") {
		t.Fatalf("--help: exit %d:\n%s", code, out)
	}
	if out, _, code := runExit(t, "help", "service"); code != 0 || !strings.Contains(out, "service restart") {
		t.Fatalf("help service: exit %d:\n%s", code, out)
	}
	if _, errOut, code := runExit(t, "help", "nope"); code != 2 || !strings.Contains(errOut, `"nope"`) {
		t.Fatalf("help nope: exit %d: %s", code, errOut)
	}
	out, _, code = runExit(t, "help", "token", "create")
	if code != 0 || !strings.Contains(out, "--read-only") && !strings.Contains(out, "-read-only") {
		t.Fatalf("help token create: exit %d:\n%s", code, out)
	}
}

// TestCommandLineErrors: anything the CLI cannot run exits 2 with a message naming
// what is wrong, and runs nothing (the serve cases would otherwise start a server).
func TestCommandLineErrors(t *testing.T) {
	data := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--data", data, "field", "data"}, `unexpected argument "field", "data"`},
		{[]string{"serve", "--data", data, "--lisen", "x"}, "-lisen"},
		{[]string{"backup", "--data", data, "--output", "x", "stray"}, `"stray"`},
		{[]string{"user", "create", "--data", data}, "missing USERNAME"},
		{[]string{"user", "create", "a", "b", "--data", data}, `unexpected argument "b"`},
		{[]string{"user", "delete", "a"}, `unknown subcommand "delete"`},
		{[]string{"service"}, "missing subcommand"},
		{[]string{"service", "status", "now"}, `unexpected argument "now"`},
		{[]string{"export", "logs", "--data", data, "--format", "xml"}, "xml"},
		{[]string{"export", "logs", "--data", data, "--start-date", "2026-02-30"}, "--start-date"},
		{[]string{"completion", "zsh"}, `unknown subcommand "zsh"`},
		{[]string{"parse", "--data", data, "--command", "show version", "out.txt"}, "--platform and --command are required"},
		{[]string{"parse", "--data", data, "--platform", "cisco_ios", "--command", "show version", "a.txt", "b.txt"}, `unexpected argument "b.txt"`},
		{[]string{"version", "extra"}, `unexpected argument "extra"`},
		{[]string{"token", "create", "a", "--data", data, "--expires", "30x"}, `"30x" is not a lifetime (unknown unit "x"): use days (30d), weeks (2w), hours (12h)`},
		{[]string{"token", "create", "a", "--data", data, "--expires", "d"}, `"d" is not a lifetime`},
		{[]string{"token", "create", "a", "--data", data, "--expires", "-3d"}, `"-3d" is not a lifetime`},
		{[]string{"token", "create", "a", "--data", data, "--expires", "0h"}, "longer than zero"},
		{[]string{"nope", "--help"}, `unknown command "nope"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{nil, "no command given"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, errOut, code := runExit(t, c.args...)
			if code != 2 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "--help") {
				t.Fatalf("exit %d (want 2), stderr %q (want %q and a --help hint), stdout %q", code, errOut, c.want, out)
			}
		})
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Fatalf("a refused command line left files in the data directory: %v", entries)
	}
}

// TestBashCompletion sources the generated script in bash and asks it to complete, as
// bash does on Tab.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, _, code := runExit(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: exit %d", code)
	}
	file := filepath.Join(t.TempDir(), "fieldkit.bash")
	os.WriteFile(file, []byte(script), 0o600)
	cases := []struct {
		line string // words typed; the last one is being completed
		want []string
		not  []string
	}{
		{"fieldkit ", []string{"serve", "service", "completion", "export", "version"}, []string{"install"}},
		{"fieldkit se", []string{"serve", "service"}, []string{"user"}},
		{"fieldkit service ", []string{"install", "uninstall", "status"}, []string{"serve"}},
		{"fieldkit service install --", []string{"--user", "--config", "--data", "--help"}, []string{"--demo"}},
		{"fieldkit --data /tmp/x service st", []string{"start", "status", "stop"}, nil},
		{"fieldkit user create alice --", []string{"--superuser", "--group"}, []string{"--read-only"}},
		{"fieldkit export logs --format ", []string{"csv", "json"}, nil},
		{"fieldkit completion ", []string{"bash", "powershell"}, nil},
		{"fieldkit pa", []string{"parse"}, nil},
		{"fieldkit parse --", []string{"--platform", "--command", "--template", "--data"}, []string{"--format"}},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			words := strings.Fields(c.line)
			if strings.HasSuffix(c.line, " ") {
				words = append(words, "")
			}
			var arr strings.Builder
			for _, w := range words {
				arr.WriteString(shQuote(w) + " ")
			}
			prog := "source " + shQuote(file) + "\nCOMP_WORDS=(" + arr.String() + ")\nCOMP_CWORD=" +
				strconv.Itoa(len(words)-1) + "\n_fieldkit\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
			out, err := exec.Command(bash, "--norc", "-c", prog).CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			got := strings.Fields(string(out))
			for _, w := range c.want {
				if !contains(got, w) {
					t.Errorf("completing %q: %v lacks %q", c.line, got, w)
				}
			}
			for _, w := range c.not {
				if contains(got, w) {
					t.Errorf("completing %q: %v offers %q", c.line, got, w)
				}
			}
		})
	}
}

// TestPowerShellCompletion checks the generated completer names every command path and
// each command's flags; there is no PowerShell here to run it.
func TestPowerShellCompletion(t *testing.T) {
	script, _, code := runExit(t, "completion", "powershell")
	if code != 0 || !strings.Contains(script, "Register-ArgumentCompleter -Native -CommandName 'fieldkit', 'fieldkit.exe'") {
		t.Fatalf("exit %d:\n%s", code, script)
	}
	tree, _ := completionTree()
	for path, next := range tree {
		line := "        " + psQuote(path) + " = @("
		if !strings.Contains(script, line) {
			t.Errorf("no entry for %q", path)
		}
		for _, n := range next {
			if !strings.Contains(script, psQuote(n)) {
				t.Errorf("%q: %q missing", path, n)
			}
		}
	}
	if strings.Count(script, "{") != strings.Count(script, "}") || strings.Count(script, "(") != strings.Count(script, ")") {
		t.Fatal("unbalanced braces or parentheses")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCommandsRefuseAMissingDatabase: a command that reads or adds to data, run on a
// data directory without a database (the default ./fieldkit-data of another working
// directory, or a mistyped --data), exits 1 naming the path it looked at and how to name
// another, and creates nothing there; user create --init starts a new install.
func TestCommandsRefuseAMissingDatabase(t *testing.T) {
	cwd := t.TempDir()
	file := filepath.Join(cwd, "devices.csv")
	if err := os.WriteFile(file, []byte("name,site\nr1,Paris\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	commands := [][]string{
		{"export", "logs"},
		{"export", "logs", "--format", "json", "--output", filepath.Join(cwd, "out.json")},
		{"backup", "--output", filepath.Join(cwd, "b.fkbackup")},
		{"token", "create", "admin"},
		{"user", "create", "admin"},
		{"import", file},
		{"inventory", "sync"},
	}
	typo := filepath.Join(cwd, "fieldkit-dta")
	for _, args := range commands {
		for _, how := range []struct {
			name  string
			extra []string
			env   []string
			path  string
			said  string
		}{
			{"default", nil, nil, filepath.Join(cwd, "fieldkit-data", "fieldkit.db"), "the default data directory, ./fieldkit-data in the current directory"},
			{"--data", []string{"--data", typo}, nil, filepath.Join(typo, "fieldkit.db"), "given by --data"},
			{"FIELDKIT_DATA", nil, []string{"FIELDKIT_DATA=" + typo}, filepath.Join(typo, "fieldkit.db"), "given by FIELDKIT_DATA"},
		} {
			t.Run(strings.Join(args, " ")+" "+how.name, func(t *testing.T) {
				cmd := exec.Command(testBinary(t), append(args, how.extra...)...)
				cmd.Dir = cwd
				cmd.Env = append(serverEnv(), how.env...)
				if args[0] == "inventory" {
					cmd.Env = append(cmd.Env, "FIELDKIT_INVENTORY_NETBOX_URL=http://127.0.0.1:9", "FIELDKIT_INVENTORY_NETBOX_TOKEN=0123456789abcdef0123456789abcdef01234567")
				}
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				msg := errb.String()
				if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(msg, "no FieldKit database at "+how.path) || !strings.Contains(msg, how.said) ||
					!strings.Contains(msg, "--data DIR") || !strings.Contains(msg, "FIELDKIT_DATA=DIR") {
					t.Fatalf("%v: stdout %q, stderr %q", err, out.String(), msg)
				}
				if out.Len() != 0 {
					t.Errorf("printed %q", out.String())
				}
				for _, dir := range []string{"fieldkit-data", "fieldkit-dta"} {
					if _, err := os.Stat(filepath.Join(cwd, dir)); err == nil {
						t.Fatalf("%s was created", dir)
					}
				}
			})
		}
	}
	// user create says how to start a new install; with --init it does.
	out, errOut, code := runExitIn(t, cwd, "user", "create", "admin")
	if code != 1 || !strings.Contains(errOut, "add --init") {
		t.Fatalf("user create: exit %d, %q %q", code, out, errOut)
	}
	if out, errOut, code = runExitIn(t, cwd, "user", "create", "admin", "--init"); code != 0 || out == "" {
		t.Fatalf("user create --init: exit %d, %q %q", code, out, errOut)
	}
	if out, errOut, code = runExitIn(t, cwd, "token", "create", "admin"); code != 0 || len(strings.TrimSpace(out)) != 40 {
		t.Fatalf("token create once the database exists: exit %d, %q %q", code, out, errOut)
	}
}

// runExitIn runs the built binary in a working directory, without FIELDKIT_ variables.
func runExitIn(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = serverEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}
