package devsim

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestFaults(t *testing.T) {
	t.Run("slow output trickles", func(t *testing.T) {
		d := startDevice(t, Config{Vendor: "cisco_ios"})
		tm := shell(t, d)
		tm.expect(`#$`)
		d.SetFault(FaultSlowOutput)
		start := time.Now()
		tm.cmd("show ip interface brief", `sw1#$`) // five lines
		if el := time.Since(start); el < 4*slowLineDelay {
			t.Errorf("five lines took %v", el)
		}
	})
	t.Run("endless output", func(t *testing.T) {
		d := startDevice(t, Config{Vendor: "cisco_ios", Fault: FaultEndlessOutput})
		tm := shell(t, d)
		tm.expect(`#$`)
		tm.send("show vlan\r")
		for i := 0; i < 4; i++ {
			tm.expect(`VOICE`)
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(tm.all()) < 1<<20 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := len(tm.all()); n < 1<<20 {
			t.Errorf("only %d bytes of endless output", n)
		}
		tm.send("\x03")
		tm.expect(`\^C\r\nsw1#$`)
	})
	t.Run("silence", func(t *testing.T) {
		d := startDevice(t, Config{Vendor: "juniper_junos"})
		tm := shell(t, d)
		tm.expect(`> $`)
		d.SetFault(FaultSilence)
		tm.send("show version\r")
		time.Sleep(300 * time.Millisecond)
		if out := tm.all(); strings.Contains(out, "Hostname") || strings.HasSuffix(out, "> ") {
			t.Errorf("silent device answered: %q", out)
		}
	})
	t.Run("disconnect half-way", func(t *testing.T) {
		d := startDevice(t, Config{Vendor: "cisco_nxos", Fault: FaultDisconnect})
		tm := shell(t, d)
		tm.expect(`# $`)
		tm.send("show vlan\r")
		if !tm.waitEOF() {
			t.Fatal("connection not closed")
		}
		out := tm.all()
		if !strings.Contains(out, "VLAN Name") || strings.Contains(out, "Primary  Secondary") {
			t.Errorf("want the first half of the output only, got %q", out)
		}
	})
	t.Run("exec endless output outlives stdin EOF", func(t *testing.T) {
		d := startDevice(t, Config{Vendor: "linux", Fault: FaultEndlessOutput})
		s, err := dial(t, d).NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stdin, _ := s.StdinPipe()
		stdout, _ := s.StdoutPipe()
		if err := s.Start("cat /etc/os-release"); err != nil {
			t.Fatal(err)
		}
		stdin.Close() // what ssh does with no standard input (ssh -n, Session.Run)
		if n, err := io.CopyN(io.Discard, stdout, 1<<20); err != nil {
			t.Errorf("output ended after %d bytes: %v", n, err)
		}
	})
	t.Run("exec disconnect", func(t *testing.T) {
		d := startDevice(t, Config{Vendor: "linux", Fault: FaultDisconnect})
		s, err := dial(t, d).NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Output("cat /etc/os-release")
		if err == nil || len(out) == 0 || bytes.Contains(out, []byte("UBUNTU_CODENAME")) {
			t.Errorf("got %q, %v; want a cut output and an error", out, err)
		}
	})
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	base := runtime.NumGoroutine()
	for _, f := range []Fault{FaultNone, FaultSilence, FaultEndlessOutput} {
		d, err := Start(Config{Vendor: "cisco_ios", Fault: f})
		if err != nil {
			t.Fatal(err)
		}
		c, err := dialNoCleanup(d)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := c.NewSession()
		s.RequestPty("vt100", 24, 80, nil)
		stdin, _ := s.StdinPipe()
		s.Stdout = io.Discard
		s.Shell()
		stdin.Write([]byte("show vlan\r"))
		time.Sleep(50 * time.Millisecond)
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		c.Close()
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before, %d after Close:\n%s", base, n, buf[:runtime.Stack(buf, true)])
	}
}
