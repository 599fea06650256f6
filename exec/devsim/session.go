package devsim

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// session is one SSH session channel: a terminal with line editing, the
// pager, fault injection and the CLI state of one logged-in user.
type session struct {
	d    *Device
	conn net.Conn
	ch   ssh.Channel
	user string
	ctx  context.Context

	mu            sync.Mutex // guards the window fields
	pty           bool
	width, height int

	in      chan []byte
	quit    chan struct{}
	pending []byte
	echo    []byte
	lastCR  bool

	cli cliState
}

// slowLineDelay is how fast FaultSlowOutput trickles lines.
const slowLineDelay = 200 * time.Millisecond

// startReader copies channel input into s.in, recording every byte. With
// eofHangsUp, the end of the input closes s.in, which ends a CLI the way
// a hang-up does; without it (an exec command) s.in just stays empty, the
// way a command that does not read its standard input keeps running after
// the client closed it, until it ends or the channel is closed (s.ctx).
func (s *session) startReader(eofHangsUp bool) (wait func()) {
	s.in = make(chan []byte, 16)
	s.quit = make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if eofHangsUp {
			defer close(s.in)
		}
		buf := make([]byte, 4096)
		for {
			n, err := s.ch.Read(buf)
			if n > 0 && !s.d.isFrozen(s.conn) {
				b := append([]byte(nil), buf[:n]...)
				s.d.record(b)
				select {
				case s.in <- b:
				case <-s.quit:
					return
				case <-s.ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return func() { close(s.quit); <-done }
}

func (s *session) write(text string) error {
	if text == "" {
		return nil
	}
	_, err := s.ch.Write([]byte(text))
	return err
}

func (s *session) flushEcho() {
	if len(s.echo) > 0 {
		s.ch.Write(s.echo)
		s.echo = s.echo[:0]
	}
}

func (s *session) readByte() (byte, error) {
	for len(s.pending) == 0 {
		s.flushEcho()
		select {
		case b, ok := <-s.in:
			if !ok {
				return 0, errClosed
			}
			s.pending = b
		case <-s.ctx.Done():
			return 0, errClosed
		}
	}
	c := s.pending[0]
	s.pending = s.pending[1:]
	return c, nil
}

// Control characters the line editor understands.
const (
	ctrlC = 0x03
	ctrlU = 0x15
	ctrlZ = 0x1a
	esc   = 0x1b
)

// readLine reads one line with terminal editing. A line ends with CR, LF or
// CRLF; Ctrl-Z returns "\x1a" (config "end" on Cisco-like devices) and
// Ctrl-C returns "\x03".
func (s *session) readLine(echo bool) (string, error) {
	var buf []byte
	for {
		c, err := s.readByte()
		if err != nil {
			return "", err
		}
		if s.lastCR && c == '\n' {
			s.lastCR = false
			continue
		}
		s.lastCR = c == '\r'
		switch c {
		case '\r', '\n':
			if echo && s.d.v.repaint {
				// The CLI redraws the finished line before moving on.
				s.echo = append(s.echo, "\r"+s.prompt()+string(buf)...)
			}
			s.echo = append(s.echo, "\r\n"...)
			s.flushEcho()
			return string(buf), nil
		case 0x7f, 0x08:
			if len(buf) > 0 {
				buf = buf[:len(buf)-1]
				if echo {
					s.echo = append(s.echo, "\b \b"...)
				}
			}
		case ctrlU:
			if echo {
				s.echo = append(s.echo, strings.Repeat("\b \b", len(buf))...)
			}
			buf = buf[:0]
		case ctrlC, ctrlZ:
			s.echo = append(s.echo, "^"+string(c+'@')+"\r\n"...)
			s.flushEcho()
			return string([]byte{c}), nil
		case esc:
			s.skipEscape()
		default:
			if c >= 0x20 && c != 0x7f {
				buf = append(buf, c)
				if echo {
					s.echo = append(s.echo, c)
				}
			}
		}
	}
}

// skipEscape drops an ANSI escape sequence (arrow keys and the like).
func (s *session) skipEscape() {
	c, err := s.readByte()
	if err != nil || (c != '[' && c != 'O') {
		return
	}
	for {
		c, err := s.readByte()
		if err != nil || (c >= 0x40 && c <= 0x7e) {
			return
		}
	}
}

// readKey reads one key press for the pager, treating CRLF as one key.
func (s *session) readKey() (byte, error) {
	for {
		c, err := s.readByte()
		if err != nil {
			return 0, err
		}
		if s.lastCR && c == '\n' {
			s.lastCR = false
			continue
		}
		s.lastCR = c == '\r'
		return c, nil
	}
}

// hang implements FaultSilence: swallow input until the client gives up
// (hangs up, or closes the channel of an exec command).
func (s *session) hang() error {
	for {
		if _, err := s.readByte(); err != nil {
			return err
		}
	}
}

// respond sleeps the device latency, then prints lines through the pager
// and the current fault. Endless output and disconnects hit show commands
// only, so that a driver's paging-off command (which prints a line on EOS
// and Junos) still gets through.
func (s *session) respond(lines []string, show bool) error {
	fault, lat := s.d.snapshot()
	if !sleep(s.ctx, lat) {
		return errClosed
	}
	nl := s.newline()
	pace := s.cli.pace
	s.cli.pace = 0
	switch {
	case pace > 0 && fault == FaultNone:
		return s.trickle(lines, pace)
	case fault == FaultEndlessOutput && show:
		return s.endless(lines)
	case fault == FaultDisconnect && show && len(lines) > 0:
		text := strings.Join(lines, nl) + nl
		s.write(text[:len(text)/2])
		s.conn.Close()
		return errClosed
	case fault == FaultTruncate && show:
		return s.page(lines[:len(lines)/2], lat)
	case fault == FaultSlowOutput:
		for _, l := range lines {
			if err := s.write(l + nl); err != nil {
				return err
			}
			if !sleep(s.ctx, slowLineDelay) {
				return errClosed
			}
		}
		return nil
	}
	return s.page(lines, lat)
}

// trickle prints lines at pace per line, a screenful at a time, as a device does that
// gathers what it prints; it does not page.
func (s *session) trickle(lines []string, pace time.Duration) error {
	const batch = 20
	nl := s.newline()
	for len(lines) > 0 {
		k := min(batch, len(lines))
		if err := s.write(strings.Join(lines[:k], nl) + nl); err != nil {
			return err
		}
		lines = lines[k:]
		if !sleep(s.ctx, time.Duration(k)*pace) {
			return errClosed
		}
	}
	return nil
}

func (s *session) newline() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pty {
		return "\r\n"
	}
	return "\n"
}

// page prints lines, stopping at the vendor's pager every screen while
// paging is on: space shows the next screen, enter one more line, anything
// else (q) stops the output.
func (s *session) page(lines []string, lat time.Duration) error {
	n := s.cli.pageLen - 1
	noMore := s.cli.noMore
	s.cli.noMore = false
	v := s.d.v
	if noMore || s.cli.pageLen <= 0 || len(lines) <= s.cli.pageLen || (v.pager == "" && v.pagerAt == nil) {
		return s.writeLines(lines, true)
	}
	shown := 0
	for len(lines) > 0 {
		k := min(n, len(lines))
		if err := s.writeLines(lines[:k], k == len(lines)); err != nil {
			return err
		}
		lines, shown = lines[k:], shown+k
		if len(lines) == 0 {
			return nil
		}
		pager := v.pager
		if v.pagerAt != nil {
			pager = v.pagerAt(shown-k+1, shown)
		}
		erase := v.pagerErase
		if erase == "" {
			erase = strings.Repeat("\b", len(pager)) + strings.Repeat(" ", len(pager)) + strings.Repeat("\b", len(pager))
		}
		if err := s.write(pager); err != nil {
			return err
		}
		c, err := s.readKey()
		if err != nil {
			return err
		}
		s.write(erase)
		switch c {
		case ' ':
			n = s.cli.pageLen - 1
		case '\r', '\n':
			n = 1
		default:
			return nil
		}
		if !sleep(s.ctx, lat) {
			return errClosed
		}
	}
	return nil
}

// writeLines prints lines; the newline after the last line of a reply
// (final) is left out with Config.PromptOnLastLine.
func (s *session) writeLines(lines []string, final bool) error {
	if len(lines) == 0 {
		return nil
	}
	nl := s.newline()
	text := strings.Join(lines, nl)
	if !final || !s.d.cfg.PromptOnLastLine {
		text += nl
	}
	return s.write(text)
}

// endless repeats a show command's output until the client goes away or
// sends Ctrl-C; SSH flow control paces it to the client's reading speed.
func (s *session) endless(lines []string) error {
	if len(lines) == 0 {
		lines = []string{""}
	}
	nl := s.newline()
	var chunk strings.Builder
	for i := 0; ; i++ {
		chunk.Reset()
		for chunk.Len() < 32<<10 {
			chunk.WriteString(lines[i%len(lines)] + nl)
			i++
		}
		if err := s.write(chunk.String()); err != nil {
			return err
		}
		select {
		case b, ok := <-s.in:
			if !ok {
				return errClosed
			}
			if strings.IndexByte(string(b), ctrlC) >= 0 {
				return s.write("^C" + nl)
			}
		case <-s.ctx.Done():
			return errClosed
		default:
		}
	}
}

// runShell runs the vendor CLI on an interactive session until the user
// logs out or the connection ends.
func (s *session) runShell() {
	wait := s.startReader(true)
	defer wait()
	defer s.ch.Close()
	status := 0
	if err := s.d.v.shell(s); err != nil {
		status = 255
	}
	s.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
}

// runExec answers one exec request and closes the channel with the
// command's exit status.
func (s *session) runExec(command string) {
	wait := s.startReader(false)
	defer wait()
	defer s.ch.Close()
	s.d.record([]byte(command + "\n"))
	s.d.recordCommand(command)
	if s.d.takeHangUp(command) {
		s.d.v.exec(s, command)
		s.conn.Close()
		return
	}
	fault, lat := s.d.snapshot()
	if fault == FaultSilence {
		s.hang()
		return
	}
	if !sleep(s.ctx, lat) {
		return
	}
	stdout, stderr, status := s.d.v.exec(s, command)
	nl := s.newline()
	if nl != "\n" {
		stdout = strings.ReplaceAll(stdout, "\n", nl)
	}
	switch {
	case fault == FaultDisconnect && stdout != "":
		s.write(stdout[:len(stdout)/2])
		s.conn.Close()
		return
	case fault == FaultEndlessOutput:
		s.endless(strings.Split(strings.TrimSuffix(stdout, nl), nl))
		return
	case fault == FaultSlowOutput:
		for _, l := range strings.SplitAfter(stdout, nl) {
			s.write(l)
			if !sleep(s.ctx, slowLineDelay) {
				return
			}
		}
	default:
		s.write(stdout)
	}
	if stderr != "" {
		s.ch.Stderr().Write([]byte(stderr))
	}
	s.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
}
