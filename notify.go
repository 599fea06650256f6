package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sdNotify tells systemd the server's state (READY=1, RELOADING=1, STOPPING=1, STATUS=…):
// one datagram to the unix socket named by $NOTIFY_SOCKET, which systemd sets for a
// Type=notify unit. Elsewhere the variable is unset and this does nothing. The protocol
// is this one write, so it is written here rather than taken from a library.
func sdNotify(getenv func(string) string, state string) {
	addr := getenv("NOTIFY_SOCKET")
	if addr == "" {
		return
	}
	if strings.HasPrefix(addr, "@") {
		addr = "\x00" + addr[1:] // an abstract socket
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return // nobody to tell: systemd then times the start out, which says enough
	}
	defer conn.Close()
	_, _ = conn.Write([]byte(state))
}

// keepStarting tells systemd every interval, until stop is called, that the start goes
// on: opening the database may run a migration longer than the unit's TimeoutStartSec
// (the rewrite of the log table took 166 s at five million logs), and systemd would
// kill it, undo it, and start it again, for ever. Each notice (EXTEND_TIMEOUT_USEC)
// asks for three intervals more, so a start that hangs is still timed out; a start
// shorter than one interval sends nothing. stop returns once no notice can follow.
func keepStarting(getenv func(string) string, every time.Duration, status string) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sdNotify(getenv, fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d\nSTATUS=%s", (3*every).Microseconds(), status))
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// removePidFile removes the pid file if it is still this process's.
func removePidFile(data string) {
	b, err := os.ReadFile(pidFile(data))
	if err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(os.Getpid()) {
		os.Remove(filepath.Clean(pidFile(data)))
	}
}
