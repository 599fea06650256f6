//go:build !windows

package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/web/webtest"
)

// The server as serve builds it: a client that sends its headers or its body too
// slowly is cut off at the deadline, unauthenticated or not, while an execution that
// started at the same time runs on well past both deadlines to its answer.
func TestServerDeadlines(t *testing.T) {
	if testing.Short() {
		t.Skip("a real server and a slow device: not in -short")
	}
	const deadline = 300 * time.Millisecond
	l := newLab(t, 300*time.Millisecond)
	cfg, err := loadConfig("", func(string) string { return "" }, nil,
		map[string]string{"server.data": l.data, "server.listen": "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	logs := &webtest.Buffer{}
	getenv := func(k string) string {
		if k == "FIELDKIT_SECRET_KEY" {
			return l.key
		}
		return ""
	}
	go func() {
		done <- serve(ctx, env{getenv: getenv, stdout: logs, stderr: logs}, cfg,
			serveOptions{ready: ready, headerTimeout: deadline, bodyTimeout: deadline})
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(20 * time.Second):
		t.Fatal("not ready")
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	addr := strings.TrimPrefix(base, "http://")
	s := &server{base: base}

	var wg sync.WaitGroup
	var execStatus int
	var execOut map[string]any
	var execErr error
	var execTook time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		execStatus, execOut, execErr = s.execute(l)
		execTook = time.Since(start)
	}()
	slow := []struct{ what, head, piece string }{
		{"headers, public", "GET /api/status/ HTTP/1.1\r\nHost: x\r\n", "X-Slow: 1\r\n"},
		{"headers, authenticated", "GET /api/dcim/sites/ HTTP/1.1\r\nHost: x\r\nAuthorization: Token " + l.token + "\r\n", "X-Slow: 1\r\n"},
		{"body, public", "POST /api/users/tokens/provision/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", " "},
		{"body, no credentials", "POST /api/dcim/sites/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", " "},
		{"body, authenticated", "POST /api/dcim/sites/ HTTP/1.1\r\nHost: x\r\nAuthorization: Token " + l.token +
			"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", " "},
	}
	for _, c := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			// 100 pieces, one every 50 ms: 5 s if the server waited for all of them.
			sent, answer := webtest.Trickle(addr, c.head, c.piece, 100, 50*time.Millisecond)
			if took := time.Since(start); sent >= 50 || took > 2500*time.Millisecond {
				t.Errorf("slow %s: the server took %d of 100 pieces over %v (then %s)", c.what, sent, took, answer)
			}
		}()
	}
	wg.Wait()
	if execErr != nil || execStatus != 200 || execOut["success"] != true {
		t.Fatalf("the execution beside the slow clients: %d %v %v", execStatus, execOut, execErr)
	}
	t.Logf("the execution took %v beside the slow clients", execTook)
	if execTook < 3*deadline {
		t.Fatalf("the execution took %v, not long enough to outlast the %v deadlines", execTook, deadline)
	}
}

// The deadlines serve puts on a connection are on reading the request alone: no
// ReadTimeout or WriteTimeout, which would cover the whole exchange and cut an
// execution (up to its own timeout) or a long export in the middle of its answer.
func TestServerHasNoWholeRequestTimeouts(t *testing.T) {
	srv := newHTTPServer(http.NotFoundHandler(), slog.New(slog.NewTextHandler(io.Discard, nil)), 0)
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Fatalf("ReadTimeout %v, WriteTimeout %v: a long execution or export would be cut", srv.ReadTimeout, srv.WriteTimeout)
	}
	if srv.ReadHeaderTimeout != headerTimeout || srv.ReadHeaderTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Fatalf("ReadHeaderTimeout %v, IdleTimeout %v", srv.ReadHeaderTimeout, srv.IdleTimeout)
	}
}
