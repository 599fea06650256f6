package exec

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// The real peers are started by .ci/peers.sh on 127.0.0.1: OpenSSH for the
// linux driver, FRR's vtysh as a login shell for the cisco_ios driver. They
// are found through FIELDKIT_TEST_<PEER>_ADDR/USER/PASSWORD.

// realPeer is one started peer.
type realPeer struct {
	host     string
	port     int
	user     string
	password string
}

// peerFromEnv reads a peer's address and login; a missing variable fails
// the run in CI and skips the test elsewhere.
func peerFromEnv(t *testing.T, prefix string) realPeer {
	t.Helper()
	var vals [3]string
	for i, key := range []string{"_ADDR", "_USER", "_PASSWORD"} {
		name := "FIELDKIT_TEST_" + prefix + key
		if vals[i] = os.Getenv(name); vals[i] == "" {
			msg := name + " is not set: the real SSH peers are not running; start them with: bash .ci/peers.sh start; source <(bash .ci/peers.sh env)"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	host, port, err := net.SplitHostPort(vals[0])
	if err != nil {
		t.Fatalf("FIELDKIT_TEST_%s_ADDR: %v", prefix, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("FIELDKIT_TEST_%s_ADDR: %v", prefix, err)
	}
	return realPeer{host: host, port: n, user: vals[1], password: vals[2]}
}

func (p realPeer) target(name, driver string) Target {
	return Target{DeviceID: 1, Name: name, Host: p.host, Port: p.port, Driver: driver}
}

func (p realPeer) creds() Credentials {
	return Credentials{Username: p.user, Password: p.password}
}

// assertNoSecret checks that the peer's password shows nowhere in results.
func (p realPeer) assertNoSecret(t *testing.T, res ...Result) {
	t.Helper()
	for _, r := range res {
		for _, text := range []string{r.Output, r.ErrorMessage, r.Syntax.Line, r.Syntax.Input} {
			if strings.Contains(text, p.password) {
				t.Errorf("peer password in result %q", text)
			}
		}
	}
}

func peerOptions(keys *memKeys) Options {
	return Options{HostKeys: keys, Timeout: 30 * time.Second}
}

// randomMark is a word no earlier run can have left on a peer.
func randomMark(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "fieldkit-" + hex.EncodeToString(b)
}

func TestRealOpenSSHLinux(t *testing.T) {
	p := peerFromEnv(t, "SSHD")
	keys := &memKeys{}
	tg := p.target("openssh", "linux")
	res := Execute(context.Background(), tg, p.creds(), peerOptions(keys), []Command{
		show("uname -a"),
		show("echo to-stdout; echo to-stderr >&2; exit 3"),
		show("ls /nonexistent-" + randomMark(t)),
		config("true\nfalse\necho never-run"),
	})
	p.assertNoSecret(t, res...)
	if !res[0].Success || !strings.HasPrefix(res[0].Output, "Linux ") || res[0].ErrorMessage != "" {
		t.Errorf("uname -a: %+v", res[0])
	}
	if r := res[1]; r.Success || r.ErrorMessage != "exit status 3: to-stderr" ||
		!strings.Contains(r.Output, "to-stdout") || !strings.Contains(r.Output, "to-stderr") {
		t.Errorf("exit 3: %+v", r)
	}
	if r := res[2]; r.Success || !strings.HasPrefix(r.ErrorMessage, "exit status 2: ") ||
		!strings.Contains(r.ErrorMessage, "No such file or directory") || !strings.Contains(r.Output, "No such file") {
		t.Errorf("ls of a missing file: %+v", r)
	}
	if r := res[3]; r.Success || r.ErrorMessage != "exit status 1" || strings.Contains(r.Output, "never-run") {
		t.Errorf("config stopping at the first failing line: %+v", r)
	}
}

func TestRealOpenSSHHostKeyTOFU(t *testing.T) {
	p := peerFromEnv(t, "SSHD")
	keys := &memKeys{}
	tg := p.target("openssh", "linux")
	ctx := context.Background()
	for i := range 2 {
		res := Execute(ctx, tg, p.creds(), peerOptions(keys), []Command{show("true")})
		if !res[0].Success {
			t.Fatalf("login %d: %+v", i+1, res[0])
		}
	}
	stored := keys.m[tg.DeviceID]
	if stored == "" {
		t.Fatal("no host key stored on first use")
	}
	if kh := os.Getenv("FIELDKIT_TEST_KNOWN_HOSTS"); kh != "" {
		b, err := os.ReadFile(kh)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), stored) {
			t.Errorf("stored key %q is not one of the peer's keys in %s", stored, kh)
		}
	}

	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	keys.m[tg.DeviceID] = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(other)))
	_, err = Open(ctx, tg, p.creds(), peerOptions(keys))
	var hk *HostKeyError
	if !errors.Is(err, ErrHostKeyChanged) || !errors.As(err, &hk) || hk.Expected != ssh.FingerprintSHA256(other) {
		t.Fatalf("changed key: err = %v", err)
	}
	if !strings.Contains(err.Error(), "an administrator must clear the stored key") {
		t.Errorf("message %q does not say what to do", err)
	}

	keys.m[tg.DeviceID] = ""
	opts := peerOptions(keys)
	opts.HostKeyPolicy = HostKeyStrict
	if _, err := Open(ctx, tg, p.creds(), opts); !errors.Is(err, ErrHostKeyUnknown) {
		t.Errorf("strict with no stored key: err = %v", err)
	}
}

func TestRealWrongPassword(t *testing.T) {
	for _, peer := range []struct{ env, driver string }{{"SSHD", "linux"}, {"FRR", "cisco_ios"}} {
		t.Run(peer.driver, func(t *testing.T) {
			p := peerFromEnv(t, peer.env)
			c := p.creds()
			c.Password = "wrong-" + randomMark(t)
			res := Execute(context.Background(), p.target("peer", peer.driver), c, peerOptions(&memKeys{}),
				[]Command{show("show version")})
			if res[0].Success || !strings.HasSuffix(res[0].ErrorMessage, ": authentication failed") ||
				strings.Contains(res[0].ErrorMessage, c.Password) {
				t.Errorf("result %+v", res[0])
			}
			f := res[0].Failure
			if f == nil || f.Phase != PhaseLogin || f.Reason != ReasonAuth || f.Username != c.Username {
				t.Fatalf("failure %+v", f)
			}
			msg := f.Message("FRR lab")
			want := "The device at " + f.Host + " port " + strconv.Itoa(f.Port) + " refused the login as " + c.Username + " (credential set “FRR lab”)."
			if !strings.HasPrefix(msg, want) || strings.Contains(msg, c.Password) {
				t.Errorf("message %q, want it to start %q", msg, want)
			}
		})
	}
}

// openFRR opens a cisco_ios session to the FRR peer.
func openFRR(t *testing.T) (*Session, realPeer) {
	t.Helper()
	p := peerFromEnv(t, "FRR")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, p.target("frr", "cisco_ios"), p.creds(), peerOptions(&memKeys{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p
}

func TestRealFRRShow(t *testing.T) {
	s, _ := openFRR(t)
	if host := os.Getenv("FIELDKIT_TEST_FRR_HOSTNAME"); host != "" && s.prompt != host+"#" && s.prompt != host+"# " {
		t.Errorf("prompt %q, want %s#", s.prompt, host)
	}
	r := run(t, s, 20*time.Second, show("show version"))
	if !r.Success || !strings.Contains(r.Output, "FRRouting") || r.Syntax.Detected {
		t.Errorf("show version: %+v", r)
	}
	if strings.Contains(r.Output, "show version") || strings.HasSuffix(strings.TrimSpace(r.Output), "#") {
		t.Errorf("echo or prompt left in output %q", r.Output)
	}
	r = run(t, s, 20*time.Second, show("show interface brief"))
	if !r.Success || !strings.HasPrefix(r.Output, "Interface") {
		t.Fatalf("show interface brief: %+v", r)
	}
	for _, name := range []string{"eth0", "lo"} {
		if !strings.Contains(r.Output, "\n"+name+" ") {
			t.Errorf("interface %s missing from %q", name, r.Output)
		}
	}
}

func TestRealFRRConfigReadBack(t *testing.T) {
	s, _ := openFRR(t)
	mark := randomMark(t)
	r := run(t, s, 20*time.Second, config("interface lo\n description "+mark))
	if !r.Success || r.Syntax.Detected {
		t.Fatalf("config: %+v", r)
	}
	t.Cleanup(func() {
		run(t, s, 20*time.Second, config("interface lo\n description loopback"))
	})
	if s.inConfig {
		t.Errorf("session left in config mode, prompt %q", s.prompt)
	}
	r = run(t, s, 20*time.Second, show("show running-config"))
	if !r.Success || !strings.Contains(r.Output, " description "+mark) {
		t.Errorf("description %s not in the running config: %+v", mark, r)
	}
}

func TestRealFRRSyntaxErrors(t *testing.T) {
	s, _ := openFRR(t)
	mark := randomMark(t)
	tests := []struct {
		cmd       Command
		typ, line string
	}{
		{show("show " + mark), UnknownCommand, "% Unknown command: show " + mark},
		{show("show"), IncompleteCommand, "% Command incomplete: show"},
		{config("interface lo\n" + mark + " on"), UnknownCommand, "% Unknown command: " + mark + " on"},
	}
	for _, tt := range tests {
		r := run(t, s, 20*time.Second, tt.cmd)
		if r.Success || !r.Syntax.Detected || r.Syntax.Type != tt.typ || r.Syntax.Line != tt.line ||
			r.Syntax.Vendor != "cisco_ios" || r.ErrorMessage != "Syntax error detected: "+tt.line {
			t.Errorf("%q: %+v", tt.cmd.Text, r)
		}
	}
	if s.inConfig {
		t.Errorf("session left in config mode after a rejected line, prompt %q", s.prompt)
	}
	if r := run(t, s, 20*time.Second, show("show version")); !r.Success {
		t.Errorf("session unusable after syntax errors: %+v", r)
	}
}

// A pool in front of the real peers keeps one login for five executions: OpenSSH shows
// the same client connection to each command, FRR's vtysh takes a change on its kept
// session (after the probe) and is taken out of the config mode a show command left it
// in, without another login.
func TestRealPeersKeptSession(t *testing.T) {
	for _, peer := range []struct{ env, driver, cmd string }{
		{"SSHD", "linux", "echo $SSH_CONNECTION"},
		{"FRR", "cisco_ios", "show version"},
	} {
		t.Run(peer.driver, func(t *testing.T) {
			p := peerFromEnv(t, peer.env)
			pool := NewPool(PoolConfig{Idle: time.Minute, PerDevice: 1})
			defer pool.Close()
			job := func(cmds ...Command) Job {
				steps := make([]Step, len(cmds))
				for i, c := range cmds {
					steps[i] = Step{Command: c, Timeout: 20 * time.Second}
				}
				return Job{Target: p.target("peer", peer.driver), Creds: p.creds(), SetID: 1, SetVersion: 1,
					Options: peerOptions(&memKeys{}), Steps: steps}
			}
			run := func(cmds ...Command) []Result {
				t.Helper()
				res := pool.Run(context.Background(), job(cmds...))
				p.assertNoSecret(t, res...)
				for i, r := range res {
					if !r.Success {
						t.Fatalf("%q: %+v", cmds[i].Text, r)
					}
				}
				return res
			}
			first := run(show(peer.cmd))[0].Output
			for range 4 {
				if out := run(show(peer.cmd))[0].Output; out != first {
					t.Fatalf("output %q, first %q", out, first)
				}
			}
			if peer.driver == "cisco_ios" {
				mark := randomMark(t)
				run(config("interface lo\n description " + mark))
				defer run(config("interface lo\n description loopback"))
				if out := run(show("show running-config"))[0].Output; !strings.Contains(out, " description "+mark) {
					t.Errorf("description %s not in the running config", mark)
				}
				run(show("configure terminal"))
				run(show("show version"))
			}
			if st := pool.Stats(); st.Logins != 1 || st.Replaced != 0 {
				t.Errorf("pool %+v, want one login", st)
			}
		})
	}
}
