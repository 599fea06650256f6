package exec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"sync"
	"time"
)

// errDisconnected reports that the device closed the session mid-read.
var errDisconnected = errors.New("device closed the session")

// errSilent reports that a kept session sent nothing back within
// readOpts.silentAfter: its path has died without the connection closing.
var errSilent = errors.New("device stopped answering")

// sinkHigh is how much unread output the sink holds before it stops reading
// the channel, so that a chatty device is throttled by SSH flow control.
const sinkHigh = 1 << 20

// sink receives the shell's output from the SSH library's copy goroutine
// and hands it to the reader.
type sink struct {
	mu     sync.Mutex
	room   *sync.Cond
	buf    []byte
	closed bool
	wake   chan struct{} // signalled on new data or close
	done   chan struct{} // closed when the channel has ended
}

func newSink() *sink {
	k := &sink{wake: make(chan struct{}, 1), done: make(chan struct{})}
	k.room = sync.NewCond(&k.mu)
	return k
}

// Write implements io.Writer.
func (k *sink) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.buf) >= sinkHigh && !k.closed {
		k.room.Wait()
	}
	if k.closed {
		return 0, io.ErrClosedPipe
	}
	k.buf = append(k.buf, p...)
	k.signal()
	return len(p), nil
}

func (k *sink) signal() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// take returns and clears what is buffered, and whether the channel ended.
func (k *sink) take() ([]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.buf
	k.buf = nil
	k.room.Broadcast()
	return b, k.closed
}

// close marks the end of the channel; buffered data can still be taken.
func (k *sink) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.closed {
		k.closed = true
		close(k.done)
	}
	k.room.Broadcast()
	k.signal()
}

// copyBufs are the buffers a channel's output is read with (pooledCopy). The SSH
// library copies each of a session's two streams to its writer with io.Copy, which
// made a 32 KB buffer for each: 64 KB for every shell a login opens and for every
// command on the exec channel.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// pooledCopy is a stream's writer whose ReadFrom (what io.Copy calls) reads the
// channel through a buffer of copyBufs.
type pooledCopy struct{ io.Writer }

// ReadFrom implements io.ReaderFrom.
func (p pooledCopy) ReadFrom(r io.Reader) (int64, error) {
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	// The struct hides this ReadFrom (and any of the writer's), so CopyBuffer
	// reads into buf.
	return io.CopyBuffer(struct{ io.Writer }{p.Writer}, r, *buf)
}

// capture keeps the first limit bytes of a command's output and a short
// tail of everything for prompt matching.
type capture struct {
	limit     int
	kept      []byte
	tail      []byte
	truncated bool
	streamed  int // how much of kept has gone to the stream
}

// fresh returns the complete lines of kept not yet streamed, and marks them streamed.
// Only whole lines go: the last one may still be a pager prompt to drop, or a line
// the device is still writing over.
func (c *capture) fresh() []byte {
	end := bytes.LastIndexByte(c.kept, '\n') + 1
	if end <= c.streamed {
		return nil
	}
	out := c.kept[c.streamed:end]
	c.streamed = end
	return out
}

const tailKeep = 4096

func (c *capture) add(p []byte) {
	room := max(c.limit-len(c.kept), 0)
	if room < len(p) {
		c.truncated = true
	}
	c.kept = append(c.kept, p[:min(room, len(p))]...)
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*tailKeep {
		c.tail = append([]byte(nil), c.tail[len(c.tail)-tailKeep:]...)
	}
}

// dropLastLine removes the current (unterminated) line, e.g. a pager prompt.
func (c *capture) dropLastLine() {
	n := len(c.tail) - (bytes.LastIndexByte(c.tail, '\n') + 1)
	c.tail = c.tail[:len(c.tail)-n]
	if !c.truncated && n <= len(c.kept) {
		c.kept = c.kept[:len(c.kept)-n]
	}
}

// lastLine is the normalized text after the last newline of the tail. Without escape
// sequences (one may span a newline), nothing normalize does crosses a newline, so
// the last raw line alone gives the same text: the tail is looked at after every chunk
// read, and normalizing all of it each time copied up to 8 KiB per chunk.
func (c *capture) lastLine() string {
	tail := c.tail
	if bytes.IndexByte(tail, 0x1b) < 0 {
		tail = tail[bytes.LastIndexByte(tail, '\n')+1:]
	}
	return lastLine(normalize(string(tail)))
}

// readOpts says what ends a read.
type readOpts struct {
	password    bool // a password or enable user name prompt also ends the read
	needNewline bool // a prompt counts only after a complete (echo) line
	limit       int
	stream      func(text string) // receives whole lines as they are read
	silentAfter time.Duration     // > 0: errSilent when no byte at all arrives within it
}

// readResult is what one read gathered.
type readResult struct {
	raw       []byte
	truncated bool
	prompt    string // the prompt that ended the read
	password  bool   // ended at a password prompt
	user      bool   // ended at an enable user name prompt
}

// quietPrompt is how long a line that looks like a prompt but does not start
// with the known host name must stay unanswered before it is accepted (the
// host name may just have been changed).
const quietPrompt = time.Second

// readUntil reads the shell until a prompt (or a password prompt), answering
// pagers on the way. It returns what it read so far with ctx.Err() on expiry
// or errDisconnected when the device hangs up.
func (s *Session) readUntil(ctx context.Context, o readOpts) (readResult, error) {
	c := &capture{limit: o.limit}
	var quiet, silent <-chan time.Time
	var pending string // a prompt of another host name, waiting out quietPrompt
	if o.silentAfter > 0 {
		t := time.NewTimer(o.silentAfter)
		defer t.Stop()
		silent = t.C
	}
	for {
		data, closed := s.sink.take()
		if len(data) > 0 {
			quiet, silent = nil, nil
			c.add(data)
			r, done, foreign := s.examine(c, o)
			if o.stream != nil {
				if text := c.fresh(); len(text) > 0 {
					o.stream(normalize(string(text)))
				}
			}
			if done {
				return r, nil
			}
			if foreign != "" {
				pending, quiet = foreign, time.After(quietPrompt)
			}
		}
		if closed {
			return c.result(""), errDisconnected
		}
		select {
		case <-s.sink.wake:
		case <-quiet:
			s.base = s.d.baseOf(pending)
			return c.result(pending), nil
		case <-silent:
			return c.result(""), errSilent
		case <-ctx.Done():
			return c.result(""), ctx.Err()
		}
	}
}

// examine looks at the end of what was read: a pager or a question is
// answered, a prompt or password prompt ends the read. A prompt that does
// not start with the known host name is returned as foreign instead.
func (s *Session) examine(c *capture, o readOpts) (r readResult, done bool, foreign string) {
	line := c.lastLine()
	for _, p := range s.d.pagers {
		if p.MatchString(line) {
			c.dropLastLine()
			s.write(" ")
			return readResult{}, false, ""
		}
	}
	for _, q := range s.d.questions {
		if q.re.MatchString(line) {
			s.write(q.answer)
			return readResult{}, false, ""
		}
	}
	if o.password {
		for _, ask := range []struct {
			re   *regexp.Regexp
			user bool
		}{{s.d.passwordPrompt, false}, {s.d.enableUser, true}} {
			if ask.re != nil && ask.re.MatchString(line) {
				r = c.result(line)
				r.password, r.user = !ask.user, ask.user
				return r, true, ""
			}
		}
	}
	if o.needNewline && !bytes.ContainsRune(c.tail, '\n') {
		return readResult{}, false, ""
	}
	prompt := line
	if !s.d.prompt.MatchString(line) {
		i := s.d.gluedPrompt(line, s.base)
		if i < 0 {
			return readResult{}, false, ""
		}
		prompt = line[i:]
	}
	if s.base == "" || hasBase(prompt, s.base) {
		return c.result(prompt), true, ""
	}
	return readResult{}, false, prompt
}

func (c *capture) result(prompt string) readResult {
	return readResult{raw: c.kept, truncated: c.truncated, prompt: prompt}
}

// write sends text to the shell. A failed write shows up as a disconnect on
// the next read, so its error is not reported here.
func (s *Session) write(text string) {
	_, _ = io.WriteString(s.stdin, text)
}

// writeLine sends one line with the platform's line end.
func (s *Session) writeLine(line string) { s.write(line + s.d.newline()) }
