package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// systemdUnit renders the systemd unit. Type=notify: `systemctl start` returns once the
// API answers (serve sends READY=1 after it listens; a longer migration extends
// TimeoutStartSec while it runs: keepStarting). TimeoutStopSec exceeds
// server.shutdown_timeout, which exceeds the longest execution, so a stop or restart
// waits for running executions instead of killing them. ExecReload sends SIGHUP.
func systemdUnit(in install) (string, error) {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line("# Written by \"fieldkit service install\"; reinstall to change it.")
	line("[Unit]")
	line("Description=%s", serviceDescription)
	line("After=network-online.target")
	line("Wants=network-online.target")
	line("StartLimitIntervalSec=600")
	line("StartLimitBurst=5")
	line("")
	line("[Service]")
	line("Type=notify")
	line("NotifyAccess=main")
	line("ExecStart=%s", systemdCommand(append([]string{in.exe}, in.args()...)))
	line("ExecReload=/bin/kill -HUP $MAINPID")
	line("WorkingDirectory=%s", systemdPath(in.data))
	if in.user != "" {
		line("User=%s", in.user)
		line("Group=%s", in.user)
		// lets a dedicated account listen on port 443 as root could
		line("AmbientCapabilities=CAP_NET_BIND_SERVICE")
	}
	line("UMask=0077")
	line("NoNewPrivileges=yes")
	line("Restart=on-failure")
	line("RestartSec=10s")
	line("TimeoutStartSec=120s")
	line("TimeoutStopSec=%ds", int(in.stopTimeout.Seconds()))
	// SIGTERM to the server only; whatever is left after the timeout is killed
	line("KillMode=mixed")
	line("StandardOutput=journal")
	line("StandardError=journal")
	line("SyslogIdentifier=%s", serviceName)
	line("")
	line("[Install]")
	line("WantedBy=multi-user.target")
	return b.String(), checkTemplateSafe(b.String())
}

// systemdCommand quotes a command line for ExecStart: each word in double quotes, with
// backslash, quote, "%" (specifiers) and "$" (variables) escaped, so that paths with
// spaces or such characters arrive as written.
func systemdCommand(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		w = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$").Replace(w)
		q[i] = `"` + w + `"`
	}
	return strings.Join(q, " ")
}

// systemdPath escapes a path for a path-valued setting: it takes the rest of the line
// as is (spaces included), expanding only specifiers.
func systemdPath(p string) string { return strings.ReplaceAll(p, "%", "%%") }

// checkTemplateSafe refuses text the library's template engine would read as an
// action; only a path containing "{{" could bring one in.
func checkTemplateSafe(text string) error {
	if strings.Contains(text, "{{") {
		return errors.New(`service: a path contains "{{", which the service files cannot hold`)
	}
	return nil
}

// sysvScript renders the SysV init script. The server writes <data>/fieldkit.pid once
// it listens and removes it when it has stopped, so start waits for readiness and stop
// waits, up to the stop timeout, for running executions to finish.
func sysvScript(in install) (string, error) {
	cmd := make([]string, 0, 8)
	for _, w := range append([]string{in.exe}, in.args()...) {
		cmd = append(cmd, shQuote(w))
	}
	r := strings.NewReplacer(
		"@DESCRIPTION@", serviceDescription,
		"@DATA@", shQuote(in.data),
		"@RUN_AS@", shQuote(in.user),
		"@STOP_WAIT@", strconv.Itoa(int(in.stopTimeout.Seconds())),
		"@COMMAND@", strings.Join(cmd, " "),
	)
	text := r.Replace(sysvTemplate)
	return text, checkTemplateSafe(text)
}

const sysvTemplate = `#!/bin/sh
# FieldKit init script, written by "fieldkit service install"; reinstall to change it.
### BEGIN INIT INFO
# Provides:          fieldkit
# Required-Start:    $network $remote_fs
# Required-Stop:     $network $remote_fs
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: FieldKit
# Description:       @DESCRIPTION@
### END INIT INFO
# chkconfig: 2345 90 10

DATA=@DATA@
RUN_AS=@RUN_AS@
PIDFILE="$DATA/fieldkit.pid"
# The log is $DATA/fieldkit.log (log.file, rotated); this file keeps only what the
# process writes before its log opens, and crash traces.
CONSOLE="$DATA/fieldkit-console.log"
START_WAIT=60
STOP_WAIT=@STOP_WAIT@

pid() { [ -f "$PIDFILE" ] && cat "$PIDFILE"; }
running() { p=$(pid) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

launch() {
	cd "$DATA" || exit 1
	if [ -n "$RUN_AS" ]; then
		exec setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups -- @COMMAND@
	fi
	exec @COMMAND@
}

do_start() {
	if running; then
		echo "fieldkit is already running (pid $(pid))"
		return 0
	fi
	rm -f "$PIDFILE"
	printf 'Starting fieldkit'
	FIELDKIT_SERVICE=sysv launch >>"$CONSOLE" 2>&1 </dev/null &
	child=$!
	i=0
	while [ "$i" -lt "$START_WAIT" ]; do
		if running; then
			echo " started (pid $(pid))"
			return 0
		fi
		if ! kill -0 "$child" 2>/dev/null; then
			echo " failed: see $CONSOLE and $DATA/fieldkit.log"
			return 1
		fi
		printf '.'
		sleep 1
		i=$((i + 1))
	done
	echo " not ready after ${START_WAIT}s: see $CONSOLE and $DATA/fieldkit.log"
	return 1
}

do_stop() {
	if ! running; then
		echo "fieldkit is not running"
		rm -f "$PIDFILE"
		return 0
	fi
	p=$(pid)
	printf 'Stopping fieldkit (pid %s): running executions finish first' "$p"
	kill -TERM "$p"
	i=0
	while kill -0 "$p" 2>/dev/null; do
		if [ "$i" -ge "$STOP_WAIT" ]; then
			echo " still running after ${STOP_WAIT}s"
			return 1
		fi
		[ $((i % 10)) -eq 0 ] && printf '.'
		sleep 1
		i=$((i + 1))
	done
	rm -f "$PIDFILE"
	echo " stopped"
}

case "$1" in
start) do_start ;;
stop) do_stop ;;
restart | force-reload)
	do_stop || exit 1
	do_start
	;;
reload)
	running || { echo "fieldkit is not running"; exit 7; }
	kill -HUP "$(pid)" && echo "fieldkit reloaded"
	;;
status)
	if running; then
		echo "running (pid $(pid))"
		exit 0
	fi
	echo "stopped"
	exit 3
	;;
*)
	echo "usage: $0 {start|stop|restart|reload|status}" >&2
	exit 2
	;;
esac
`

// sysvStatus asks the init script, which answers by its exit status.
func sysvStatus(script string) serviceState {
	if _, err := os.Stat(script); errors.Is(err, fs.ErrNotExist) {
		return serviceState{"not installed", 4}
	}
	err := exec.Command(script, "status").Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return serviceState{"running", 0}
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		return serviceState{"stopped", 3}
	}
	return serviceState{fmt.Sprintf("unknown: %v", err), 4}
}

// runCommand runs a program, its output folded into the error.
func runCommand(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// prepareAccount creates the service account when it is missing (a system account
// with no login and no home of its own) and gives it the data directory.
func prepareAccount(ctx context.Context, e env, in install, run func(context.Context, string, ...string) error) error {
	if err := os.MkdirAll(in.data, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if in.user == "" {
		return nil
	}
	u, err := user.Lookup(in.user)
	if errors.As(err, new(user.UnknownUserError)) {
		if err := run(ctx, "useradd", useraddArgs(in.user, in.data)...); err != nil {
			return fmt.Errorf("create service account %q (or pass --user root): %w", in.user, err)
		}
		fmt.Fprintf(e.stderr, "created system account %s\n", in.user)
		u, err = user.Lookup(in.user)
	}
	if err != nil {
		return fmt.Errorf("service account %q: %w", in.user, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := chownTree(in.data, uid, gid); err != nil {
		return fmt.Errorf("give %s to %s: %w", in.data, in.user, err)
	}
	if in.config != "" && !readableBy(in.config, uid, gid) {
		fmt.Fprintf(e.stderr, "warning: %s is not readable by %s: the service will not start until it is (chown or chmod it)\n", in.config, in.user)
	}
	return nil
}

// readableBy tells whether an account may read a file, by its mode and owner.
func readableBy(path string, uid, gid int) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	perm := st.Mode().Perm()
	owner, group, ok := fileOwner(st)
	switch {
	case perm&0o004 != 0:
		return true
	case !ok:
		return true // unknown on this system: do not warn
	case owner == uid:
		return perm&0o400 != 0
	case group == gid:
		return perm&0o040 != 0
	}
	return false
}

// useraddArgs makes a system account and group of the same name whose home is the
// data directory and which cannot log in.
func useraddArgs(name, home string) []string {
	shell := "/usr/sbin/nologin"
	if _, err := os.Stat(shell); err != nil {
		shell = "/sbin/nologin"
	}
	return []string{"--system", "--user-group", "--no-create-home", "--home-dir", home,
		"--shell", shell, "--comment", "FieldKit service", name}
}

func chownTree(root string, uid, gid int) error {
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// pidFile is written once the server listens and removed when it has stopped: the SysV
// script's readiness and stop signal.
func pidFile(data string) string { return filepath.Join(data, "fieldkit.pid") }

// writePidFile records the process id; a failure is logged, not fatal.
func writePidFile(data string) error {
	return os.WriteFile(pidFile(data), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}
