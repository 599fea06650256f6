package exec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Phase is the step of an execution that was under way when it failed.
type Phase string

// The phases of an execution, in order.
const (
	PhaseConnect Phase = "connect" // TCP and the SSH handshake, host key included
	PhaseLogin   Phase = "login"   // authentication, the shell, the first prompt, paging off
	PhaseEnable  Phase = "enable"  // raising the session to privileged mode
	PhaseCommand Phase = "command" // sending the command and reading its output
	PhaseLogout  Phase = "logout"  // leaving config mode and closing the session
)

// Reason is what went wrong, in one word.
type Reason string

// The reasons an execution fails.
const (
	ReasonRefused     Reason = "refused"     // nothing listens on the port
	ReasonUnreachable Reason = "unreachable" // no route to the address, or its name does not resolve
	ReasonTimeout     Reason = "timeout"     // the phase's time ran out
	ReasonBusy        Reason = "busy"        // every session the device may have stayed in use until the time ran out
	ReasonHostKey     Reason = "host_key"    // the device's key changed, or is unknown under the strict policy
	ReasonNegotiation Reason = "negotiation" // no SSH algorithm in common
	ReasonAuth        Reason = "auth"        // the device refused the login
	ReasonShell       Reason = "shell"       // the device refused a terminal or a shell
	ReasonEnable      Reason = "enable"      // the device refused enable
	ReasonClosed      Reason = "closed"      // the device closed the session
	ReasonCancelled   Reason = "cancelled"   // someone stopped it, or the server is stopping
	ReasonExitStatus  Reason = "exit_status" // the command ended with a nonzero status
	ReasonNotRun      Reason = "not_run"     // an earlier command left the session unusable
	ReasonInvalid     Reason = "invalid"     // the request cannot run: a bad key, driver, prompt pattern
	ReasonFailed      Reason = "failed"      // anything else; Cause says what
)

// Failure says why an execution failed: the phase, what went wrong, where and as whom.
// Results carry one (Result.Failure) for every failure but a syntax error, which the
// device's answer explains (Result.Syntax). As an error, Open returns one; its Error is
// the technical message for logs, Message the words for a person. It never holds a
// secret: Cause is an error text FieldKit or the SSH library wrote, or the first line
// the device printed on standard error.
type Failure struct {
	Phase    Phase
	Reason   Reason
	Host     string
	Port     int
	Username string        // the login user, as the credential set names it
	Timeout  time.Duration // the bound that ran out (ReasonTimeout)
	By       string        // who cancelled (ReasonCancelled); "" when the server is stopping
	Status   int           // the exit status (ReasonExitStatus)
	Limit    int           // the sessions a device may have open (ReasonBusy)
	Cause    string        // the detail behind the reason, in the words of its source
	err      error
	text     string // Error's text when err is nil
}

// Error implements error: the technical message a log line and Result.ErrorMessage
// carry; a timeout's and a cancellation's are their short forms ("Timed out after 5 s",
// "Cancelled").
func (f *Failure) Error() string {
	switch {
	case f.Reason == ReasonTimeout:
		return TimedOut(f.Timeout)
	case f.Reason == ReasonBusy:
		return fmt.Sprintf("%s waiting for a free session to the device (all %d allowed in use)", TimedOut(f.Timeout), f.Limit)
	case f.Reason == ReasonCancelled:
		return "Cancelled"
	case f.err != nil:
		return f.err.Error()
	case f.text != "":
		return f.text
	}
	msg := fmt.Sprintf("exec: %s %s: %s", f.Phase, net.JoinHostPort(f.Host, strconv.Itoa(f.Port)), f.Reason)
	if f.Cause != "" {
		msg += ": " + f.Cause
	}
	return msg
}

// Unwrap gives errors.Is the cause: ErrAuth, ErrEnable, a *HostKeyError, a context error.
func (f *Failure) Unwrap() error { return f.err }

// Cancelled is the cause to cancel an execution's context with (context.WithCancelCause),
// so that its failure names who stopped it.
type Cancelled struct{ By string }

func (c *Cancelled) Error() string { return "cancelled by " + c.By }

// TimedOut is the short form of a timeout, "Timed out after 5 s", which every timeout's
// message starts with.
func TimedOut(d time.Duration) string {
	return "Timed out after " + strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
}

// Message puts the failure into words for the person who ran the command: what failed,
// on which address and port, as which login user and credential set (set, when known),
// and what to check next. The API's error_message and the web UI show it as is.
func (f *Failure) Message(set string) string {
	where := f.Host + " port " + strconv.Itoa(f.Port)
	as := ""
	if f.Username != "" {
		as = " as " + f.Username
	}
	if set != "" {
		as += fmt.Sprintf(" (credential set “%s”)", set)
	}
	switch f.Reason {
	case ReasonRefused:
		return fmt.Sprintf("Could not connect to %s: the connection was refused. Check that the device is up, that SSH is enabled on port %d, and the device's primary IP and SSH port.", where, f.Port)
	case ReasonUnreachable:
		return fmt.Sprintf("Could not reach %s (%s). Check the device's primary IP and the network path from the FieldKit server.", where, f.Cause)
	case ReasonHostKey:
		if errors.Is(f, ErrHostKeyUnknown) {
			return fmt.Sprintf("Refused to log in to %s: its host key is not known and the host key policy is strict. An administrator must store the device's key first.", where)
		}
		return fmt.Sprintf("Refused to log in to %s: its host key changed since FieldKit first saw it. If the device was replaced or re-keyed, clear its stored host key on the device page; otherwise someone may be intercepting the connection.", where)
	case ReasonNegotiation:
		return fmt.Sprintf("Could not agree on SSH algorithms with %s (%s). An older device may need the platform's or device's legacy SSH algorithms setting.", where, f.Cause)
	case ReasonAuth:
		return fmt.Sprintf("The device at %s refused the login%s. Check the username, password or key in the credential set.", where, as)
	case ReasonShell:
		return fmt.Sprintf("Logged in to %s%s, but the device refused a terminal (%s). Check that the account may open an interactive shell.", where, as, f.Cause)
	case ReasonEnable:
		return fmt.Sprintf("Logged in to %s%s, but the device refused enable. Check the credential set's enable secret and what it types when enable asks.", where, as)
	case ReasonClosed:
		return f.closed(where, as)
	case ReasonCancelled:
		if f.By != "" {
			return "Cancelled by " + f.By + "; the output so far is kept."
		}
		return "Cancelled: the server is stopping; the output so far is kept."
	case ReasonExitStatus:
		msg := fmt.Sprintf("The command ended with exit status %d on %s", f.Status, where)
		if f.Cause != "" {
			msg += ": " + f.Cause
		}
		return msg + "."
	case ReasonNotRun:
		return fmt.Sprintf("Not run: an earlier command left the session to %s unusable (%s).", where, f.Cause)
	case ReasonTimeout:
		return f.timedOut(where, as)
	case ReasonBusy:
		return fmt.Sprintf("%s waiting for a free session to %s: all %d sessions FieldKit may open to the device were in use by other runs. Try again when they end, or raise exec.sessions_per_device.",
			TimedOut(f.Timeout), where, f.Limit)
	case ReasonInvalid:
		return fmt.Sprintf("Could not run on %s: %s.", where, f.Cause)
	}
	return fmt.Sprintf("Failed while %s %s%s: %s.", f.Phase.doing(), where, as, f.Cause)
}

func (f *Failure) timedOut(where, as string) string {
	t := TimedOut(f.Timeout)
	switch f.Phase {
	case PhaseConnect:
		return t + " connecting to " + where + ": nothing answered. Check the device's primary IP and SSH port, and that no firewall drops SSH."
	case PhaseLogin:
		return t + " logging in to " + where + as + ": the login or the first prompt did not come. Check that the platform (its driver) matches the device and that the device is not overloaded."
	case PhaseEnable:
		return t + " entering enable mode on " + where + as + ". Check the credential set's enable secret."
	}
	return t + " running the command on " + where + "; the output so far is kept. Raise the timeout (up to 300 s) or narrow the command."
}

func (f *Failure) closed(where, as string) string {
	switch f.Phase {
	case PhaseConnect:
		return "The device at " + where + " closed the connection before the login. Check the device's SSH settings (allowed clients, session limits)."
	case PhaseLogin, PhaseEnable:
		return "The device at " + where + " closed the session during the login" + as + ". Check that the account may log in over SSH and the device's session limits."
	}
	return "The device at " + where + " closed the session while the command ran; the output so far is kept. Check the device's log (an idle or exec timeout, a reload)."
}

// doing is the phase as an activity ("connecting to").
func (p Phase) doing() string {
	switch p {
	case PhaseConnect:
		return "connecting to"
	case PhaseLogin:
		return "logging in to"
	case PhaseEnable:
		return "entering enable mode on"
	case PhaseLogout:
		return "logging out of"
	}
	return "running the command on"
}

// fail is a Failure of the session's device and login user; err is the error as the
// caller built it (Error returns its text), cause the detail a person reads.
func (s *Session) fail(phase Phase, reason Reason, err error, cause string) *Failure {
	return &Failure{Phase: phase, Reason: reason, Host: s.t.Host, Port: s.port(), Username: s.creds.Username, err: err, Cause: cause}
}

// failText is fail for a failure whose technical message is text.
func (s *Session) failText(phase Phase, reason Reason, text, cause string) *Failure {
	f := s.fail(phase, reason, nil, cause)
	f.text = text
	return f
}

// port is the device's SSH port.
func (s *Session) port() int {
	if s.t.Port == 0 {
		return 22
	}
	return s.t.Port
}

// ended is the failure of a phase whose context ended: a timeout (bound is the time it
// had) or a cancellation (naming who, when the canceller did: see Cancelled).
func (s *Session) ended(ctx context.Context, phase Phase, bound time.Duration, err error) *Failure {
	if errors.Is(ctx.Err(), context.Canceled) {
		f := s.fail(phase, ReasonCancelled, err, "")
		var c *Cancelled
		if errors.As(context.Cause(ctx), &c) {
			f.By = c.By
		}
		return f
	}
	f := s.fail(phase, ReasonTimeout, err, "")
	f.Timeout = bound
	return f
}

// dialFailure classifies a failed TCP connection; err is the caller's error around it.
func (s *Session) dialFailure(dialErr, err error) *Failure {
	var dns *net.DNSError
	low := strings.ToLower(dialErr.Error())
	switch {
	case errors.Is(dialErr, syscall.ECONNREFUSED) || strings.Contains(low, "refused"):
		return s.fail(PhaseConnect, ReasonRefused, err, "connection refused")
	case errors.As(dialErr, &dns):
		return s.fail(PhaseConnect, ReasonUnreachable, err, "the name does not resolve")
	case errors.Is(dialErr, syscall.EHOSTUNREACH) || errors.Is(dialErr, syscall.ENETUNREACH) || strings.Contains(low, "unreachable"):
		return s.fail(PhaseConnect, ReasonUnreachable, err, "no route to the address")
	case errors.Is(dialErr, os.ErrDeadlineExceeded):
		return s.fail(PhaseConnect, ReasonTimeout, err, "")
	}
	return s.fail(PhaseConnect, ReasonFailed, err, plainCause(dialErr))
}

// plainCause is an error's text without the prefixes of the layers it went through
// ("dial tcp 10.0.0.1:22: connect: connection refused" → "connection refused"): the
// detail a person can act on. It never holds a secret: no error FieldKit or the SSH
// library writes carries one.
func plainCause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.Contains(msg, "dial tcp") {
		msg = msg[i+2:]
	}
	for _, p := range []string{"ssh: handshake failed: ", "ssh: ", "exec: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}
