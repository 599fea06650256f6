package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Terminal geometry requested with the PTY. Paging is turned off by command
// as well; the width keeps long lines from being wrapped by the device.
const (
	ptyRows = 200
	ptyCols = 511
)

// nudgeAfter is how long to wait for a first prompt before sending a bare
// newline: some devices print nothing until they see a keystroke.
const nudgeAfter = 2 * time.Second

// rawSlack is read beyond MaxOutputBytes before cutting, so that cleaning
// (escapes, echo) still leaves a full MaxOutputBytes to show.
const rawSlack = 64 << 10

// startShell opens the PTY shell and brings the CLI to a known state.
func (s *Session) startShell(ctx context.Context) error {
	refused := func(step string, err error) error {
		return s.fail(PhaseLogin, ReasonShell, fmt.Errorf("exec: %s %s: %w", step, s.addr, err), plainCause(err))
	}
	sess, err := s.client.NewSession()
	if err != nil {
		return refused("open shell", err)
	}
	modes := ssh.TerminalModes{ssh.ECHO: 1, ssh.TTY_OP_ISPEED: 38400, ssh.TTY_OP_OSPEED: 38400}
	if err := sess.RequestPty("vt100", ptyRows, ptyCols, modes); err != nil {
		return refused("request pty", err)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		return refused("open shell", err)
	}
	s.sink = newSink()
	sess.Stdout, sess.Stderr = pooledCopy{s.sink}, pooledCopy{s.sink}
	if err := sess.Shell(); err != nil {
		return refused("start shell", err)
	}
	s.shell, s.stdin = sess, stdin
	go func() {
		_ = sess.Wait()
		s.sink.close()
	}()
	return s.prepare(ctx)
}

// prepare waits for the first prompt, enables and sets up the terminal.
func (s *Session) prepare(ctx context.Context) error {
	if err := s.firstPrompt(ctx); err != nil {
		return s.prepareFailure(ctx, PhaseLogin, fmt.Errorf("exec: wait for prompt %s: %w", s.addr, err))
	}
	if err := s.enable(ctx); err != nil {
		return s.prepareFailure(ctx, PhaseEnable, fmt.Errorf("exec: enable %s: %w", s.addr, err))
	}
	if err := s.setup(ctx); err != nil {
		return s.prepareFailure(ctx, PhaseLogin, fmt.Errorf("exec: setup %s: %w", s.addr, err))
	}
	s.inConfig = s.d.isConfig(s.prompt)
	return nil
}

// prepareFailure classifies a failure of the login's last steps.
func (s *Session) prepareFailure(ctx context.Context, phase Phase, err error) error {
	switch {
	case ctx.Err() != nil:
		return s.ended(ctx, phase, s.openBound, err)
	case errors.Is(err, ErrEnable):
		return s.fail(PhaseEnable, ReasonEnable, err, ErrEnable.Error())
	case errors.Is(err, errDisconnected):
		return s.fail(phase, ReasonClosed, err, errDisconnected.Error())
	}
	return s.fail(phase, ReasonFailed, err, plainCause(err))
}

// setup sends the paging-off and width commands back to back: a CLI reads typed-ahead
// lines in order, and waiting for a prompt between them would cost a device round trip
// each. It then reads until one prompt per command has come back. A device that refuses
// one of them still works (the pager is answered anyway), so only a lost session is fatal.
func (s *Session) setup(ctx context.Context) error {
	if len(s.d.setup) == 0 {
		return nil
	}
	s.drain()
	s.write(strings.Join(s.d.setup, s.d.newline()) + s.d.newline())
	prompt := strings.TrimSpace(s.prompt)
	var seen int
	for range len(s.d.setup) + 2 {
		r, err := s.readUntil(ctx, readOpts{needNewline: true, limit: rawSlack})
		if err != nil {
			return err
		}
		s.setPrompt(r.prompt)
		seen += s.promptsIn(normalize(string(r.raw)), prompt)
		if prompt == "" || seen >= len(s.d.setup) {
			return nil
		}
	}
	return nil
}

// promptsIn counts the prompts in text: each occurrence of the last prompt,
// or, where the prompt changes with every command (EXOS counts them), each
// line that opens with the host name.
func (s *Session) promptsIn(text, prompt string) int {
	n := strings.Count(text, prompt)
	if s.base == "" || n > 0 {
		return n
	}
	for _, line := range strings.Split(text, "\n") {
		if hasBase(line, s.base) {
			n++
		}
	}
	return n
}

// firstPrompt reads the banner up to the first prompt, nudging once.
func (s *Session) firstPrompt(ctx context.Context) error {
	short, cancel := context.WithTimeout(ctx, nudgeAfter)
	r, err := s.readUntil(short, readOpts{limit: rawSlack})
	cancel()
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		s.writeLine("")
		r, err = s.readUntil(ctx, readOpts{limit: rawSlack})
	}
	if err != nil {
		return err
	}
	s.setPrompt(r.prompt)
	return nil
}

func (s *Session) setPrompt(p string) {
	s.prompt = p
	if s.base == "" {
		s.base = s.d.baseOf(p)
	}
}

// enable raises an unprivileged session. The enable password (see
// Credentials.EnableMode) is typed at a no-echo prompt, after the login
// name where the device asks for one, and this exchange is never part of
// any Output.
func (s *Session) enable(ctx context.Context) error {
	d := s.d
	if d.enable == "" || d.isPriv(s.prompt) {
		return nil
	}
	s.drain()
	s.writeLine(d.enable)
	opts := readOpts{password: true, needNewline: true, limit: rawSlack}
	r, err := s.readUntil(ctx, opts)
	if err == nil && r.user {
		s.drain()
		s.writeLine(s.creds.Username)
		opts.needNewline = false
		r, err = s.readUntil(ctx, opts)
	}
	if err == nil && r.password {
		s.drain()
		s.writeLine(s.creds.enablePassword())
		opts.needNewline = false
		r, err = s.readUntil(ctx, opts)
	}
	if err != nil {
		return err
	}
	if r.password || r.user {
		// The device asks again after a wrong password; Open fails and closes.
		return ErrEnable
	}
	s.setPrompt(r.prompt)
	if !d.isPriv(s.prompt) {
		return ErrEnable
	}
	return nil
}

// send writes one line and reads until the next prompt, streaming what it reads to the
// running command's Output without the line's echo.
func (s *Session) send(ctx context.Context, line string) (readResult, error) {
	s.drain()
	s.writeLine(line)
	s.touched = true
	opts := readOpts{needNewline: true, limit: s.o.maxOutput() + rawSlack, silentAfter: s.watch, stream: s.withoutEcho(line)}
	s.watch = 0
	r, err := s.readUntil(ctx, opts)
	if err == nil {
		s.setPrompt(r.prompt)
	}
	return r, err
}

// withoutEcho wraps the running command's Output so that the first line, the device's
// echo of line, is left out; nil when nothing streams.
func (s *Session) withoutEcho(line string) func(string) {
	out := s.stream
	if out == nil {
		return nil
	}
	echoed := false
	return func(text string) {
		if !echoed {
			echoed = true
			first, rest, _ := strings.Cut(text, "\n")
			if !strings.HasSuffix(strings.TrimSpace(first), strings.TrimSpace(line)) {
				rest = text
			}
			if text = rest; text == "" {
				return
			}
		}
		out(text)
	}
}

// drain discards output nobody waited for (an extra prompt, a syslog line),
// so that the next read starts clean.
func (s *Session) drain() { s.sink.take() }
