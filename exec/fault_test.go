package exec

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/exec/devsim"
	"golang.org/x/crypto/ssh"
)

// Fault tests run on one shell platform and on linux (exec channels).
var faultDrivers = []string{"cisco_ios", "linux"}

// showFor is a command with a few lines of output on each fault driver.
func showFor(driver string) string {
	if driver == "linux" {
		return "cat /etc/os-release"
	}
	return "show version"
}

// runFault opens a healthy session, injects the fault, runs one command
// with the timeout and closes like Run does; it returns the result and
// how long the command plus close took.
func runFault(t *testing.T, driver string, f devsim.Fault, timeout time.Duration, limit int) (Result, time.Duration) {
	r := newRig(t, driver, nil)
	r.opt.MaxOutputBytes = limit
	s := r.open(t)
	r.dev.SetFault(f)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res := s.Run(ctx, show(showFor(driver)))
	s.closeWithin(2 * time.Second)
	assertNoSecretResults(t, []Result{res})
	return res, time.Since(start)
}

func TestFaultSilenceTimesOut(t *testing.T) {
	for _, d := range faultDrivers {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			res, took := runFault(t, d, devsim.FaultSilence, time.Second, 0)
			if res.Success || res.ErrorMessage != "Timed out after 1 s" || took > 2*time.Second {
				t.Errorf("after %v: %+v", took, res)
			}
		})
	}
}

func TestFaultSlowOutputKeepsPartialOutput(t *testing.T) {
	for _, d := range faultDrivers {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			res, took := runFault(t, d, devsim.FaultSlowOutput, 700*time.Millisecond, 0)
			if res.Success || res.ErrorMessage != "Timed out after 0.7 s" || took > 1700*time.Millisecond {
				t.Errorf("after %v: %+v", took, res)
			}
			if len(strings.Split(res.Output, "\n")) < 2 {
				t.Errorf("partial output lost: %q", res.Output)
			}
		})
	}
}

func TestFaultEndlessOutputIsCapped(t *testing.T) {
	for _, d := range faultDrivers {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			const limit = 32 << 10
			res, took := runFault(t, d, devsim.FaultEndlessOutput, 1500*time.Millisecond, limit)
			if res.Success || !res.Truncated || res.ErrorMessage != "Timed out after 1.5 s" || took > 2500*time.Millisecond {
				t.Fatalf("after %v: success %v truncated %v %q", took, res.Success, res.Truncated, res.ErrorMessage)
			}
			marker := "\n[output truncated at 32768 bytes]"
			if !strings.HasSuffix(res.Output, marker) || len(res.Output) > limit+len(marker) {
				t.Errorf("output of %d bytes, tail %q", len(res.Output), res.Output[max(0, len(res.Output)-60):])
			}
		})
	}
}

func TestFaultDisconnect(t *testing.T) {
	for _, d := range faultDrivers {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			res, took := runFault(t, d, devsim.FaultDisconnect, 5*time.Second, 0)
			if res.Success || res.ErrorMessage != "Device closed the session" || took > 2*time.Second {
				t.Errorf("after %v: %+v", took, res)
			}
			if res.Output == "" {
				t.Errorf("partial output lost")
			}
		})
	}
}

// The timeout bounds the whole Execute, login included, and the commands
// after the one that timed out are not run.
func TestExecuteTimeoutBoundsEverything(t *testing.T) {
	r := newRig(t, "cisco_ios", func(c *devsim.Config) { c.Fault = devsim.FaultSilence })
	r.opt.Timeout = time.Second
	start := time.Now()
	res := r.exec(t, show("show version"), show("show clock"))
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Execute took %v", took)
	}
	for _, x := range res {
		if x.Success || x.ErrorMessage != "Timed out after 1 s" {
			t.Errorf("result %+v", x)
		}
	}
}

// After a timeout the session refuses further commands instead of reading
// the late answer of the previous one.
func TestRunAfterTimeoutIsRefused(t *testing.T) {
	r := newRig(t, "arista_eos", nil)
	s := r.open(t)
	r.dev.SetFault(devsim.FaultSilence)
	run(t, s, 300*time.Millisecond, show("show version"))
	r.dev.SetFault(devsim.FaultNone)
	res := run(t, s, time.Second, show("show version"))
	if res.Success || res.ErrorMessage != "not run: Timed out after 0.3 s" {
		t.Errorf("result %+v", res)
	}
}

// silentChannels is a hand-written SSH server that logs anyone in and then
// never answers a request to open a channel: a device stuck after login.
func silentChannels(t *testing.T) int {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{NoClientAuth: true}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	over := false
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
		over = true
	})
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if over {
				nc.Close()
			}
			conns = append(conns, nc)
			mu.Unlock()
			go func() {
				_, chans, reqs, err := ssh.NewServerConn(nc, cfg)
				if err != nil {
					return
				}
				go ssh.DiscardRequests(reqs)
				for range chans { // neither accepted nor rejected
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// The timeout bounds the channel requests after login too: a device that
// never answers the shell's (or a command's) channel is given up on.
func TestExecuteTimeoutBoundsSilentChannel(t *testing.T) {
	port := silentChannels(t)
	for _, d := range faultDrivers {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			tg := Target{DeviceID: 1, Name: "stuck", Host: "127.0.0.1", Port: port, Driver: d}
			o := Options{HostKeyPolicy: HostKeyInsecure, Timeout: 500 * time.Millisecond}
			done := make(chan []Result, 1)
			go func() {
				done <- Execute(context.Background(), tg, Credentials{Username: testUser}, o, []Command{show(showFor(d))})
			}()
			select {
			case res := <-done:
				if res[0].Success || res[0].ErrorMessage != "Timed out after 0.5 s" {
					t.Errorf("result %+v", res[0])
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Execute still waiting for the channel long after its timeout")
			}
		})
	}
}
