// Package devsim is an in-process SSH device simulator for tests, benchmarks
// and the demo mode. Each Device listens on 127.0.0.1 with a real SSH server
// (golang.org/x/crypto/ssh) and answers like a network device of the chosen
// vendor: prompts, enable, paging, show output in the vendor's real format,
// config modes and the vendor's exact error strings. Faults (slow, endless or
// silent output, disconnects) and latency can be injected at any time.
//
// Devices are described as data (see vendors.go); show renderers live in one
// file per vendor family.
package devsim

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Interface is one device interface as the simulator shows and configures it.
type Interface struct {
	Name        string // full name, e.g. "GigabitEthernet1/0/1", "ge-0/0/0", "eth0"
	Description string
	Enabled     bool
	Mode        string // "access", "trunk" or "" (routed)
	VLAN        int    // access VLAN
	IP          string // "10.0.0.1/24" or ""
	MAC         string // "0050.56a1.0001"; generated when empty
}

// VLAN is one VLAN in the device's VLAN database.
type VLAN struct {
	ID   int
	Name string
}

// Fault is a misbehaviour the device injects into its sessions.
type Fault int

// The faults a device can inject.
const (
	FaultNone          Fault = iota
	FaultSlowOutput          // output trickles a line every 200ms
	FaultEndlessOutput       // a show command never stops producing output
	FaultSilence             // accepts the command, never answers or prompts
	FaultDisconnect          // closes the connection half-way through the output
	// FaultTruncate prints only the first half of a show command's lines, then the
	// prompt, as a device does whose output was cut (a full buffer, a console
	// session that stole the terminal): the read looks whole but is not.
	FaultTruncate
)

// Config describes a simulated device. Zero values take realistic defaults.
type Config struct {
	// Vendor is the driver name: "cisco_ios", "cisco_nxos", "cisco_iosxr",
	// "arista_eos", "juniper_junos", "cisco_asa", "hp_procurve",
	// "aruba_aoscx", "dell_os10", "brocade_fastiron", "huawei_vrp",
	// "extreme_exos", "fortinet", "paloalto_panos", "mikrotik_routeros",
	// "linux" or "generic" (the default).
	Vendor   string
	Hostname string // default per vendor, e.g. "sw1"
	// Username and Password are the only accepted credentials; both empty
	// means "admin"/"admin".
	Username, Password string
	// EnableSecret, when set, lands logins in unprivileged mode (">") and
	// makes "enable" ask "Password: " (platforms with an enable step).
	EnableSecret string
	// EnableEmpty lands logins in unprivileged mode with no enable secret
	// set: "enable" still asks "Password: " and takes an empty line.
	EnableEmpty bool
	// PostLoginBanner makes a fortinet device show a banner after login
	// and wait for "a" to accept it before the first prompt.
	PostLoginBanner bool
	// TwoStage makes a huawei_vrp device configure the VRP8 way: system
	// view edits a candidate that "commit" applies, and the prompt reads
	// "[~host]", or "[*host]" while changes are pending.
	TwoStage bool
	// PromptOnLastLine leaves out the newline after a command's last line
	// of output, so that the prompt follows it on the same line, as some
	// CLIs print it after a short reply ("Pagination disabled.leaf1#").
	PromptOnLastLine bool
	// AuthorizedKeys are accepted for public-key authentication.
	AuthorizedKeys []ssh.PublicKey
	// KeyboardInteractive also offers keyboard-interactive authentication,
	// asking "Password: " and expecting Password.
	KeyboardInteractive bool
	// AcceptQuestion, with KeyboardInteractive, is asked before the
	// password and must be answered "yes": a login banner to accept, as
	// PAN-OS can require. Password authentication is then not offered.
	AcceptQuestion string
	// Banner is the pre-authentication banner, also printed as MOTD after
	// login. Empty means a realistic per-vendor default.
	Banner string
	// Interfaces and VLANs seed the device; empty means 4 interfaces and 3
	// VLANs named in the vendor's style.
	Interfaces []Interface
	VLANs      []VLAN
	// Latency is slept before every response (login, each command's output
	// and prompt, each pager page). Echo is immediate.
	Latency time.Duration
	Fault   Fault
	// HostKey is the SSH host key; nil generates an ed25519 key.
	HostKey ssh.Signer
	// Clock is the device's clock, read for the times show output carries
	// (the line IOS-XR prints above every show, "show clock", NX-OS
	// "!Time:"); nil means time.Now. A fixed clock makes outputs comparable.
	Clock func() time.Time
}

// Device is a running simulated device. All methods are safe for
// concurrent use.
type Device struct {
	v     *vendor
	cfg   Config // immutable after Start
	ln    net.Listener
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	close sync.Once

	mu       sync.Mutex
	signer   ssh.Signer
	fault    Fault
	latency  time.Duration
	received []byte
	commands []string
	logins   int
	conns    map[net.Conn]struct{}
	st       *state // the running (committed) configuration
	unsaved  bool   // EXOS: the running configuration differs from the saved one
	pending  *state // PAN-OS: a candidate configuration kept across sessions
	// loginNames are the names of successful logins, as sent.
	loginNames []string
	// frozen connections read and drop what they are sent (Freeze); hangUp is the
	// command line after which a session hangs up (HangUpAfter).
	frozen map[net.Conn]bool
	hangUp string
}

// Start validates cfg, fills in defaults and starts listening on a random
// port of 127.0.0.1.
func Start(cfg Config) (*Device, error) {
	if cfg.Vendor == "" {
		cfg.Vendor = "generic"
	}
	v, ok := vendors[cfg.Vendor]
	if !ok {
		return nil, fmt.Errorf("devsim: unknown vendor %q", cfg.Vendor)
	}
	if cfg.Username == "" && cfg.Password == "" {
		cfg.Username, cfg.Password = "admin", "admin"
	}
	if cfg.Hostname == "" {
		cfg.Hostname = v.hostname
	}
	if cfg.Banner == "" {
		cfg.Banner = v.banner
	}
	signer := cfg.HostKey
	if signer == nil {
		var err error
		if signer, err = newSigner(); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("devsim: listen: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	d := &Device{
		v: v, cfg: cfg, ln: ln, ctx: ctx, stop: stop,
		signer: signer, fault: cfg.Fault, latency: cfg.Latency,
		conns: map[net.Conn]struct{}{},
		st:    newState(v, cfg),
	}
	d.wg.Add(1)
	go d.acceptLoop()
	return d, nil
}

func newSigner() (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("devsim: generate host key: %w", err)
	}
	return ssh.NewSignerFromKey(priv)
}

// Addr returns the listening address, "127.0.0.1:port".
func (d *Device) Addr() string { return d.ln.Addr().String() }

// Port returns the listening TCP port.
func (d *Device) Port() int { return d.ln.Addr().(*net.TCPAddr).Port }

// HostKey returns the public host key new connections are offered.
func (d *Device) HostKey() ssh.PublicKey {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.signer.PublicKey()
}

// RotateHostKey replaces the host key with a fresh ed25519 key for every
// connection from now on, to test "host key changed" handling.
func (d *Device) RotateHostKey() error {
	s, err := newSigner()
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.signer = s
	d.mu.Unlock()
	return nil
}

// SetFault changes the injected fault; it applies to the next command.
func (d *Device) SetFault(f Fault) {
	d.mu.Lock()
	d.fault = f
	d.mu.Unlock()
}

// Connections returns the number of client connections open now.
func (d *Device) Connections() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// Drop closes every open connection, as a device that reloads or logs out its idle vty
// lines does; it keeps listening.
func (d *Device) Drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.conns {
		c.Close()
	}
}

// Freeze makes every open connection stop answering without closing, as when a NAT or
// firewall on the path forgets an idle connection: what the client sends there is read
// and dropped (it never reaches the CLI and is not recorded), new channels are never
// answered. Connections opened later work.
func (d *Device) Freeze() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.frozen == nil {
		d.frozen = map[net.Conn]bool{}
	}
	for c := range d.conns {
		d.frozen[c] = true
	}
}

func (d *Device) isFrozen(c net.Conn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.frozen[c]
}

// HangUpAfter makes the next session that receives the command line run it and then
// close its connection before answering: a device that dies with a change applied and
// the client left not knowing. It applies once.
func (d *Device) HangUpAfter(line string) {
	d.mu.Lock()
	d.hangUp = line
	d.mu.Unlock()
}

// takeHangUp reports whether line is the one to hang up after, and forgets it.
func (d *Device) takeHangUp(line string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hangUp == "" || strings.TrimSpace(line) != d.hangUp {
		return false
	}
	d.hangUp = ""
	return true
}

// SetLatency changes the delay before every response.
func (d *Device) SetLatency(l time.Duration) {
	d.mu.Lock()
	d.latency = l
	d.mu.Unlock()
}

// Received returns a copy of every byte any client sent on session
// channels: shell input as typed, and each exec request's command followed
// by "\n".
func (d *Device) Received() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]byte(nil), d.received...)
}

// Commands returns each command line received (after line editing), in
// order, across all sessions. Secrets typed at a "Password:" prompt are not
// command lines and are not included.
func (d *Device) Commands() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.commands...)
}

// RunningConfig returns the running (committed) configuration in the
// vendor's own format, as "show running-config" prints it.
func (d *Device) RunningConfig() string {
	d.mu.Lock()
	st := d.st.clone()
	d.mu.Unlock()
	return joinLines(d.v.runningConfig(st))
}

// SetDescription changes an interface's description as a person at the console
// would: a change made outside any SSH session (of FieldKit's or anyone's). It
// reports whether the interface exists.
func (d *Device) SetDescription(iface, description string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.st.ifaces {
		if d.st.ifaces[i].Name == iface {
			d.st.ifaces[i].Description = description
			return true
		}
	}
	return false
}

// LoginNames returns the login name of each successful authentication, as
// the client sent it (RouterOS options included).
func (d *Device) LoginNames() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.loginNames...)
}

// Logins returns the number of successful authentications.
func (d *Device) Logins() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.logins
}

// Conns is the number of SSH connections open now: zero once every client hung up.
func (d *Device) Conns() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// Close stops the listener, closes every connection and waits for all of
// the device's goroutines to end.
func (d *Device) Close() error {
	var err error
	d.close.Do(func() {
		d.stop()
		err = d.ln.Close()
		d.mu.Lock()
		for c := range d.conns {
			c.Close()
		}
		d.mu.Unlock()
		d.wg.Wait()
	})
	return err
}

func (d *Device) snapshot() (Fault, time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fault, d.latency
}

func (d *Device) record(b []byte) {
	d.mu.Lock()
	d.received = append(d.received, b...)
	d.mu.Unlock()
}

func (d *Device) recordCommand(line string) {
	d.mu.Lock()
	d.commands = append(d.commands, line)
	d.mu.Unlock()
}

// sleep waits for dur or until ctx ends; it reports whether to go on.
func sleep(ctx context.Context, dur time.Duration) bool {
	if dur <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

var errClosed = errors.New("devsim: session closed")
