package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Run runs one command. The context bounds it: on expiry the result is a
// failure "Timed out after N s" (N: the time ctx had left when Run began)
// with the partial output kept, and the session is left unusable (Close
// still tidies up); a cancelled context is a failure "Cancelled" the same
// way, naming who cancelled when the context's cause is a *Cancelled. Run
// never returns an error; the outcome is in the Result, the output exactly
// as the device sent it. cmd.Output, when set, sees the output as it comes.
func (s *Session) Run(ctx context.Context, cmd Command) Result {
	return s.runBounded(ctx, cmd, timeLeft(ctx, 0))
}

// runBounded is Run with the timeout its message names chosen by the caller:
// Execute names its whole timeout, not the part left for this command.
func (s *Session) runBounded(ctx context.Context, cmd Command, bound time.Duration) Result {
	start := time.Now()
	s.stream = cmd.Output
	r := s.run(ctx, cmd, bound)
	s.stream = nil
	r.Duration = time.Since(start)
	s.log.Debug("exec: command done", "command_type", cmd.Type, "success", r.Success,
		"duration_ms", r.Duration.Milliseconds(), "output_bytes", len(r.Output), "truncated", r.Truncated)
	return r
}

func (s *Session) run(ctx context.Context, cmd Command, bound time.Duration) Result {
	if s.broken != nil {
		msg := "not run: " + s.broken.Error()
		return s.result(nil, false, SyntaxError{}, s.fail(PhaseCommand, ReasonNotRun, errors.New(msg), s.broken.Message("")))
	}
	if cmd.Type != "" && cmd.Type != TypeShow && cmd.Type != TypeConfig {
		msg := fmt.Sprintf("unknown command type %q", cmd.Type)
		return s.result(nil, false, SyntaxError{}, s.fail(PhaseCommand, ReasonInvalid, errors.New(msg), msg))
	}
	lines := commandLines(cmd.Text)
	if len(lines) == 0 {
		return s.result(nil, false, SyntaxError{}, s.fail(PhaseCommand, ReasonInvalid, errors.New("empty command"), "the command is empty"))
	}
	switch {
	case s.d.exec:
		return s.runExec(ctx, cmd.Type, lines, bound)
	case cmd.Type == TypeConfig:
		return s.runConfig(ctx, lines, bound)
	default:
		return s.runShow(ctx, lines, bound)
	}
}

// commandLines splits a command's text into its non-blank lines.
func commandLines(text string) []string {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// runShow sends each line and stops at the first one the device rejects.
func (s *Session) runShow(ctx context.Context, lines []string, bound time.Duration) Result {
	var parts []string
	truncated := false
	for _, line := range lines {
		r, err := s.send(ctx, line)
		out := s.d.cleanOutput(normalize(string(r.raw)), line, r.prompt)
		parts = append(parts, out)
		truncated = truncated || r.truncated
		if err != nil {
			return s.result(parts, truncated, SyntaxError{}, s.readError(ctx, err, bound))
		}
		if se := s.d.detectSyntax(out); se.Detected {
			return s.result(parts, truncated, se, nil)
		}
	}
	return s.result(parts, truncated, SyntaxError{}, nil)
}

// readError records why a read failed, marks the session unusable and
// returns the failure.
func (s *Session) readError(ctx context.Context, err error, bound time.Duration) *Failure {
	var f *Failure
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		f = s.ended(ctx, PhaseCommand, bound, err)
	case errors.Is(err, errDisconnected):
		f = s.failText(PhaseCommand, ReasonClosed, "Device closed the session", errDisconnected.Error())
		s.lost = true
	case errors.Is(err, errSilent):
		f = s.failText(PhaseCommand, ReasonFailed, "Device stopped answering",
			"the device stopped answering; the network path may have dropped the idle session")
		s.lost = true
	default:
		f = s.fail(PhaseCommand, ReasonFailed, fmt.Errorf("Session failed: %w", err), plainCause(err))
	}
	s.broken = f
	return f
}

// result assembles a Result: output joined and capped, success when there
// is neither a failure nor a syntax error.
func (s *Session) result(parts []string, truncated bool, se SyntaxError, f *Failure) Result {
	out, truncated := capOutput(strings.Join(parts, "\n"), s.o.maxOutput(), truncated)
	r := Result{Output: out, Truncated: truncated, Syntax: se, Failure: f}
	switch {
	case f != nil:
		r.ErrorMessage = f.Error()
	case se.Detected:
		r.ErrorMessage = "Syntax error detected: " + se.Line
	default:
		r.Success = true
	}
	return r
}

// capOutput cuts out at limit bytes (on a character boundary) and marks a
// cut, whether made here or earlier while reading.
func capOutput(out string, limit int, truncated bool) (string, bool) {
	if len(out) > limit {
		n := limit
		for n > 0 && !utf8.RuneStart(out[n]) {
			n--
		}
		out, truncated = out[:n], true
	}
	if truncated {
		out += fmt.Sprintf("\n[output truncated at %d bytes]", limit)
	}
	return out, truncated
}

// timeLeft is the bound a timeout's message names: the configured one, else the
// time left on ctx when the work began.
func timeLeft(ctx context.Context, configured time.Duration) time.Duration {
	if configured > 0 {
		return configured
	}
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl).Round(100 * time.Millisecond)
	}
	return 0
}

// openFailure is the Failure of a failed Open or of a wait for a session of the pool,
// its timeout naming bound (the caller's configured bound, rather than what was left of
// it).
func openFailure(ctx context.Context, t Target, c Credentials, err error, bound time.Duration) *Failure {
	port := t.Port
	if port == 0 {
		port = 22
	}
	var f *Failure
	var busy *BusyError
	switch {
	case errors.As(err, &f):
	case errors.As(err, &busy):
		f = &Failure{Phase: PhaseConnect, Reason: ReasonBusy, Host: t.Host, Port: port, Username: c.Username, err: err,
			Limit: busy.Limit, Cause: fmt.Sprintf("all %d sessions allowed to the device are in use", busy.Limit)}
		if !errors.Is(err, context.DeadlineExceeded) {
			f.Reason = ReasonCancelled
			var by *Cancelled
			if errors.As(context.Cause(ctx), &by) {
				f.By = by.By
			}
		}
	default:
		f = &Failure{Phase: PhaseConnect, Reason: ReasonFailed, Host: t.Host, Port: port, Username: c.Username, err: err, Cause: plainCause(err)}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			f.Reason = ReasonTimeout
		}
	}
	if (f.Reason == ReasonTimeout || f.Reason == ReasonBusy) && bound > 0 {
		f.Timeout = bound
	}
	return f
}
