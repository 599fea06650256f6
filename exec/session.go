package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// Errors a caller may want to tell apart, matched with errors.Is.
var (
	ErrAuth          = errors.New("authentication failed")
	ErrEnable        = errors.New("enable refused by the device, check the enable password")
	ErrUnknownDriver = errors.New("unknown driver")
)

// openBound limits Open when the context carries no deadline.
const openBound = time.Minute

// Session is one SSH connection to a device, set up by its driver. Run its
// commands one at a time; a Session is not safe for concurrent use.
type Session struct {
	t     Target
	d     *driver
	o     Options
	creds Credentials
	addr  string
	log   *slog.Logger

	client *ssh.Client
	shell  *ssh.Session // nil for exec-channel drivers
	stdin  io.Writer
	sink   *sink

	openBound time.Duration // the time Open had, for a timeout's message

	prompt   string // last prompt seen
	base     string // host-name part of the prompt
	inConfig bool
	broken   *Failure     // why the session can no longer run commands
	stream   func(string) // the running command's Output, nil when none
	once     sync.Once

	// gone is closed when the connection ends, whoever ends it.
	gone chan struct{}
	// homePriv is the privilege the CLI had once set up: a kept session goes
	// back to it (and out of any config mode) before it is used again.
	homePriv bool
	// lost is set when a read or a channel found the device gone (not a
	// deadline); touched once a command may have reached the device; watch
	// bounds the wait for the first byte of the next read (a kept session
	// whose path died silently answers nothing).
	lost    bool
	touched bool
	watch   time.Duration
}

// Open connects to the device, logs in, checks its host key and prepares the
// CLI: PTY and shell, first prompt, enable, paging off, width. The context
// bounds all of it.
func Open(ctx context.Context, t Target, c Credentials, o Options) (*Session, error) {
	s := &Session{t: t, o: o, creds: c}
	s.addr = net.JoinHostPort(t.Host, strconv.Itoa(s.port()))
	name := t.Driver
	if name == "" {
		name = "generic"
	}
	d, err := driverFor(name, t)
	if err != nil {
		return nil, s.fail(PhaseConnect, ReasonInvalid, fmt.Errorf("exec: open %s: %w", t.Name, err), err.Error())
	}
	if !slices.Contains(EnableModes(), c.EnableMode) {
		err := fmt.Errorf("unknown enable mode %q", c.EnableMode)
		return nil, s.fail(PhaseEnable, ReasonInvalid, fmt.Errorf("exec: open %s: %w", t.Name, err), err.Error())
	}
	s.d = d
	s.log = o.logger().With("device_id", t.DeviceID, "device", t.Name, "driver", d.name)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, openBound)
		defer cancel()
	}
	if t.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.ConnectTimeout)
		defer cancel()
	}
	dl, _ := ctx.Deadline()
	s.openBound = time.Until(dl)
	start := time.Now()
	stop, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	if !d.exec {
		err = s.startShell(ctx)
	}
	// The deadline decides, not whether the closing func had started: a read that saw
	// the deadline can reach here before the context has started it, and the login's
	// last steps would then name their own phase one time in many.
	if !stop() || ctx.Err() != nil {
		s.client.Close()
		return nil, s.ended(ctx, PhaseLogin, s.openBound, fmt.Errorf("exec: open %s: %w", s.addr, ctx.Err()))
	}
	if err != nil {
		s.client.Close()
		return nil, err
	}
	s.gone = make(chan struct{})
	go func() {
		_ = s.client.Wait()
		close(s.gone)
	}()
	s.homePriv = d.exec || d.isPriv(s.prompt)
	s.log.Debug("exec: session open", "addr", s.addr, "duration_ms", time.Since(start).Milliseconds())
	return s, nil
}

// driverFor looks a driver up and applies the target's prompt override to
// a copy of it.
func driverFor(name string, t Target) (*driver, error) {
	d, ok := drivers[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownDriver, t.Driver)
	}
	if t.PromptPattern == "" || d.exec {
		return d, nil
	}
	re, err := regexp.Compile(t.PromptPattern)
	if err != nil {
		return nil, fmt.Errorf("prompt pattern: %w", err)
	}
	own := *d
	own.prompt = re
	return &own, nil
}

// dial opens the TCP connection and runs the SSH handshake. Until stop is
// called, ending ctx closes the connection: the handshake and the shell's
// channel requests wait for the device without a deadline of their own, and
// a device that goes silent must not hold Open past its context. stop
// reports false when ctx ended first (the connection is then closed).
func (s *Session) dial(ctx context.Context) (stop func() bool, err error) {
	cfg, err := s.clientConfig(ctx)
	if err != nil {
		return nil, err
	}
	// The host key is checked after the key exchange, before the login: whether the
	// check ran tells a handshake that failed connecting from one that failed logging in.
	var keyed atomic.Bool
	check := cfg.HostKeyCallback
	cfg.HostKeyCallback = func(host string, remote net.Addr, key ssh.PublicKey) error {
		keyed.Store(true)
		return check(host, remote, key)
	}
	var nd net.Dialer
	conn, err := nd.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		wrapped := fmt.Errorf("exec: connect %s: %w", s.addr, err)
		if ctx.Err() != nil {
			return nil, s.ended(ctx, PhaseConnect, s.openBound, wrapped)
		}
		return nil, s.dialFailure(err, wrapped)
	}
	stop = context.AfterFunc(ctx, func() { conn.Close() })
	cc, chans, reqs, err := ssh.NewClientConn(conn, s.addr, cfg)
	if err != nil {
		conn.Close()
		phase := PhaseConnect
		if keyed.Load() {
			phase = PhaseLogin
		}
		if !stop() {
			return nil, s.ended(ctx, phase, s.openBound, fmt.Errorf("exec: login %s: %w", s.addr, ctx.Err()))
		}
		return nil, s.handshakeError(err, phase)
	}
	s.client = ssh.NewClient(cc, chans, reqs)
	return stop, nil
}

// handshakeError turns the SSH library's error into ours: a host key
// problem or a refused login read plainly, without the library's prefix.
func (s *Session) handshakeError(err error, phase Phase) error {
	var hk *HostKeyError
	if errors.As(err, &hk) {
		return s.fail(PhaseConnect, ReasonHostKey, fmt.Errorf("exec: connect %s: %w", s.addr, hk), hk.Error())
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "unable to authenticate"):
		return s.fail(PhaseLogin, ReasonAuth, fmt.Errorf("exec: login %s: %w", s.addr, ErrAuth), ErrAuth.Error())
	case strings.Contains(msg, "no common algorithm"):
		return s.fail(PhaseConnect, ReasonNegotiation, fmt.Errorf("exec: connect %s: %w", s.addr, err), plainCause(err))
	case errors.Is(err, io.EOF) || strings.Contains(msg, "connection reset"):
		return s.fail(phase, ReasonClosed, fmt.Errorf("exec: login %s: %w", s.addr, err), plainCause(err))
	}
	return s.fail(phase, ReasonFailed, fmt.Errorf("exec: login %s: %w", s.addr, err), plainCause(err))
}

// clientConfig assembles authentication, host key checking and algorithms.
func (s *Session) clientConfig(ctx context.Context) (*ssh.ClientConfig, error) {
	check, hostAlgos, err := hostKeyCheck(ctx, s.t, s.o)
	if err != nil {
		return nil, s.fail(PhaseConnect, ReasonFailed, fmt.Errorf("exec: connect %s: %w", s.addr, err), err.Error())
	}
	auth, err := authMethods(s.creds, s.d.loginAnswers)
	if err != nil {
		return nil, s.fail(PhaseLogin, ReasonInvalid, fmt.Errorf("exec: connect %s: %w", s.addr, err), "the credential set's "+err.Error())
	}
	user := s.creds.Username
	if s.d.userSuffix != "" && !strings.Contains(user, "+") {
		user += s.d.userSuffix
	}
	cfg := &ssh.ClientConfig{
		User:              user,
		Auth:              auth,
		HostKeyCallback:   check,
		HostKeyAlgorithms: hostAlgos,
		ClientVersion:     "SSH-2.0-FieldKit",
	}
	if s.t.LegacyAlgorithms {
		addLegacy(cfg)
	}
	return cfg, nil
}

// authMethods offers the private key first, then the password both as
// "password" and as the answer to every keyboard-interactive question the
// driver has no other answer for.
func authMethods(c Credentials, answers []question) ([]ssh.AuthMethod, error) {
	var methods []ssh.AuthMethod
	if len(c.PrivateKey) > 0 {
		signer, err := ssh.ParsePrivateKey(c.PrivateKey)
		if err != nil {
			// The parser's message never holds key material, but keep it
			// short: the key may simply be passphrase-protected.
			return nil, errors.New("private key unreadable (unencrypted PEM or OpenSSH format expected)")
		}
		methods = append(methods, ssh.PublicKeys(signer))
	}
	if c.Password != "" {
		pw := c.Password
		methods = append(methods, ssh.Password(pw),
			ssh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
				out := make([]string, len(questions))
				for i, q := range questions {
					out[i] = pw
					for _, a := range answers {
						if a.re.MatchString(q) {
							out[i] = a.answer
						}
					}
				}
				return out, nil
			}))
	}
	return methods, nil
}

// addLegacy appends the algorithms old IOS and Junos images still need:
// SHA-1 key exchanges, CBC ciphers, SHA-1 MACs and ssh-rsa / ssh-dss keys.
func addLegacy(cfg *ssh.ClientConfig) {
	sup, ins := ssh.SupportedAlgorithms(), ssh.InsecureAlgorithms()
	cfg.KeyExchanges = append(sup.KeyExchanges, ins.KeyExchanges...)
	cfg.Ciphers = append(sup.Ciphers, ins.Ciphers...)
	cfg.MACs = append(sup.MACs, ins.MACs...)
	if cfg.HostKeyAlgorithms == nil {
		cfg.HostKeyAlgorithms = append(sup.HostKeys, ins.HostKeys...)
	}
}

// Close leaves config mode (discarding an uncommitted change), logs out and
// closes the connection, within two seconds at most.
func (s *Session) Close() error { return s.closeWithin(2 * time.Second) }

// closeWithin is Close with a bound on how long to wait for the device to
// hang up by itself after the logout command.
func (s *Session) closeWithin(wait time.Duration) error {
	var err error
	s.once.Do(func() {
		if s.shell != nil {
			s.logout(wait)
		}
		err = s.client.Close()
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
	})
	return err
}

// logout sends the abort and logout lines blind (the session may be stuck)
// and waits a little for the device to close the channel.
func (s *Session) logout(wait time.Duration) {
	var lines []string
	if s.inConfig {
		lines = append(lines, s.d.configAbort...)
	}
	if s.d.logout != "" {
		lines = append(lines, s.d.logout)
	}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for _, l := range lines {
			s.writeLine(l)
		}
	}()
	timer := time.NewTimer(max(min(wait, 200*time.Millisecond), 50*time.Millisecond))
	defer timer.Stop()
	select {
	case <-sent:
	case <-timer.C:
		return
	}
	// Out of config mode there is nothing to protect: the device frees the line when the
	// connection closes, and waiting for it to answer "exit" costs a round trip. In config
	// mode wait, so the abort lines are read before the connection goes.
	if s.broken != nil || wait <= 0 || !s.inConfig {
		return
	}
	select {
	case <-s.sink.done:
	case <-time.After(wait):
	}
}
