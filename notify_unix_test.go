//go:build !windows

package main

import (
	"net"
	"path/filepath"
	"testing"
	"time"
)

// keepStarting, played against a socket standing in for systemd's: a notice each
// interval asking for three more, with the status, and none once stopped.
func TestKeepStartingExtendsTheStart(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	getenv := func(k string) string {
		if k == "NOTIFY_SOCKET" {
			return sock
		}
		return ""
	}
	read := func(wait time.Duration) (string, bool) {
		conn.SetReadDeadline(time.Now().Add(wait))
		buf := make([]byte, 512)
		n, err := conn.Read(buf)
		return string(buf[:n]), err == nil
	}

	stop := keepStarting(getenv, 50*time.Millisecond, "opening the database")
	for i := range 2 {
		m, ok := read(5 * time.Second)
		if !ok || m != "EXTEND_TIMEOUT_USEC=150000\nSTATUS=opening the database" {
			t.Fatalf("notice %d: %q (%v)", i, m, ok)
		}
	}
	stop()
	// Notices sent before stop returned are already queued; none is sent after it.
	for {
		if _, ok := read(10 * time.Millisecond); !ok {
			break
		}
	}
	if m, ok := read(200 * time.Millisecond); ok {
		t.Fatalf("a notice after stop: %q", m)
	}

	// Quicker than one interval: nothing at all.
	keepStarting(getenv, time.Hour, "x")()
	if m, ok := read(100 * time.Millisecond); ok {
		t.Fatalf("a start shorter than an interval sent %q", m)
	}
}
