package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// execOut is the outcome of one command on an exec channel.
type execOut struct {
	output    string
	truncated bool
	status    int
	stderr    string // first line of standard error
}

// runExec runs a show command as one exec channel and a config command as
// one channel per line, stopping at the first nonzero exit status.
func (s *Session) runExec(ctx context.Context, typ string, lines []string, bound time.Duration) Result {
	if typ != TypeConfig {
		lines = []string{strings.Join(lines, "\n")}
	}
	var parts []string
	truncated := false
	for _, line := range lines {
		o, err := s.execOne(ctx, line)
		parts = append(parts, strings.TrimRight(o.output, "\n"))
		truncated = truncated || o.truncated
		if err != nil {
			return s.result(parts, truncated, SyntaxError{}, s.readError(ctx, err, bound))
		}
		if o.status != 0 {
			msg := fmt.Sprintf("exit status %d", o.status)
			if o.stderr != "" {
				msg += ": " + o.stderr
			}
			f := s.fail(PhaseCommand, ReasonExitStatus, errors.New(msg), o.stderr)
			f.Status = o.status
			return s.result(parts, truncated, SyntaxError{}, f)
		}
	}
	return s.result(parts, truncated, SyntaxError{}, nil)
}

// execOne runs one command; standard output and error are kept interleaved
// as they arrive. On ctx expiry the remote command is killed.
func (s *Session) execOne(ctx context.Context, command string) (execOut, error) {
	// Opening the channel waits for the device's answer with no deadline of
	// its own: ending ctx closes the connection, as a timeout does anyway. A
	// kept connection must answer sooner (watch), or its path is dead.
	open, cancel := ctx, context.CancelFunc(func() {})
	if s.watch > 0 {
		open, cancel = context.WithTimeout(ctx, s.watch)
		s.watch = 0
	}
	defer cancel()
	stop := context.AfterFunc(open, func() { s.client.Close() })
	sess, err := s.client.NewSession()
	if !stop() {
		if ctx.Err() == nil {
			return execOut{}, errSilent
		}
		return execOut{}, ctx.Err()
	}
	if err != nil {
		return execOut{}, fmt.Errorf("%w: %w", errDisconnected, err)
	}
	s.touched = true
	defer sess.Close()
	out := &lockedCapture{c: capture{limit: s.o.maxOutput() + rawSlack}, stream: s.stream}
	errLine := &firstLine{}
	sess.Stdout = pooledCopy{out}
	sess.Stderr = pooledCopy{io.MultiWriter(out, errLine)}
	done := make(chan error, 1)
	go func() { done <- sess.Run(command) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = sess.Signal(ssh.SIGKILL)
		sess.Close()
		select {
		case <-done:
		case <-time.After(200 * time.Millisecond):
		}
		return out.result(), ctx.Err()
	}
	o := out.result()
	o.stderr = errLine.String()
	var exitErr *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		o.status = exitErr.ExitStatus()
	case errors.As(err, &missing):
		return o, errDisconnected
	default:
		return o, fmt.Errorf("%w: %w", errDisconnected, err)
	}
	return o, nil
}

// lockedCapture is a capture shared with the SSH library's copy goroutines. Whole
// lines go to stream as they come, under the lock so that they keep their order.
type lockedCapture struct {
	mu     sync.Mutex
	c      capture
	stream func(string)
}

func (l *lockedCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.c.add(p)
	if l.stream != nil {
		if text := l.c.fresh(); len(text) > 0 {
			l.stream(normalize(string(text)))
		}
	}
	return len(p), nil
}

func (l *lockedCapture) result() execOut {
	l.mu.Lock()
	defer l.mu.Unlock()
	return execOut{output: string(l.c.kept), truncated: l.c.truncated}
}

// firstLine keeps the first non-blank line written to it, up to 512 bytes.
type firstLine struct {
	mu  sync.Mutex
	buf []byte
}

func (f *firstLine) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.buf) < 4096 {
		f.buf = append(f.buf, p[:min(len(p), 4096-len(f.buf))]...)
	}
	return len(p), nil
}

func (f *firstLine) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range strings.Split(string(f.buf), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l[:min(len(l), 512)]
		}
	}
	return ""
}

// shellQuote writes a variable's value for the POSIX shell that runs an exec
// channel's command, at byte offset at of the command text, so that the shell
// reads exactly the value: single-quoted where the text is unquoted, escaped
// inside double quotes, its own single quotes closed and reopened inside single
// quotes. An empty value stays empty (an optional variable left out).
func shellQuote(text string, at int, value string) string {
	if value == "" {
		return ""
	}
	single := strings.ReplaceAll(value, "'", `'\''`)
	switch shellQuoteAt(text[:at]) {
	case '\'':
		return single
	case '"':
		return doubleQuoted.Replace(value)
	}
	return "'" + single + "'"
}

// doubleQuoted escapes what a shell reads specially inside double quotes.
var doubleQuoted = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")

// shellQuoteAt returns the quote open at the end of prefix: ', " or 0.
func shellQuoteAt(prefix string) byte {
	var q byte
	for i := 0; i < len(prefix); i++ {
		switch c := prefix[i]; {
		case q == '\'':
			if c == '\'' {
				q = 0
			}
		case c == '\\':
			i++ // the next character is escaped (outside single quotes)
		case q == '"':
			if c == '"' {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		}
	}
	return q
}
