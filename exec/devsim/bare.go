package devsim

import (
	"bytes"
	"io"

	"golang.org/x/crypto/ssh"
)

// BareRun is the least a client can do to run commands on a simulated device, the
// baseline benchmarks measure a driver against: log in with a password, open a PTY
// shell, wait for prompt, send each command and read to prompt again, hang up. It
// trusts any host key, which is fine only for a simulator on 127.0.0.1.
func BareRun(addr, user, password, prompt string, commands ...string) error {
	cfg := &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{ssh.Password(password)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey()}
	client, err := ssh.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return err
	}
	if err := sess.RequestPty("vt100", 200, 511, ssh.TerminalModes{ssh.ECHO: 1}); err != nil {
		return err
	}
	in, _ := sess.StdinPipe()
	out, _ := sess.StdoutPipe()
	if err := sess.Shell(); err != nil {
		return err
	}
	if err := readToPrompt(out, []byte(prompt)); err != nil {
		return err
	}
	for _, c := range commands {
		io.WriteString(in, c+"\n")
		if err := readToPrompt(out, []byte(prompt)); err != nil {
			return err
		}
	}
	return nil
}

// readToPrompt reads until the output ends with prompt (trailing spaces aside).
func readToPrompt(r io.Reader, prompt []byte) error {
	var buf []byte
	chunk := make([]byte, 32<<10)
	for !bytes.HasSuffix(bytes.TrimRight(buf, " "), prompt) {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			return err
		}
	}
	return nil
}
