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
type throttle struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	now    func() time.Time
	fails  map[string][]time.Time // oldest first
}

func newThrottle(max int, window time.Duration, now func() time.Time) *throttle {
	return &throttle{max: max, window: window, now: now, fails: map[string][]time.Time{}}
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

// wait is how long key must wait before trying again; 0 when it may try now.
func (t *throttle) wait(key string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	f := t.recent(key, now)
	if len(f) < t.max {
		return 0
	}
	return max(f[len(f)-t.max].Add(t.window).Sub(now), time.Second)
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
