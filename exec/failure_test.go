package exec

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/exec/devsim"
)

// Every phase of an execution that can fail says so: which phase, what went wrong, on
// which address and port, as which user, and the message a person reads puts it in
// those words, without a secret and without the internal "exec:" prefix.
func TestFailuresNameTheirPhase(t *testing.T) {
	closedPort := func(t *testing.T) int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		return port
	}
	cases := []struct {
		name    string
		setup   func(t *testing.T, r *rig)
		cmd     Command
		phase   Phase
		reason  Reason
		outcome string
		message []string // what the sentence must say, besides the address and port
	}{
		{"refused", func(t *testing.T, r *rig) { r.tg.Port = closedPort(t) }, show("show version"),
			PhaseConnect, ReasonRefused, "connect_error", []string{"Could not connect to", "the connection was refused", "Check that the device is up"}},
		{"auth", func(t *testing.T, r *rig) { r.cred.Password = "not-the-" + "password" }, show("show version"),
			PhaseLogin, ReasonAuth, "auth_error", []string{"refused the login as " + testUser + " (credential set “Lab set”)", "Check the username, password or key"}},
		{"enable", func(t *testing.T, r *rig) { r.cred.EnableSecret = "not-the-" + "secret" }, show("show version"),
			PhaseEnable, ReasonEnable, "error", []string{"refused enable", "enable secret"}},
		{"login timeout", func(t *testing.T, r *rig) { r.opt.Timeout = time.Second; r.dev.SetLatency(3 * time.Second) }, show("show version"),
			PhaseLogin, ReasonTimeout, "timeout", []string{"Timed out after 1 s logging in to", "as " + testUser}},
		{"command timeout", func(t *testing.T, r *rig) { r.opt.Timeout = time.Second }, show("show tech-support"),
			PhaseCommand, ReasonTimeout, "timeout", []string{"Timed out after 1 s running the command on", "the output so far is kept", "Raise the timeout"}},
		{"closed", func(t *testing.T, r *rig) { r.dev.SetFault(devsim.FaultDisconnect) }, show("show version"),
			PhaseCommand, ReasonClosed, "error", []string{"closed the session while the command ran"}},
		{"host key", func(t *testing.T, r *rig) {
			r.exec(t, show("show clock"))
			if err := r.dev.RotateHostKey(); err != nil {
				t.Fatal(err)
			}
		}, show("show version"), PhaseConnect, ReasonHostKey, "host_key_error", []string{"host key changed", "clear its stored host key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, "cisco_ios", nil)
			c.setup(t, r)
			res := r.exec(t, c.cmd)[0]
			f := res.Failure
			if res.Success || f == nil {
				t.Fatalf("want a failure, got %+v", res)
			}
			if f.Phase != c.phase || f.Reason != c.reason || f.Host != "127.0.0.1" || f.Port != r.tg.Port || f.Username != testUser {
				t.Fatalf("failure %s/%s at %s:%d as %s, want %s/%s at 127.0.0.1:%d as %s", f.Phase, f.Reason, f.Host, f.Port, f.Username,
					c.phase, c.reason, r.tg.Port, testUser)
			}
			msg := f.Message("Lab set")
			for _, want := range append(c.message, "127.0.0.1 port "+strconv.Itoa(r.tg.Port)) {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "exec:") || strings.Contains(msg, "dial tcp") || strings.Contains(msg, "ssh:") {
				t.Errorf("message %q carries internal prefixes", msg)
			}
			if got := Outcome(res); got != c.outcome {
				t.Errorf("outcome %q, want %q", got, c.outcome)
			}
			if c.reason == ReasonTimeout && c.phase == PhaseCommand && !strings.Contains(res.Output, "show version") {
				t.Errorf("the output read before the timeout is lost: %q", res.Output)
			}
		})
	}
}

// A cancelled context stops a command at once, closes the session, keeps the output
// read so far, and the failure names who cancelled.
func TestCancelClosesTheSession(t *testing.T) {
	r := newRig(t, "cisco_ios", nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	var mu sync.Mutex
	var streamed strings.Builder
	cmd := show("show tech-support")
	cmd.Output = func(text string) {
		mu.Lock()
		defer mu.Unlock()
		streamed.WriteString(text)
		if strings.Count(streamed.String(), "\n") >= 60 {
			cancel(&Cancelled{By: "alice"})
		}
	}
	start := time.Now()
	res := Execute(ctx, r.tg, r.cred, r.opt, []Command{cmd})[0]
	took := time.Since(start)
	f := res.Failure
	if res.Success || f == nil || f.Reason != ReasonCancelled || f.Phase != PhaseCommand || f.By != "alice" {
		t.Fatalf("want a cancellation by alice, got %+v (failure %+v)", res, f)
	}
	if res.ErrorMessage != "Cancelled" || !strings.HasPrefix(f.Message(""), "Cancelled by alice") || Outcome(res) != "cancelled" {
		t.Errorf("messages %q / %q, outcome %s", res.ErrorMessage, f.Message(""), Outcome(res))
	}
	if took > 5*time.Second {
		t.Errorf("the cancelled command ran on for %v (the whole takes about 18 s)", took)
	}
	if !strings.Contains(res.Output, "show version") || strings.Contains(res.Output, "show logging") {
		t.Errorf("the partial output is not what was read: %d bytes", len(res.Output))
	}
	deadline := time.Now().Add(3 * time.Second)
	for r.dev.Conns() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := r.dev.Conns(); n != 0 {
		t.Errorf("%d connections still open after the cancel", n)
	}
}

// Output streams as the device prints it, whole lines, without the command's echo, and
// all of it adds up to the final output.
func TestOutputStreams(t *testing.T) {
	for _, vendor := range []string{"cisco_ios", "linux"} {
		t.Run(vendor, func(t *testing.T) {
			r := newRig(t, vendor, nil)
			r.dev.SetFault(devsim.FaultSlowOutput)
			type chunk struct {
				text string
				at   time.Time
			}
			var mu sync.Mutex
			var chunks []chunk
			text := "show ip interface brief"
			if vendor == "linux" {
				text = "ip -br address"
			}
			cmd := show(text)
			cmd.Output = func(s string) {
				mu.Lock()
				defer mu.Unlock()
				chunks = append(chunks, chunk{s, time.Now()})
			}
			res := r.exec(t, cmd)[0]
			end := time.Now()
			if !res.Success {
				t.Fatalf("%+v", res)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(chunks) < 3 || end.Sub(chunks[0].at) < 300*time.Millisecond {
				t.Fatalf("%d chunks, the first %v before the end: not streamed", len(chunks), end.Sub(chunks[0].at))
			}
			var all strings.Builder
			for _, c := range chunks {
				if !strings.HasSuffix(c.text, "\n") {
					t.Errorf("chunk %q is not whole lines", c.text)
				}
				all.WriteString(c.text)
			}
			if strings.Contains(all.String(), text) && vendor != "linux" {
				t.Errorf("the echo is streamed: %q", all.String())
			}
			if strings.TrimSpace(all.String()) != strings.TrimSpace(res.Output) {
				t.Errorf("streamed\n%q\nfinal\n%q", all.String(), res.Output)
			}
		})
	}
}

// A device that hangs at logout neither fails a command that ran nor holds its caller:
// the session closes within the close budget.
func TestLogoutHangDoesNotFailTheRun(t *testing.T) {
	r := newRig(t, "cisco_ios", nil)
	s := r.open(t)
	res := run(t, s, 5*time.Second, show("show clock"))
	if !res.Success {
		t.Fatalf("%+v", res)
	}
	r.dev.SetFault(devsim.FaultSilence)
	start := time.Now()
	if err := s.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Errorf("close: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("close took %v", took)
	}
}
