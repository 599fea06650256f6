package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// removePidFile removes the pid file if it is still this process's.
func removePidFile(data string) {
	b, err := os.ReadFile(pidFile(data))
	if err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(os.Getpid()) {
		os.Remove(filepath.Clean(pidFile(data)))
	}
}
