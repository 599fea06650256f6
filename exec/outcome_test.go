package exec

import (
	"context"
	"testing"
	"time"

	"fieldkit/exec/devsim"
)

// TestOutcome runs real executions against the simulator and classifies them.
func TestOutcome(t *testing.T) {
	dev, err := devsim.Start(devsim.Config{Vendor: "cisco_ios", Hostname: "r1", Username: "u", Password: "p", EnableSecret: "e"})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	target := Target{DeviceID: 1, Name: "r1", Host: "127.0.0.1", Port: dev.Port(), Driver: "cisco_ios"}
	run := func(c Credentials, cmd string, timeout time.Duration) Result {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return Execute(ctx, target, c, Options{HostKeyPolicy: HostKeyInsecure, Timeout: timeout}, []Command{{Type: "show", Text: cmd}})[0]
	}
	good := Credentials{Username: "u", Password: "p", EnableSecret: "e"}
	cases := []struct {
		name string
		res  func() Result
		want string
	}{
		{"success", func() Result { return run(good, "show version", 10*time.Second) }, "success"},
		{"syntax", func() Result { return run(good, "show bogus thing", 10*time.Second) }, "syntax_error"},
		{"auth", func() Result {
			return run(Credentials{Username: "u", Password: "wrong"}, "show version", 10*time.Second)
		}, "auth_error"},
		{"timeout", func() Result {
			dev.SetFault(devsim.FaultSilence)
			defer dev.SetFault(devsim.FaultNone)
			return run(good, "show version", 2*time.Second)
		}, "timeout"},
		{"connect", func() Result {
			closed := target
			closed.Port = 1
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return Execute(ctx, closed, good, Options{HostKeyPolicy: HostKeyInsecure, Timeout: 5 * time.Second}, []Command{{Type: "show", Text: "show version"}})[0]
		}, "connect_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.res()
			if got := Outcome(r); got != c.want {
				t.Fatalf("Outcome = %q, want %q (success %v, error %q)", got, c.want, r.Success, r.ErrorMessage)
			}
		})
	}
}
