// Package webtest holds what the tests of more than one package share: what they do
// to a FieldKit server at the wire (a slow client, byte by byte), and a buffer safe to
// read while another goroutine writes it.
package webtest

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"time"
)

// Trickle sends head, then one more piece every step, up to n pieces, and returns how
// many pieces the server took before it answered or closed the connection, and the
// first line of what it answered ("closed" when it closed without one).
func Trickle(addr, head, piece string, n int, step time.Duration) (sent int, answer string) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err.Error()
	}
	defer conn.Close()
	fmt.Fprint(conn, head)
	got := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			line = "closed"
		}
		got <- strings.TrimSpace(line)
	}()
	for sent = 0; sent < n; sent++ {
		select {
		case s := <-got:
			return sent, s
		case <-time.After(step):
		}
		if _, err := conn.Write([]byte(piece)); err != nil {
			return sent, "closed"
		}
	}
	select {
	case s := <-got:
		return sent, s
	case <-time.After(5 * time.Second):
		return sent, "no answer, connection still open"
	}
}
