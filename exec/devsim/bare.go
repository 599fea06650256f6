package devsim

import (
	"bytes"
	"io"

	"golang.org/x/crypto/ssh"
)

// BareRun is the least a client can do to run commands on a simulated device, the
// baseline benchmarks measure a driver against: log in with a password, open a PTY
// shell, wait for prompt, send each command and read to prompt again, hang up. It
// trusts any host key, which is fine only for a device on 127.0.0.1.
func BareRun(addr, user, password, prompt string, commands ...string) error {
	b, err := OpenBare(addr, user, password, prompt)
	if err != nil {
		return err
	}
	defer b.Close()
	for _, c := range commands {
		if err := b.Run(c); err != nil {
			return err
		}
	}
	return nil
}

// BareSession is BareRun kept open: the baseline of a command run in a session that is
// already logged in.
type BareSession struct {
	client *ssh.Client
	in     io.Writer
	out    io.Reader
	prompt []byte
	// buf is kept across commands, as a client that runs many would keep it: a fresh
	// buffer per command made the baseline's garbage a share of what a benchmark
	// charges to the process it runs in.
	buf []byte
}

// OpenBare logs in, opens the PTY shell and waits for the prompt.
func OpenBare(addr, user, password, prompt string) (*BareSession, error) {
	cfg := &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{ssh.Password(password)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey()}
	client, err := ssh.Dial("tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	b := &BareSession{client: client, prompt: []byte(prompt)}
	if err := b.shell(); err != nil {
		client.Close()
		return nil, err
	}
	return b, nil
}

func (b *BareSession) shell() error {
	sess, err := b.client.NewSession()
	if err != nil {
		return err
	}
	if err := sess.RequestPty("vt100", 200, 511, ssh.TerminalModes{ssh.ECHO: 1}); err != nil {
		return err
	}
	b.in, _ = sess.StdinPipe()
	b.out, _ = sess.StdoutPipe()
	if err := sess.Shell(); err != nil {
		return err
	}
	return b.readToPrompt()
}

// Run sends one command and reads to the prompt.
func (b *BareSession) Run(command string) error {
	if _, err := io.WriteString(b.in, command+"\n"); err != nil {
		return err
	}
	return b.readToPrompt()
}

// Output is what the last Run read: the echo, the command's output and the prompt. It
// is valid until the next Run.
func (b *BareSession) Output() []byte { return b.buf }

// Close hangs up.
func (b *BareSession) Close() error { return b.client.Close() }

// readToPrompt reads until the output ends with the prompt (trailing spaces aside).
func (b *BareSession) readToPrompt() error {
	if b.buf == nil {
		b.buf = make([]byte, 0, 32<<10)
	}
	buf := b.buf[:0]
	defer func() { b.buf = buf }()
	for !bytes.HasSuffix(bytes.TrimRight(buf, " "), b.prompt) {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := b.out.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return err
		}
	}
	return nil
}
