package devsim

import (
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// term is a test client: a real SSH session with a PTY and a shell.
type term struct {
	t      *testing.T
	client *ssh.Client
	sess   *ssh.Session
	stdin  io.WriteCloser

	mu   sync.Mutex
	buf  strings.Builder
	read int // how far expect has consumed buf
	eof  bool
	wake chan struct{}
}

func startDevice(t *testing.T, cfg Config) *Device {
	t.Helper()
	d, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func clientConfig(d *Device, user, pw string) *ssh.ClientConfig {
	return &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{ssh.Password(pw)},
		HostKeyCallback: ssh.FixedHostKey(d.HostKey()),
		Timeout:         5 * time.Second,
	}
}

func dial(t *testing.T, d *Device) *ssh.Client {
	t.Helper()
	c, err := ssh.Dial("tcp", d.Addr(), clientConfig(d, d.cfg.Username, d.cfg.Password))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func dialNoCleanup(d *Device) (*ssh.Client, error) {
	return ssh.Dial("tcp", d.Addr(), clientConfig(d, d.cfg.Username, d.cfg.Password))
}

func shell(t *testing.T, d *Device) *term {
	t.Helper()
	return shellAs(t, d, d.cfg.Username, d.cfg.Password)
}

// shellAs opens a shell with the given login.
func shellAs(t *testing.T, d *Device, user, pw string) *term {
	t.Helper()
	c, err := ssh.Dial("tcp", d.Addr(), clientConfig(d, user, pw))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	sess, err := c.NewSession()
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	if err := sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{}); err != nil {
		t.Fatalf("pty: %v", err)
	}
	stdin, _ := sess.StdinPipe()
	stdout, _ := sess.StdoutPipe()
	if err := sess.Shell(); err != nil {
		t.Fatalf("shell: %v", err)
	}
	tm := &term{t: t, client: c, sess: sess, stdin: stdin, wake: make(chan struct{}, 1)}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := stdout.Read(b)
			tm.mu.Lock()
			tm.buf.Write(b[:n])
			tm.eof = err != nil
			tm.mu.Unlock()
			select {
			case tm.wake <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return tm
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.stdin.Write([]byte(s)); err != nil {
		tm.t.Fatalf("send %q: %v", s, err)
	}
}

// expect waits until the unread output matches re and returns the output
// up to the end of the match.
func (tm *term) expect(re string) string {
	tm.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(5 * time.Second)
	for {
		tm.mu.Lock()
		all := tm.buf.String()
		rest := all[tm.read:]
		eof := tm.eof
		if loc := rx.FindStringIndex(rest); loc != nil {
			tm.read += loc[1]
			tm.mu.Unlock()
			return rest[:loc[1]]
		}
		tm.mu.Unlock()
		if eof {
			tm.t.Fatalf("connection closed waiting for %q; got %q", re, rest)
		}
		select {
		case <-tm.wake:
		case <-deadline:
			tm.t.Fatalf("timeout waiting for %q; got %q", re, rest)
		}
	}
}

// cmd sends a line and returns everything up to the next prompt match.
func (tm *term) cmd(line, prompt string) string {
	tm.t.Helper()
	tm.send(line + "\r")
	return tm.expect(prompt)
}

// all returns everything received so far.
func (tm *term) all() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.buf.String()
}

// waitEOF waits for the server to close the session.
func (tm *term) waitEOF() bool {
	deadline := time.After(5 * time.Second)
	for {
		tm.mu.Lock()
		eof := tm.eof
		tm.mu.Unlock()
		if eof {
			return true
		}
		select {
		case <-tm.wake:
		case <-deadline:
			return false
		}
	}
}
