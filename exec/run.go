package exec

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Run runs one command. The context bounds it: on expiry the result is a
// failure "Timed out after N s" (N: the time ctx had left when Run began)
// with the partial output kept, and the
// session is left unusable (Close still tidies up). Run never returns an
// error; the outcome is in the Result, the output exactly as the device
// sent it.
func (s *Session) Run(ctx context.Context, cmd Command) Result {
	return s.runLabelled(ctx, cmd, timeoutLabel(ctx, 0))
}

// runLabelled is Run with the timeout message chosen by the caller:
// Execute names its whole timeout, not the part left for this command.
func (s *Session) runLabelled(ctx context.Context, cmd Command, label string) Result {
	start := time.Now()
	r := s.run(ctx, cmd, label)
	r.Duration = time.Since(start)
	s.log.Debug("exec: command done", "command_type", cmd.Type, "success", r.Success,
		"duration_ms", r.Duration.Milliseconds(), "output_bytes", len(r.Output), "truncated", r.Truncated)
	return r
}

func (s *Session) run(ctx context.Context, cmd Command, label string) Result {
	if s.broken != "" {
		return Result{ErrorMessage: "not run: " + s.broken}
	}
	if cmd.Type != "" && cmd.Type != TypeShow && cmd.Type != TypeConfig {
		return Result{ErrorMessage: fmt.Sprintf("unknown command type %q", cmd.Type)}
	}
	lines := commandLines(cmd.Text)
	if len(lines) == 0 {
		return Result{ErrorMessage: "empty command"}
	}
	switch {
	case s.d.exec:
		return s.runExec(ctx, cmd.Type, lines, label)
	case cmd.Type == TypeConfig:
		return s.runConfig(ctx, lines, label)
	default:
		return s.runShow(ctx, lines, label)
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
func (s *Session) runShow(ctx context.Context, lines []string, label string) Result {
	var parts []string
	truncated := false
	for _, line := range lines {
		r, err := s.send(ctx, line)
		out := s.d.cleanOutput(normalize(string(r.raw)), line, r.prompt)
		parts = append(parts, out)
		truncated = truncated || r.truncated
		if err != nil {
			return s.result(parts, truncated, SyntaxError{}, s.readError(err, label))
		}
		if se := s.d.detectSyntax(out); se.Detected {
			return s.result(parts, truncated, se, "")
		}
	}
	return s.result(parts, truncated, SyntaxError{}, "")
}

// readError records why a read failed, marks the session unusable and
// returns the message for the user.
func (s *Session) readError(err error, label string) string {
	var msg string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		msg = label
	case errors.Is(err, context.Canceled):
		msg = "Cancelled"
	case errors.Is(err, errDisconnected):
		msg = "Device closed the session"
		s.lost = true
	case errors.Is(err, errSilent):
		msg = "Device stopped answering"
		s.lost = true
	default:
		msg = "Session failed: " + err.Error()
	}
	s.broken = msg
	return msg
}

// result assembles a Result: output joined and capped, success when there
// is neither an error nor a syntax error.
func (s *Session) result(parts []string, truncated bool, se SyntaxError, errMsg string) Result {
	out, truncated := capOutput(strings.Join(parts, "\n"), s.o.maxOutput(), truncated)
	if se.Detected && errMsg == "" {
		errMsg = "Syntax error detected: " + se.Line
	}
	return Result{Output: out, Truncated: truncated, Syntax: se, ErrorMessage: errMsg, Success: errMsg == ""}
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

// timeoutLabel is the message for an expired deadline: N from the
// configured timeout, else from the time left on ctx when the work began.
func timeoutLabel(ctx context.Context, configured time.Duration) string {
	d := configured
	if d <= 0 {
		if dl, ok := ctx.Deadline(); ok {
			d = time.Until(dl).Round(100 * time.Millisecond)
		}
	}
	return "Timed out after " + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// openFailure is the user's message for a failed Open. Open's errors name
// the address and the step, never a credential, so the text is shown as is.
func openFailure(ctx context.Context, err error, label string) string {
	var busy *BusyError
	switch {
	case errors.As(err, &busy) && errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s waiting for a free session to the device (all %d allowed in use)", label, busy.Limit)
	case errors.As(err, &busy):
		return "Cancelled"
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return label
	}
	return err.Error()
}
