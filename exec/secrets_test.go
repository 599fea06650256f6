package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"fieldkit/exec/devsim"
	"fieldkit/exec/textfsm"
)

// commonSecrets are passwords people really use that are also ordinary
// words in device output ("http://www.cisco.com", "username admin") and in
// configuration ("enable secret").
var commonSecrets = []string{"cisco", "admin", "secret"}

// neutral is a stand-in of the same length as secret that occurs nowhere.
func neutral(secret string) string { return strings.Repeat("q", len(secret)) }

// secretRig is a cisco_ios device whose login password and enable secret
// are both pw, reached with credentials holding the same.
func secretRig(t *testing.T, pw string, mod func(*devsim.Config)) *rig {
	r := newRig(t, "cisco_ios", func(c *devsim.Config) {
		c.Password, c.EnableSecret = pw, pw
		// The running config's "Last configuration change" line reads the clock: a
		// fixed one keeps the outputs comparable when a second passes between them.
		c.Clock = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
		if mod != nil {
			mod(c)
		}
	})
	r.cred.Password, r.cred.EnableSecret = pw, pw
	return r
}

// Output is the device's text byte for byte: a password that happens to be
// a word of the output changes nothing, in the output or in what TextFSM
// makes of it.
func TestOutputNotRewrittenForCommonPasswords(t *testing.T) {
	lib, errs := textfsm.Load("", nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	base := secretRig(t, "zq-baseline-7", nil).exec(t, show("show version"), show("show running-config"))
	for _, pw := range commonSecrets {
		t.Run(pw, func(t *testing.T) {
			t.Parallel()
			res := secretRig(t, pw, nil).exec(t, show("show version"), show("show running-config"))
			for i := range res {
				if !res[i].Success || res[i].Output != base[i].Output {
					t.Errorf("output %d differs from the baseline:\n%q\nwant\n%q", i, res[i].Output, base[i].Output)
				}
			}
			for _, want := range []string{"http://www.cisco.com/techsupport", "cisco WS-C3750X-48P"} {
				if !strings.Contains(res[0].Output, want) {
					t.Errorf("show version lost %q", want)
				}
			}
			if !strings.Contains(res[1].Output, "username admin privilege 15 secret 9 ") {
				t.Errorf("running config rewritten: %q", res[1].Output)
			}
			p := lib.Parse([]string{"cisco_ios"}, "show version", res[0].Output)
			if !p.Success || len(p.Data) != 1 || fmt.Sprint(p.Data[0]["hardware"]) != "[WS-C3750X-48P]" {
				t.Errorf("parsed %+v", p)
			}
		})
	}
}

// secretScenarios each end in a message FieldKit writes itself.
var secretScenarios = []struct {
	name string
	run  func(t *testing.T, pw string) []Result
	want string // the error message, with the device's port as PORT
}{
	{"wrong login password", func(t *testing.T, pw string) []Result {
		r := secretRig(t, "device-login-1", func(c *devsim.Config) { c.EnableSecret = "" })
		r.cred.Password = pw
		return runLogged(t, r, show("show version"))
	}, "exec: login 127.0.0.1:PORT: authentication failed"},
	{"wrong enable secret", func(t *testing.T, pw string) []Result {
		r := secretRig(t, pw, func(c *devsim.Config) { c.EnableSecret = "device-enable-1" })
		return runLogged(t, r, show("show version"))
	}, "exec: enable 127.0.0.1:PORT: enable refused by the device, check the enable password"},
	{"timeout", func(t *testing.T, pw string) []Result {
		r := secretRig(t, pw, nil)
		r.opt.Timeout = time.Second
		r.dev.SetLatency(3 * time.Second)
		return runLogged(t, r, show("show version"))
	}, "Timed out after 1 s"},
	{"syntax error", func(t *testing.T, pw string) []Result {
		return runLogged(t, secretRig(t, pw, nil), show("show interfacez"))
	}, "Syntax error detected: % Invalid input detected at '^' marker."},
}

// runLogged runs commands and returns their results with the session's log
// lines in the last result's Output, for the caller to search.
func runLogged(t *testing.T, r *rig, cmds ...Command) []Result {
	res := Execute(context.Background(), r.tg, r.cred, r.opt, cmds)
	for i := range res {
		res[i].ErrorMessage = strings.ReplaceAll(res[i].ErrorMessage, r.dev.Addr(), "127.0.0.1:PORT")
	}
	return append(res, Result{Output: r.logs.String()})
}

// The errors and log lines FieldKit writes never contain a credential: with
// the password "cisco", "admin" or "secret", each message is the one a
// meaningless password of the same length gives, and the word occurs in the
// messages and logs exactly as often (a driver named cisco_ios is no leak).
func TestErrorsAndLogsNeverHoldTheSecret(t *testing.T) {
	for _, sc := range secretScenarios {
		for _, pw := range commonSecrets {
			t.Run(sc.name+"/"+pw, func(t *testing.T) {
				t.Parallel()
				got, base := sc.run(t, pw), sc.run(t, neutral(pw))
				if msg := got[0].ErrorMessage; msg != sc.want || base[0].ErrorMessage != sc.want {
					t.Errorf("message %q (baseline %q), want %q", msg, base[0].ErrorMessage, sc.want)
				}
				if strings.Contains(sc.want, pw) {
					t.Fatalf("the expected message itself holds %q", pw)
				}
				gotLog, baseLog := got[len(got)-1].Output, base[len(base)-1].Output
				if strings.Count(gotLog, pw) != strings.Count(baseLog, pw) {
					t.Errorf("%q occurs %d times in the log, %d without it:\n%s",
						pw, strings.Count(gotLog, pw), strings.Count(baseLog, pw), gotLog)
				}
				line := got[0].Syntax.Line + got[0].Syntax.Input
				if strings.Count(line, pw) != strings.Count(base[0].Syntax.Line+base[0].Syntax.Input, pw) {
					t.Errorf("syntax error holds %q: %+v", pw, got[0].Syntax)
				}
			})
		}
	}
}
