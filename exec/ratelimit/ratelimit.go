// Package ratelimit limits successful executions per device in a trailing window. It
// is kept in memory (seeded from the logs at start-up, so a restart does not reset it);
// an execution in flight holds a slot, so concurrent requests cannot overshoot.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Limiter counts successful executions per device.
type Limiter struct {
	mu      sync.Mutex
	limit   int
	window  time.Duration
	off     bool     // every execution may run; successes are still recorded
	bypassU []string // usernames the limit does not apply to
	bypassG []string // group names the limit does not apply to
	now     func() time.Time
	devices map[int64]*device
}

// Policy is a limiter's settings, changeable while it runs (a configuration reload).
type Policy struct {
	Enabled      bool
	Limit        int
	Window       time.Duration
	BypassUsers  []string
	BypassGroups []string
}

// Configure applies a policy. Past successes are kept: a shorter window or a lower
// limit applies to them at once (a longer window counts only those still remembered).
func (l *Limiter) Configure(p Policy) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.off, l.limit, l.window = !p.Enabled, p.Limit, p.Window
	l.bypassU, l.bypassG = append([]string(nil), p.BypassUsers...), append([]string(nil), p.BypassGroups...)
}

// Enabled reports whether the limit applies.
func (l *Limiter) Enabled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.off
}

// Bypass returns the usernames and group names the limit does not apply to.
func (l *Limiter) Bypass() (users, groups []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bypassU, l.bypassG
}

type device struct {
	done     []time.Time // successful completions, oldest first
	inflight int
}

// New makes a limiter of limit successes per window.
func New(limit int, window time.Duration) *Limiter {
	return &Limiter{limit: limit, window: window, now: time.Now, devices: map[int64]*device{}}
}

// SetClock replaces the clock (tests).
func (l *Limiter) SetClock(now func() time.Time) { l.now = now }

// Limit is the configured number of successes per window.
func (l *Limiter) Limit() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}

// Window is the configured window.
func (l *Limiter) Window() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.window
}

// Seed records past successes of a device (from the command logs).
func (l *Limiter) Seed(deviceID int64, at ...time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.dev(deviceID)
	for _, t := range at {
		i := len(d.done)
		for i > 0 && d.done[i-1].After(t) {
			i--
		}
		d.done = append(d.done, time.Time{})
		copy(d.done[i+1:], d.done[i:])
		d.done[i] = t
	}
	l.trim(d)
}

func (l *Limiter) dev(id int64) *device {
	d := l.devices[id]
	if d == nil {
		d = &device{}
		l.devices[id] = d
	}
	return d
}

func (l *Limiter) trim(d *device) {
	cut := l.now().Add(-l.window)
	i := 0
	for i < len(d.done) && !d.done[i].After(cut) {
		i++
	}
	d.done = d.done[i:]
}

// Status is a device's standing.
type Status struct {
	Count      int           // successes in the window plus executions in flight
	Successful int           // successes in the window
	InFlight   int           // executions holding a slot
	Limit      int           //
	Window     time.Duration //
	RetryAfter time.Duration // until a slot frees (0 when one is free)
}

// Status reports a device's standing without taking a slot.
func (l *Limiter) Status(deviceID int64) Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status(l.dev(deviceID))
}

func (l *Limiter) status(d *device) Status {
	l.trim(d)
	s := Status{Successful: len(d.done), InFlight: d.inflight, Limit: l.limit, Window: l.window}
	s.Count = s.Successful + s.InFlight
	if s.Count >= l.limit {
		if len(d.done) > 0 {
			s.RetryAfter = d.done[0].Add(l.window).Sub(l.now())
		}
		if s.RetryAfter <= 0 {
			s.RetryAfter = time.Second // only in-flight slots: they free within their timeout
		}
	}
	return s
}

// Slot is a held place for one execution.
type Slot struct {
	l        *Limiter
	deviceID int64
	once     *sync.Once
}

// Acquire takes a slot for an execution on the device, or returns ok=false with the
// status that refused it.
func (l *Limiter) Acquire(deviceID int64) (Slot, Status, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.dev(deviceID)
	s := l.status(d)
	if s.Count >= l.limit && !l.off {
		return Slot{}, s, false
	}
	d.inflight++
	return Slot{l: l, deviceID: deviceID, once: &sync.Once{}}, s, true
}

// Release frees the slot; a successful execution then counts toward the limit.
// Releasing twice has no effect.
func (s Slot) Release(success bool) {
	if s.l == nil {
		return
	}
	s.once.Do(func() {
		s.l.mu.Lock()
		defer s.l.mu.Unlock()
		d := s.l.dev(s.deviceID)
		d.inflight--
		if success {
			d.done = append(d.done, s.l.now())
		}
	})
}

// RetryAfterSeconds rounds a wait up to whole seconds for the Retry-After header.
func RetryAfterSeconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}
