package exec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"fieldkit/web/webtest"
)

// fakeShell is a Session wired to an in-memory shell instead of SSH.
func fakeShell(driver, base string) (*Session, *webtest.Buffer) {
	in := &webtest.Buffer{}
	s := &Session{d: drivers[driver], sink: newSink(), stdin: in, base: base,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return s, in
}

func TestReadUntilPromptOnlyAtEnd(t *testing.T) {
	s, _ := fakeShell("cisco_ios", "lab-r1")
	s.sink.Write([]byte("show run | i hostname\r\nlab-r1#\r\nhostname lab-r1\r\n"))
	go func() {
		time.Sleep(20 * time.Millisecond)
		s.sink.Write([]byte("\x1b[Klab-r1#"))
	}()
	r, err := s.readUntil(context.Background(), readOpts{needNewline: true, limit: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.prompt != "lab-r1#" || !strings.Contains(string(r.raw), "hostname lab-r1") {
		t.Errorf("stopped early: prompt %q, raw %q", r.prompt, r.raw)
	}
}

func TestReadUntilAnswersPager(t *testing.T) {
	s, in := fakeShell("cisco_ios", "lab-r1")
	s.sink.Write([]byte("show log\r\nline 1\r\n --More-- "))
	go func() {
		for !strings.Contains(in.String(), " ") {
			time.Sleep(time.Millisecond)
		}
		s.sink.Write([]byte("\b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\bline 2\r\nlab-r1#"))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := s.readUntil(ctx, readOpts{needNewline: true, limit: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if in.String() != " " {
		t.Errorf("sent %q, want one space", in.String())
	}
	if got := drivers["cisco_ios"].cleanOutput(normalize(string(r.raw)), "show log", r.prompt); got != "line 1\nline 2" {
		t.Errorf("output %q", got)
	}
}

func TestReadUntilTimeoutKeepsPartialOutput(t *testing.T) {
	s, _ := fakeShell("arista_eos", "lab-eos1")
	s.sink.Write([]byte("show tech\r\npart one\r\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := s.readUntil(ctx, readOpts{needNewline: true, limit: 1 << 10})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > time.Second || !strings.Contains(string(r.raw), "part one") {
		t.Errorf("after %v raw %q", time.Since(start), r.raw)
	}
}

func TestReadUntilDisconnect(t *testing.T) {
	s, _ := fakeShell("cisco_nxos", "lab-nx1")
	s.sink.Write([]byte("show ver\r\nhalf"))
	s.sink.close()
	r, err := s.readUntil(context.Background(), readOpts{limit: 1 << 10})
	if !errors.Is(err, errDisconnected) || string(r.raw) != "show ver\r\nhalf" {
		t.Errorf("err %v raw %q", err, r.raw)
	}
}

// A line that looks like a prompt of another host is taken only after the
// device stays quiet, which covers a "hostname" change.
func TestReadUntilForeignPromptNeedsQuiet(t *testing.T) {
	s, _ := fakeShell("cisco_ios", "lab-r1")
	s.sink.Write([]byte("hostname lab-r2\r\nlab-r2(config)#"))
	start := time.Now()
	r, err := s.readUntil(context.Background(), readOpts{needNewline: true, limit: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < quietPrompt/2 || r.prompt != "lab-r2(config)#" || s.base != "lab-r2" {
		t.Errorf("waited %v, prompt %q, base %q", waited, r.prompt, s.base)
	}
}

func TestReadUntilCapsOutput(t *testing.T) {
	s, _ := fakeShell("generic", "")
	s.sink.Write([]byte(strings.Repeat("0123456789\r\n", 100) + "op@lab-host:~$ "))
	r, err := s.readUntil(context.Background(), readOpts{limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.raw) != 50 || !r.truncated || r.prompt == "" {
		t.Errorf("len %d truncated %v prompt %q", len(r.raw), r.truncated, r.prompt)
	}
}

func TestCapOutput(t *testing.T) {
	out, cut := capOutput("héllo world", 2, false)
	if out != "h\n[output truncated at 2 bytes]" || !cut {
		t.Errorf("got %q %v", out, cut)
	}
	if out, cut := capOutput("short", 10, false); out != "short" || cut {
		t.Errorf("got %q %v", out, cut)
	}
}

// TestPooledCopy: a stream read through pooledCopy arrives whole, in order, across
// more than one buffer, and io.Copy no longer makes its own 32 KB buffer for it.
func TestPooledCopy(t *testing.T) {
	src := []byte(strings.Repeat("Gi0/1 is up, line protocol is up\r\n", 3000)) // 102 KB
	// The structs hide bytes.Reader's WriteTo and bytes.Buffer's ReadFrom, as an SSH
	// channel and the sink have neither.
	reader := func() io.Reader { return struct{ io.Reader }{bytes.NewReader(src)} }
	var got bytes.Buffer
	n, err := io.Copy(pooledCopy{struct{ io.Writer }{&got}}, reader())
	if err != nil || n != int64(len(src)) || !bytes.Equal(got.Bytes(), src) {
		t.Fatalf("copied %d of %d bytes (err %v), equal %v", n, len(src), err, bytes.Equal(got.Bytes(), src))
	}
	const runs = 200
	discard := struct{ io.Writer }{io.Discard}
	io.Copy(pooledCopy{discard}, reader()) // the pool's first buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		io.Copy(pooledCopy{discard}, reader())
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per >= 8<<10 {
		t.Errorf("%d bytes allocated a copy, want under 8 KB (io.Copy's own buffer is 32 KB)", per)
	}
}
