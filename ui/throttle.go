package ui

import (
	"sync"
	"time"
)

// Failed logins allowed in the trailing window: per username and client address, and
// per client address across all usernames (one address spraying a few guesses at many
// accounts).
const (
	loginFailures     = 5
	loginAddrFailures = 20
	loginWindow       = 15 * time.Minute
)

// sweepAt is the number of keys past which a failure sweeps forgotten keys, so that a
// flood of made-up usernames cannot grow the map without bound.
const sweepAt = 10000

// throttle counts failed logins per key in memory. A restart forgets them; that costs an
// attacker a restart they cannot cause, and keeps the database out of the login path.
//
// A try is reserved before the password is checked and counts against the limit while
// it runs, as if it had failed: otherwise many tries sent at once would all pass the
// check before the first failure was recorded.
type throttle struct {
	mu       sync.Mutex
	max      int
	window   time.Duration
	now      func() time.Time
	fails    map[string][]time.Time // oldest first
	inFlight map[string]int
}

func newThrottle(max int, window time.Duration, now func() time.Time) *throttle {
	return &throttle{max: max, window: window, now: now, fails: map[string][]time.Time{}, inFlight: map[string]int{}}
}

// begin reserves a try for key, or returns how long to wait when the failures in the
// window and the tries in flight already reach the limit. A reserved try must be ended
// with end.
func (t *throttle) begin(key string) (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	f := t.recent(key, now)
	switch {
	case len(f) >= t.max:
		return max(f[len(f)-t.max].Add(t.window).Sub(now), time.Second), false
	case len(f)+t.inFlight[key] >= t.max:
		return time.Second, false // the tries in flight decide; one of them may free a place
	}
	t.inFlight[key]++
	return 0, true
}

// end releases a try begun with begin, recording it as a failure when it failed.
func (t *throttle) end(key string, failed bool) {
	t.mu.Lock()
	if t.inFlight[key]--; t.inFlight[key] <= 0 {
		delete(t.inFlight, key)
	}
	t.mu.Unlock()
	if failed {
		t.fail(key)
	}
}

// recent drops the failures of key that left the window and returns the rest.
func (t *throttle) recent(key string, now time.Time) []time.Time {
	f := t.fails[key]
	i := 0
	for i < len(f) && !f[i].After(now.Add(-t.window)) {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(t.fails, key)
	} else {
		t.fails[key] = f
	}
	return f
}

// fail records a failed login of key.
func (t *throttle) fail(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.fails) >= sweepAt {
		for k := range t.fails {
			t.recent(k, now)
		}
	}
	t.fails[key] = append(t.recent(key, now), now)
}

// reset forgets key's failures after a successful login.
func (t *throttle) reset(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.fails, key)
}
