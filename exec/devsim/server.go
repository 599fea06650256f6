package devsim

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

func (d *Device) acceptLoop() {
	defer d.wg.Done()
	for {
		nc, err := d.ln.Accept()
		if err != nil {
			return
		}
		d.mu.Lock()
		if d.ctx.Err() != nil {
			d.mu.Unlock()
			nc.Close()
			return
		}
		d.conns[nc] = struct{}{}
		d.mu.Unlock()
		d.wg.Add(1)
		go d.serveConn(nc)
	}
}

// serverConfig is built per connection so that RotateHostKey takes effect
// for the next client.
func (d *Device) serverConfig() *ssh.ServerConfig {
	d.mu.Lock()
	signer := d.signer
	d.mu.Unlock()
	sc := &ssh.ServerConfig{
		ServerVersion: d.v.serverVersion,
		BannerCallback: func(ssh.ConnMetadata) string {
			return d.cfg.Banner
		},
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			return nil, d.checkPassword(c.User(), string(pw))
		},
		// A login is counted here, before the server tells the client it
		// succeeded: counted after NewServerConn returns, a client could
		// log in, hang up and read Logins before the count moved.
		AuthLogCallback: func(c ssh.ConnMetadata, _ string, err error) {
			if err == nil {
				d.mu.Lock()
				d.logins++
				d.loginNames = append(d.loginNames, c.User())
				d.mu.Unlock()
			}
		},
	}
	if d.cfg.AcceptQuestion != "" {
		// A banner to accept comes with keyboard-interactive only.
		sc.PasswordCallback = nil
	}
	if len(d.cfg.AuthorizedKeys) > 0 {
		sc.PublicKeyCallback = d.checkKey
	}
	if d.cfg.KeyboardInteractive {
		sc.KeyboardInteractiveCallback = func(c ssh.ConnMetadata, ch ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			questions, echos := []string{"Password: "}, []bool{false}
			if q := d.cfg.AcceptQuestion; q != "" {
				questions, echos = []string{q, "Password: "}, []bool{true, false}
			}
			ans, err := ch("", "", questions, echos)
			if err != nil {
				return nil, err
			}
			if len(ans) != len(questions) {
				return nil, fmt.Errorf("devsim: want %d answers", len(questions))
			}
			if len(ans) == 2 && ans[0] != "yes" {
				return nil, fmt.Errorf("devsim: banner not accepted")
			}
			return nil, d.checkPassword(c.User(), ans[len(ans)-1])
		}
	}
	sc.AddHostKey(signer)
	return sc
}

// loginName is the user of a login name: RouterOS reads console options
// after a "+".
func (d *Device) loginName(user string) string {
	if d.v.loginOptions {
		user, _, _ = strings.Cut(user, "+")
	}
	return user
}

func (d *Device) checkPassword(user, pw string) error {
	if d.loginName(user) == d.cfg.Username && pw == d.cfg.Password {
		return nil
	}
	return fmt.Errorf("devsim: permission denied for %q", user)
}

func (d *Device) checkKey(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	if d.loginName(c.User()) == d.cfg.Username {
		for _, k := range d.cfg.AuthorizedKeys {
			if bytes.Equal(k.Marshal(), key.Marshal()) {
				return nil, nil
			}
		}
	}
	return nil, fmt.Errorf("devsim: key not authorized for %q", c.User())
}

func (d *Device) serveConn(nc net.Conn) {
	defer d.wg.Done()
	defer func() {
		nc.Close()
		d.mu.Lock()
		delete(d.conns, nc)
		d.mu.Unlock()
	}()
	sconn, chans, reqs, err := ssh.NewServerConn(nc, d.serverConfig())
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(d.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ssh.DiscardRequests(reqs)
	}()
	for nch := range chans {
		if d.isFrozen(nc) {
			continue // never answered, as on a dead path
		}
		if nch.ChannelType() != "session" {
			nch.Reject(ssh.UnknownChannelType, "only session channels are supported")
			continue
		}
		ch, creqs, err := nch.Accept()
		if err != nil {
			continue
		}
		// The session's context ends with its channel: creqs is closed
		// when the client closes the channel or the connection ends, and a
		// command outlives the end of its input until then.
		sctx, scancel := context.WithCancel(ctx)
		s := &session{d: d, conn: nc, ch: ch, user: sconn.User(), ctx: sctx, width: 80, height: 24}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer scancel()
			s.handleRequests(creqs, &wg)
		}()
	}
	// chans closes when the connection is gone: stop the sessions' sleeps.
	cancel()
	wg.Wait()
}

// handleRequests serves one session channel's requests; "shell" and "exec"
// start the program that owns the channel from then on. It returns when the
// channel is closed.
func (s *session) handleRequests(reqs <-chan *ssh.Request, wg *sync.WaitGroup) {
	started := false
	for req := range reqs {
		ok := false
		var program func()
		switch req.Type {
		case "pty-req":
			s.parsePty(req.Payload)
			ok = true
		case "window-change":
			s.parseWindow(req.Payload)
			ok = true
		case "env":
			ok = true
		case "shell":
			if !started {
				program = s.runShell
			}
		case "exec":
			var p struct{ Command string }
			if !started && ssh.Unmarshal(req.Payload, &p) == nil {
				program = func() { s.runExec(p.Command) }
			}
		}
		if program != nil {
			ok, started = true, true
		}
		// The reply goes out before the program starts: a command that
		// ends at once ("false") would otherwise close the channel before
		// the reply, and the client's Run fails with EOF.
		if req.WantReply {
			req.Reply(ok, nil)
		}
		if program != nil {
			wg.Add(1)
			go func() { defer wg.Done(); program() }()
		}
	}
	if !started {
		s.ch.Close()
	}
}

func (s *session) parsePty(p []byte) {
	var r struct {
		Term             string
		Cols, Rows, W, H uint32
		Modes            string
	}
	if ssh.Unmarshal(p, &r) != nil {
		return
	}
	s.mu.Lock()
	s.pty = true
	s.width, s.height = int(r.Cols), int(r.Rows)
	s.mu.Unlock()
}

func (s *session) parseWindow(p []byte) {
	if len(p) < 8 {
		return
	}
	s.mu.Lock()
	s.width = int(binary.BigEndian.Uint32(p))
	s.height = int(binary.BigEndian.Uint32(p[4:]))
	s.mu.Unlock()
}
