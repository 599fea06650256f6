package exec

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"fieldkit/exec/devsim"
)

// A prompt glued to the reply before it is found at once: the read ends
// well within a timeout shorter than the wait for a foreign prompt.
func TestReadUntilGluedPrompt(t *testing.T) {
	tests := []struct{ driver, base, data, prompt, out string }{
		{"arista_eos", "leaf1", "terminal length 0\r\nPagination disabled.leaf1#", "leaf1#", "Pagination disabled."},
		{"cisco_ios", "sw1", "show run | i banner\r\nbanner motd ^Cbye^Csw1#", "sw1#", "banner motd ^Cbye^C"},
		{"juniper_junos", "ops@ex1", "show system uptime\r\nCurrent time: 2024-05-02 09:12:45 UTCops@ex1> ", "ops@ex1> ", "Current time: 2024-05-02 09:12:45 UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.driver, func(t *testing.T) {
			s, _ := fakeShell(tt.driver, tt.base)
			s.sink.Write([]byte(tt.data))
			ctx, cancel := context.WithTimeout(context.Background(), quietPrompt/2)
			defer cancel()
			r, err := s.readUntil(ctx, readOpts{needNewline: true, limit: 1 << 10})
			if err != nil || r.prompt != tt.prompt {
				t.Fatalf("err %v, prompt %q", err, r.prompt)
			}
			cmd := firstLineOf(tt.data)
			if got := s.d.cleanOutput(normalize(string(r.raw)), strings.TrimSpace(cmd), r.prompt); got != tt.out {
				t.Errorf("output %q, want %q", got, tt.out)
			}
		})
	}
}

// Devices whose replies run into the prompt give the same output, byte for
// byte, as devices that end them with a newline, without waiting out any
// timeout: the arista_eos case of "Pagination disabled.leaf1#".
func TestGluedPromptDevices(t *testing.T) {
	for _, driver := range []string{"arista_eos", "cisco_ios", "cisco_nxos"} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			clock := func(c *devsim.Config) {
				c.Clock = func() time.Time { return time.Date(2024, 3, 5, 9, 12, 45, 0, time.UTC) }
			}
			plain := newRig(t, driver, clock).exec(t, show("show version"), show("show clock"))
			r := newRig(t, driver, func(c *devsim.Config) { clock(c); c.PromptOnLastLine = true })
			r.opt.Timeout = quietPrompt / 2 * 3
			glued := r.exec(t, show("show version"), show("show clock"))
			for i := range glued {
				if !glued[i].Success || glued[i].Output != plain[i].Output {
					t.Errorf("command %d: %+v\nwant output %q", i, glued[i], plain[i].Output)
				}
			}
		})
	}
}

func TestNormalizeCursorLeft(t *testing.T) {
	tests := []struct{ in, want string }{
		{"line 1\n\x1b[16D                \x1b[16Dline 2", "line 1\nline 2"},
		{"abc \x1b[1Dd", "abcd"},
		{"abc\x1b[Dx", "abx"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A device whose host name the driver does not expect is reached with a
// prompt pattern set for it; without one, opening times out.
func TestPromptPatternOverride(t *testing.T) {
	host := func(c *devsim.Config) { c.Hostname = "core+sw1" }
	r := newRig(t, "cisco_ios", host)
	r.tg.ConnectTimeout = 2500 * time.Millisecond
	if res := r.exec(t, show("show version")); res[0].Success || res[0].ErrorMessage != "Timed out after 2.5 s" {
		t.Fatalf("without the override: %+v", res[0])
	}
	r = newRig(t, "cisco_ios", host)
	r.tg.PromptPattern = `^core\+sw1(\([\w-]+\))?[>#]\s?$`
	res := r.exec(t, show("show version"), config("interface GigabitEthernet1/0/1\n description fk-override"))
	if !res[0].Success || !res[1].Success || !strings.Contains(r.dev.RunningConfig(), "fk-override") {
		t.Fatalf("results %+v", res)
	}
	if !contains(r.dev.Commands(), "enable") || strings.HasSuffix(res[0].Output, "core+sw1#") {
		t.Errorf("enable %v, output end %q", r.dev.Commands(), lastLine(res[0].Output))
	}
	r.tg.PromptPattern = `^core(`
	if res := r.exec(t, show("show version")); !strings.Contains(res[0].ErrorMessage, "prompt pattern: error parsing regexp") {
		t.Errorf("bad pattern: %+v", res[0])
	}
}

// A target's own timeouts replace Options.Timeout: a slow device opens
// within its connect timeout though the whole-run bound is shorter, and a
// silent command ends at the command timeout though the bound is longer.
func TestTargetTimeouts(t *testing.T) {
	t.Run("connect and command replace the whole bound", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "cisco_ios", func(c *devsim.Config) { c.Latency = 300 * time.Millisecond })
		r.opt.Timeout = time.Second
		if res := r.exec(t, show("show version")); res[0].Success || res[0].ErrorMessage != "Timed out after 1 s" {
			t.Fatalf("with the whole bound only: %+v", res[0])
		}
		r.tg.ConnectTimeout, r.tg.CommandTimeout = 5*time.Second, 5*time.Second
		if res := r.exec(t, show("show version"), show("show clock")); !res[0].Success || !res[1].Success {
			t.Fatalf("with target timeouts: %+v", res)
		}
	})
	t.Run("connect", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "cisco_ios", func(c *devsim.Config) { c.Latency = 3 * time.Second })
		r.tg.ConnectTimeout = 700 * time.Millisecond
		start := time.Now()
		res := r.exec(t, show("show version"), show("show clock"))
		if res[0].ErrorMessage != "Timed out after 0.7 s" || res[1].ErrorMessage != res[0].ErrorMessage || time.Since(start) > 2*time.Second {
			t.Errorf("after %v: %+v", time.Since(start), res)
		}
	})
	t.Run("command", func(t *testing.T) {
		t.Parallel()
		// Slow output delays show version, not the opening steps, which
		// print nothing on IOS.
		r := newRig(t, "cisco_ios", func(c *devsim.Config) { c.Fault = devsim.FaultSlowOutput })
		r.tg.CommandTimeout = 700 * time.Millisecond
		r.opt.Timeout = 30 * time.Second
		res := r.exec(t, show("show version"))
		if res[0].Success || res[0].ErrorMessage != "Timed out after 0.7 s" {
			t.Errorf("%+v", res[0])
		}
	})
	t.Run("batch", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "cisco_ios", func(c *devsim.Config) { c.Fault = devsim.FaultSlowOutput })
		r.tg.CommandTimeout = 700 * time.Millisecond
		steps := []Step{{Command: show("show version"), Timeout: 30 * time.Second}}
		res := RunBatch(context.Background(), r.tg, r.cred, r.opt, steps, nil)
		if res[0].Success || res[0].ErrorMessage != "Timed out after 0.7 s" {
			t.Errorf("%+v", res[0])
		}
	})
}

// Each enable mode types its answer at the device's password prompt, and a
// device that asks but has no enable password takes an empty line.
func TestEnableModes(t *testing.T) {
	tests := []struct {
		name   string
		dev    func(*devsim.Config)
		mode   EnableMode
		secret string // the credential set's enable secret
		typed  string // what follows "enable\n" on the wire
	}{
		{"none", func(c *devsim.Config) { c.EnableSecret, c.EnableEmpty = "", true }, EnableModeNone, testEnable, "\n"},
		{"password", func(c *devsim.Config) { c.EnableSecret = testPass }, EnableModePassword, testEnable, testPass + "\n"},
		{"secret", nil, EnableModeSecret, testEnable, testEnable + "\n"},
		{"auto with a secret", nil, EnableModeAuto, testEnable, testEnable + "\n"},
		{"auto without one", func(c *devsim.Config) { c.EnableSecret = testPass }, EnableModeAuto, "", testPass + "\n"},
		{"empty secret", func(c *devsim.Config) { c.EnableSecret, c.EnableEmpty = "", true }, EnableModeSecret, "", "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, "cisco_ios", tt.dev)
			r.cred.EnableMode, r.cred.EnableSecret = tt.mode, tt.secret
			res := r.exec(t, show("show running-config"))
			if !res[0].Success || !strings.Contains(res[0].Output, "hostname sw1") {
				t.Fatalf("result %+v", res[0])
			}
			if !bytes.Contains(r.dev.Received(), []byte("enable\n"+tt.typed)) {
				t.Errorf("typed after enable: %q", r.dev.Received())
			}
		})
	}
	r := newRig(t, "cisco_ios", func(c *devsim.Config) { c.EnableSecret, c.EnableEmpty = "", true })
	r.cred.EnableMode = EnableModePassword
	if res := r.exec(t, show("show version")); res[0].Success || !strings.HasSuffix(res[0].ErrorMessage, ErrEnable.Error()) {
		t.Errorf("the password where none is set: %+v", res[0])
	}
	r.cred.EnableMode = "sometimes"
	if res := r.exec(t, show("show version")); !strings.HasSuffix(res[0].ErrorMessage, `unknown enable mode "sometimes"`) {
		t.Errorf("unknown mode: %+v", res[0])
	}
}
