package exec

import (
	"context"
	"strings"
	"time"
)

// abortBound limits the clean-up after a rejected configuration line when
// the command's own deadline is further away.
const abortBound = 10 * time.Second

// configRun is one configuration change in progress: the transcript of the
// whole exchange is its output.
type configRun struct {
	s          *Session
	ctx        context.Context
	bound      time.Duration // the time the command had, for a timeout's message
	transcript []byte        // everything the device sent, normalized once at the end
	truncated  bool
}

// runConfig enters config mode, sends each line, commits where the platform
// needs it and leaves config mode. The first rejected line stops the rest;
// the change is then aborted (IOS-XR, Junos, PAN-OS) or config mode is just
// left (IOS, NX-OS, EOS apply each line at once). Platforms without a config
// mode (RouterOS, EXOS) run the lines at their prompt.
func (s *Session) runConfig(ctx context.Context, lines []string, bound time.Duration) Result {
	c := &configRun{s: s, ctx: ctx, bound: bound}
	if s.d.configEnter != "" {
		out, err := c.step(s.d.configEnter)
		if err != nil {
			return c.result(SyntaxError{}, s.readError(ctx, err, bound))
		}
		if se := s.d.detectSyntax(out); se.Detected {
			return c.result(se, nil)
		}
		if s.d.configMark != nil && !s.d.isConfig(s.prompt) {
			return c.result(SyntaxError{}, s.failText(PhaseCommand, ReasonFailed, "Could not enter configuration mode", "the device did not enter configuration mode"))
		}
	}
	s.inConfig = s.d.isConfig(s.prompt)
	for _, line := range lines {
		if se, msg, ok := c.checked(line); !ok {
			return c.failed(se, msg)
		}
	}
	if s.d.commitWhen == nil || s.d.commitWhen.MatchString(strings.TrimSpace(s.prompt)) {
		for _, line := range s.d.configCommit {
			if se, msg, ok := c.checked(line); !ok {
				return c.failed(se, msg)
			}
		}
	}
	if err := c.leave(s.d.configExit); err != nil {
		return c.result(SyntaxError{}, s.readError(ctx, err, bound))
	}
	return c.result(SyntaxError{}, nil)
}

// checked sends one line and reports a refusal (a syntax error) or a lost
// session (a failure); ok is true when neither happened.
func (c *configRun) checked(line string) (se SyntaxError, f *Failure, ok bool) {
	out, err := c.step(line)
	if err != nil {
		return SyntaxError{}, c.s.readError(c.ctx, err, c.bound), false
	}
	if se := c.s.d.detectSyntax(out); se.Detected {
		se.Input = line
		return se, nil, false
	}
	return SyntaxError{}, nil, true
}

// failed ends a change after a refused line (discarding it) or a lost
// session.
func (c *configRun) failed(se SyntaxError, f *Failure) Result {
	if f != nil {
		return c.result(SyntaxError{}, f)
	}
	return c.abort(se)
}

// leave sends lines while the prompt is still a configuration prompt, so
// that a user's own "end" (or FortiOS's nesting) needs no extra line.
func (c *configRun) leave(lines []string) error {
	for _, line := range lines {
		if !c.s.d.isConfig(c.s.prompt) {
			break
		}
		if _, err := c.step(line); err != nil {
			return err
		}
	}
	c.s.inConfig = c.s.d.isConfig(c.s.prompt)
	return nil
}

// step sends one line, adds the exchange to the transcript and returns the
// device's answer without echo and prompt.
func (c *configRun) step(line string) (string, error) {
	r, err := c.s.send(c.ctx, line)
	c.transcript = append(c.transcript, r.raw...)
	text := normalize(string(r.raw))
	c.truncated = c.truncated || r.truncated
	return c.s.d.cleanOutput(text, line, r.prompt), err
}

// abort discards the change and leaves config mode after a rejected line.
func (c *configRun) abort(se SyntaxError) Result {
	ctx, cancel := context.WithTimeout(c.ctx, abortBound)
	defer cancel()
	c.ctx = ctx
	if err := c.leave(c.s.d.configAbort); err != nil {
		c.s.readError(ctx, err, c.bound)
	}
	return c.result(se, nil)
}

func (c *configRun) result(se SyntaxError, f *Failure) Result {
	// Where no command enters config mode, the first line's echo stays:
	// it is part of the change.
	out := c.s.d.cleanOutput(normalize(string(c.transcript)), c.s.d.configEnter, c.s.prompt)
	return c.s.result([]string{out}, c.truncated, se, f)
}
