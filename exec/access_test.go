package exec

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"fieldkit/exec/devsim"
	"golang.org/x/crypto/ssh"
)

func TestHostKeyTrustOnFirstUseThenChangeRefused(t *testing.T) {
	r := newRig(t, "cisco_ios", nil)
	if res := r.exec(t, show("show version")); !res[0].Success {
		t.Fatalf("first login: %+v", res[0])
	}
	stored := r.keys.m[r.tg.DeviceID]
	want := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(r.dev.HostKey())))
	if stored != want {
		t.Fatalf("stored %q, want %q", stored, want)
	}
	old := ssh.FingerprintSHA256(r.dev.HostKey())
	if err := r.dev.RotateHostKey(); err != nil {
		t.Fatal(err)
	}
	logins := r.dev.Logins()
	res := r.exec(t, show("show version"), show("show clock"))
	msg := "host key for lab-cisco_ios (127.0.0.1) changed: expected " + old + ", got " +
		ssh.FingerprintSHA256(r.dev.HostKey()) + "; an administrator must clear the stored key"
	for _, x := range res {
		if x.Success || !strings.HasSuffix(x.ErrorMessage, msg) {
			t.Errorf("result %+v, want message ending %q", x, msg)
		}
	}
	if r.dev.Logins() != logins || r.keys.m[r.tg.DeviceID] != stored {
		t.Errorf("logged in or stored key replaced after a key change")
	}
}

func TestHostKeyPolicies(t *testing.T) {
	r := newRig(t, "cisco_ios", nil)
	ctx := context.Background()
	r.opt.HostKeyPolicy = HostKeyStrict
	if _, err := Open(ctx, r.tg, r.cred, r.opt); !errors.Is(err, ErrHostKeyUnknown) || r.dev.Logins() != 0 {
		t.Errorf("strict with unknown key: %v", err)
	}
	r.opt.HostKeyPolicy = HostKeyInsecure
	r.opt.HostKeys = nil
	if res := r.exec(t, show("show version")); !res[0].Success {
		t.Errorf("insecure: %+v", res[0])
	}
	r.opt.HostKeyPolicy = HostKeyTOFU
	if _, err := Open(ctx, r.tg, r.cred, r.opt); err == nil {
		t.Errorf("tofu without a store accepted")
	}
}

func TestWrongPassword(t *testing.T) {
	r := newRig(t, "cisco_nxos", nil)
	r.cred.Password = "not-" + testPass
	_, err := Open(context.Background(), r.tg, r.cred, r.opt)
	if !errors.Is(err, ErrAuth) || !strings.HasPrefix(err.Error(), "exec: login 127.0.0.1:") {
		t.Errorf("err = %v", err)
	}
	res := r.exec(t, show("show version"))
	if res[0].Success || !strings.HasSuffix(res[0].ErrorMessage, ": authentication failed") ||
		strings.Contains(res[0].ErrorMessage, r.cred.Password) {
		t.Errorf("result %+v", res[0])
	}
}

func TestWrongEnableSecret(t *testing.T) {
	r := newRig(t, "cisco_ios", nil)
	r.cred.EnableSecret = "not-" + testEnable
	_, err := Open(context.Background(), r.tg, r.cred, r.opt)
	if !errors.Is(err, ErrEnable) || strings.Contains(err.Error(), r.cred.EnableSecret) {
		t.Errorf("err = %v", err)
	}
}

func TestPrivateKeyLogin(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, "arista_eos", func(c *devsim.Config) {
		c.AuthorizedKeys = []ssh.PublicKey{sshPub}
		c.EnableSecret = ""
	})
	r.cred = Credentials{Username: testUser, PrivateKey: pem.EncodeToMemory(block)}
	if res := r.exec(t, show("show version")); !res[0].Success {
		t.Errorf("result %+v", res[0])
	}
}

func TestKeyboardInteractiveAndLegacyAlgorithms(t *testing.T) {
	r := newRig(t, "cisco_ios", func(c *devsim.Config) { c.KeyboardInteractive = true })
	r.tg.LegacyAlgorithms = true
	if res := r.exec(t, show("show version")); !res[0].Success {
		t.Errorf("result %+v", res[0])
	}
}

func TestUnknownDriver(t *testing.T) {
	r := newRig(t, "generic", nil)
	r.tg.Driver = "vyos"
	res := r.exec(t, show("show version"))
	if res[0].Success || !strings.Contains(res[0].ErrorMessage, `unknown driver "vyos"`) {
		t.Errorf("result %+v", res[0])
	}
}

func TestOutputCap(t *testing.T) {
	for _, d := range []string{"cisco_ios", "linux"} {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, nil)
			r.opt.MaxOutputBytes = 100
			res := r.exec(t, show(showFor(d)))[0]
			if !res.Success || !res.Truncated || !strings.HasSuffix(res.Output, "\n[output truncated at 100 bytes]") ||
				len(res.Output) > 100+len("\n[output truncated at 100 bytes]") {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestLinux(t *testing.T) {
	r := newRig(t, "linux", nil)
	res := r.exec(t,
		show("uname -a"),
		show("cat /etc/missing"),
		config("echo one\nfalse\necho never-run"),
	)
	if !res[0].Success || !strings.HasPrefix(res[0].Output, "Linux ") || strings.HasSuffix(res[0].Output, "\n") {
		t.Errorf("uname: %+v", res[0])
	}
	if res[1].Success || res[1].ErrorMessage != "exit status 1: cat: /etc/missing: No such file or directory" ||
		!strings.Contains(res[1].Output, "No such file") {
		t.Errorf("cat: %+v", res[1])
	}
	if res[2].Success || res[2].ErrorMessage != "exit status 1" || contains(r.dev.Commands(), "echo never-run") {
		t.Errorf("config: %+v, commands %q", res[2], r.dev.Commands())
	}
	for _, x := range res {
		if x.Duration <= 0 || x.Duration > 5*time.Second {
			t.Errorf("duration %v", x.Duration)
		}
	}
}

func TestGeneric(t *testing.T) {
	r := newRig(t, "generic", nil)
	res := r.exec(t, show("show version"), show("shwo version"))
	if !res[0].Success || !strings.HasPrefix(res[0].Output, "Generic Network OS") {
		t.Errorf("show: %+v", res[0])
	}
	if res[1].Success || !res[1].Syntax.Detected || res[1].Syntax.Vendor != "generic" {
		t.Errorf("typo: %+v", res[1])
	}
}
