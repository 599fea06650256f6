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
	label      string
	transcript strings.Builder
	truncated  bool
}

// runConfig enters config mode, sends each line, commits where the platform
// needs it and leaves config mode. The first rejected line stops the rest;
// the change is then aborted (IOS-XR, Junos) or config mode is just left
// (IOS, NX-OS, EOS apply each line at once).
func (s *Session) runConfig(ctx context.Context, lines []string, label string) Result {
	c := &configRun{s: s, ctx: ctx, label: label}
	out, err := c.step(s.d.configEnter)
	if err != nil {
		return c.result(SyntaxError{}, s.readError(err, label))
	}
	if se := s.d.detectSyntax(out); se.Detected {
		return c.result(se, "")
	}
	if s.d.configPrompt != nil && !s.d.configPrompt.MatchString(s.prompt) {
		return c.result(SyntaxError{}, "Could not enter configuration mode")
	}
	s.inConfig = true
	steps := append(append([]string{}, lines...), s.d.configCommit...)
	for _, line := range steps {
		out, err := c.step(line)
		if err != nil {
			return c.result(SyntaxError{}, s.readError(err, label))
		}
		if se := s.d.detectSyntax(out); se.Detected {
			se.Input = line
			return c.abort(se)
		}
	}
	for _, line := range s.d.configExit {
		if _, err := c.step(line); err != nil {
			return c.result(SyntaxError{}, s.readError(err, label))
		}
	}
	s.inConfig = s.d.configPrompt != nil && s.d.configPrompt.MatchString(s.prompt)
	return c.result(SyntaxError{}, "")
}

// step sends one line, adds the exchange to the transcript and returns the
// device's answer without echo and prompt.
func (c *configRun) step(line string) (string, error) {
	r, err := c.s.send(c.ctx, line)
	text := normalize(string(r.raw))
	c.transcript.WriteString(text)
	c.truncated = c.truncated || r.truncated
	return c.s.d.cleanOutput(text, line), err
}

// abort discards the change and leaves config mode after a rejected line.
func (c *configRun) abort(se SyntaxError) Result {
	ctx, cancel := context.WithTimeout(c.ctx, abortBound)
	defer cancel()
	c.ctx = ctx
	for _, line := range c.s.d.configAbort {
		if _, err := c.step(line); err != nil {
			c.s.readError(err, c.label)
			break
		}
	}
	if c.s.broken == "" {
		c.s.inConfig = c.s.d.configPrompt != nil && c.s.d.configPrompt.MatchString(c.s.prompt)
	}
	return c.result(se, "")
}

func (c *configRun) result(se SyntaxError, errMsg string) Result {
	out := c.s.d.cleanOutput(c.transcript.String(), c.s.d.configEnter)
	return c.s.result([]string{out}, c.truncated, se, errMsg)
}
