package exec

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Pool keeps SSH sessions open between executions, so that a person running five
// commands on a device waits for one login. A kept session belongs to one device and
// one credential set in one version: a job presenting another set, a set changed since
// (edit, deactivation, new token), other credentials or other connection details never
// gets it. A session waits at most PoolConfig.Idle unused; a device never has more than
// PoolConfig.PerDevice sessions open, busy or idle, so its few vty lines stay free for
// people. A job that finds them all busy waits for one, within its first step's
// timeout.
//
// Before each use a kept session is checked (see Session.attempt) and after it is put
// back in the mode it was opened in (Session.settle); one that cannot be is closed.
//
// The nil *Pool is valid: every Run opens a session and closes it, without limit.
type Pool struct {
	log *slog.Logger

	mu      sync.Mutex
	idle    time.Duration
	perDev  int
	closed  bool
	devices map[int64]*devSessions
	stats   PoolStats
}

// PoolConfig is the pool's settings; Configure changes them while it runs.
type PoolConfig struct {
	Idle      time.Duration // how long a session is kept unused; 0 closes each after use
	PerDevice int           // sessions open at once per device; at least 1
	Logger    *slog.Logger  // slog.Default() when nil
}

// PoolStats counts what the pool holds and has done.
type PoolStats struct {
	Open, Idle int    // sessions open (busy or idle), and idle among them
	Logins     uint64 // sessions opened
	Reuses     uint64 // jobs that ran on a kept session
	Replaced   uint64 // kept sessions found dead when used and replaced by a login
}

// devSessions is one device's sessions.
type devSessions struct {
	open    int // sessions open or being opened: what counts against PerDevice
	idle    []*kept
	busy    map[*lease]bool
	changed chan struct{} // closed (and replaced) whenever a session is freed
}

// BusyError reports a job that found every session the device may have in use until
// its context ended.
type BusyError struct {
	Name  string
	Limit int
	Err   error // the context's error
}

// Error implements error.
func (e *BusyError) Error() string {
	return fmt.Sprintf("exec: waiting for a session to %s (all %d allowed in use): %v", e.Name, e.Limit, e.Err)
}

// Unwrap gives the context's error.
func (e *BusyError) Unwrap() error { return e.Err }

// kept is an idle session.
type kept struct {
	s     *Session
	key   poolKey
	timer *time.Timer
}

// lease is a session taken for one job.
type lease struct {
	s      *Session
	key    poolKey
	dev    int64
	reused bool // the session was kept: its first command is checked (Session.attempt)
	doomed bool // closed at release: its set or the device's host key changed meanwhile
}

// poolKey is what a session may be reused for.
type poolKey struct {
	target     Target // timeouts zeroed: they belong to a request, not to a session
	setID      int64
	setVersion int64
	creds      [sha256.Size]byte
	policy     HostKeyPolicy
}

// NewPool makes a pool with the given settings.
func NewPool(c PoolConfig) *Pool {
	p := &Pool{log: c.Logger, devices: map[int64]*devSessions{}}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.Configure(c)
	return p
}

// Configure changes the idle time and the per-device limit. Idle sessions beyond the
// new limit, or all of them when Idle is 0, are closed; the others keep the new idle
// time from when they were last used. Busy sessions over the limit close when released.
func (p *Pool) Configure(c PoolConfig) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.idle, p.perDev = max(c.Idle, 0), max(c.PerDevice, 1)
	var drop []*Session
	for _, d := range p.devices {
		for len(d.idle) > 0 && (p.idle == 0 || d.open > p.perDev) {
			drop = append(drop, p.unkeep(d, d.idle[0]))
		}
		for _, k := range d.idle {
			k.timer.Reset(p.idle)
		}
	}
	p.mu.Unlock()
	closeAll(drop)
}

// Stats returns what the pool holds and has done.
func (p *Pool) Stats() PoolStats {
	if p == nil {
		return PoolStats{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stats
	for _, d := range p.devices {
		st.Open += d.open
		st.Idle += len(d.idle)
	}
	return st
}

// CloseSet closes the sessions of a credential set: it was changed, deactivated, given
// a new token or deleted. A session in use finishes its job first.
func (p *Pool) CloseSet(setID int64) {
	p.closeWhere(func(k poolKey) bool { return k.setID == setID })
}

// CloseDevice closes a device's sessions: its trusted host key was cleared or changed.
// A session in use finishes its job first.
func (p *Pool) CloseDevice(deviceID int64) {
	p.closeWhere(func(k poolKey) bool { return k.target.DeviceID == deviceID })
}

func (p *Pool) closeWhere(match func(poolKey) bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	var drop []*Session
	for _, d := range p.devices {
		for i := 0; i < len(d.idle); {
			if k := d.idle[i]; match(k.key) {
				drop = append(drop, p.unkeep(d, k))
				continue
			}
			i++
		}
		for l := range d.busy {
			if match(l.key) {
				l.doomed = true
			}
		}
	}
	p.mu.Unlock()
	closeAll(drop)
}

// Close closes every idle session and keeps none from now on; sessions in use close
// when their job ends. The server calls it once its requests are done.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	var drop []*Session
	for _, d := range p.devices {
		for len(d.idle) > 0 {
			drop = append(drop, p.unkeep(d, d.idle[0]))
		}
	}
	p.mu.Unlock()
	closeAll(drop)
}

// unkeep removes an idle session from its device and frees its slot; the caller
// closes the session outside the lock.
func (p *Pool) unkeep(d *devSessions, k *kept) *Session {
	k.timer.Stop()
	for i, x := range d.idle {
		if x == k {
			d.idle = append(d.idle[:i], d.idle[i+1:]...)
			break
		}
	}
	d.open--
	d.signal()
	return k.s
}

func (d *devSessions) signal() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// closeAll closes sessions at once, each within its logout bound.
func closeAll(ss []*Session) {
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Close()
		}()
	}
	wg.Wait()
}

// keyOf is the key a job's session is kept under.
func keyOf(j *Job) poolKey {
	t := j.Target
	t.ConnectTimeout, t.CommandTimeout = 0, 0
	return poolKey{target: t, setID: j.SetID, setVersion: j.SetVersion, creds: j.Creds.fingerprint(),
		policy: j.Options.policy()}
}

// fingerprint is a digest of the credentials, so that a kept session is never handed to
// a job whose secrets differ, whatever its set says.
func (c Credentials) fingerprint() [sha256.Size]byte {
	h := sha256.New()
	for _, f := range []string{c.Username, c.Password, c.EnableSecret, string(c.EnableMode), string(c.PrivateKey)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// acquire finds a kept session for the job, or opens one when the device has a free
// slot (closing an idle session of another key to make one), or waits for a slot
// within wait. open bounds the login itself.
func (p *Pool) acquire(wait, open context.Context, j *Job) (*lease, error) {
	key := keyOf(j)
	if p == nil {
		s, err := Open(open, j.Target, j.Creds, j.Options)
		if err != nil {
			return nil, err
		}
		return &lease{s: s, key: key}, nil
	}
	l, evict, err := p.take(wait, key, j.Target.Name)
	if evict != nil {
		_ = evict.Close()
	}
	if err != nil {
		return nil, err
	}
	if l.s != nil {
		l.s.o = j.Options
		return l, nil
	}
	if err := p.login(open, l, j); err != nil {
		return nil, err
	}
	return l, nil
}

// take reserves a session for key: a kept one (l.s set), or a slot to open one in
// (l.s nil). evict, when not nil, is an idle session of another key whose slot was
// taken; the caller closes it.
func (p *Pool) take(ctx context.Context, key poolKey, name string) (l *lease, evict *Session, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.devices[key.target.DeviceID]
	if d == nil {
		d = &devSessions{busy: map[*lease]bool{}, changed: make(chan struct{})}
		p.devices[key.target.DeviceID] = d
	}
	for {
		l = &lease{key: key, dev: key.target.DeviceID}
		for i := len(d.idle) - 1; i >= 0; i-- {
			k := d.idle[i]
			if k.key != key {
				continue
			}
			s := p.unkeep(d, k)
			if !s.alive() {
				// The device hung up while the session was kept: free the slot.
				go s.Close()
				continue
			}
			d.open++
			l.s, l.reused = s, true
			d.busy[l] = true
			p.stats.Reuses++
			return l, nil, nil
		}
		switch {
		case d.open < p.perDev:
		case len(d.idle) > 0:
			evict = p.unkeep(d, d.idle[0])
		default:
			ch := d.changed
			p.mu.Unlock()
			select {
			case <-ch:
				p.mu.Lock()
				continue
			case <-ctx.Done():
				p.mu.Lock()
				return nil, nil, &BusyError{Name: name, Limit: p.perDev, Err: ctx.Err()}
			}
		}
		d.open++
		d.busy[l] = true
		return l, evict, nil
	}
}

// login opens the session of a reserved slot; a failed login frees the slot. A device
// that shows a changed host key loses its other sessions too: they were opened to
// whatever now answers at its address.
func (p *Pool) login(ctx context.Context, l *lease, j *Job) error {
	s, err := Open(ctx, j.Target, j.Creds, j.Options)
	p.mu.Lock()
	if err != nil {
		d := p.devices[l.dev]
		delete(d.busy, l)
		d.open--
		d.signal()
		p.mu.Unlock()
		if errors.Is(err, ErrHostKeyChanged) {
			p.CloseDevice(l.dev)
		}
		return err
	}
	p.stats.Logins++
	l.s = s
	p.mu.Unlock()
	return nil
}

// renew replaces a lease's session, found dead, by a fresh login in the same slot.
func (p *Pool) renew(ctx context.Context, l *lease, j *Job) error {
	_ = l.s.Close()
	l.s, l.reused = nil, false
	if p == nil {
		s, err := Open(ctx, j.Target, j.Creds, j.Options)
		l.s = s
		return err
	}
	p.mu.Lock()
	p.stats.Replaced++
	p.mu.Unlock()
	return p.login(ctx, l, j)
}

// release keeps a leased session for its next job, or closes it: when the pool keeps
// nothing, the session cannot be brought back to its known mode, its set or host key
// changed meanwhile, or the device is over its limit.
func (p *Pool) release(l *lease) {
	if l.s == nil {
		return
	}
	if p == nil {
		_ = l.s.closeWithin(2 * time.Second)
		return
	}
	p.mu.Lock()
	want := !p.closed && p.idle > 0 && !l.doomed
	p.mu.Unlock()
	ok := want && l.s.settle()
	p.mu.Lock()
	d := p.devices[l.dev]
	delete(d.busy, l)
	if ok && !p.closed && p.idle > 0 && !l.doomed && d.open <= p.perDev {
		k := &kept{s: l.s, key: l.key}
		k.timer = time.AfterFunc(p.idle, func() { p.expire(l.dev, k) })
		d.idle = append(d.idle, k)
		d.signal()
		p.mu.Unlock()
		return
	}
	d.open--
	d.signal()
	p.mu.Unlock()
	_ = l.s.closeWithin(2 * time.Second)
}

// expire closes a session that stayed idle for the whole idle time.
func (p *Pool) expire(dev int64, k *kept) {
	p.mu.Lock()
	d := p.devices[dev]
	for _, x := range d.idle {
		if x == k {
			s := p.unkeep(d, k)
			p.mu.Unlock()
			s.log.Debug("exec: idle session closed")
			_ = s.Close()
			return
		}
	}
	p.mu.Unlock()
}
