package ratelimit

import (
	"sync"
	"testing"
	"time"
)

func TestOnlySuccessesCount(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	l := New(2, 5*time.Minute)
	l.SetClock(func() time.Time { return now })
	for i := 0; i < 5; i++ {
		s, _, ok := l.Acquire(1)
		if !ok {
			t.Fatalf("failed executions must not count (attempt %d)", i)
		}
		s.Release(false)
	}
	a, _, _ := l.Acquire(1)
	a.Release(true)
	a.Release(true) // a second release is a no-op
	b, _, _ := l.Acquire(1)
	b.Release(true)
	_, st, ok := l.Acquire(1)
	if ok || st.Count != 2 || st.Limit != 2 || st.RetryAfter != 5*time.Minute {
		t.Fatalf("third success must be refused: %+v %v", st, ok)
	}
	if _, _, ok := l.Acquire(2); !ok {
		t.Fatal("the limit is per device")
	}
	now = now.Add(5*time.Minute + time.Second)
	if _, _, ok := l.Acquire(1); !ok {
		t.Fatal("window passed, slot must free")
	}
}

func TestInFlightSlotsStopOvershoot(t *testing.T) {
	l := New(10, time.Minute)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s, _, ok := l.Acquire(7); ok {
				mu.Lock()
				granted++
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
				s.Release(true)
			}
		}()
	}
	wg.Wait()
	if granted != 10 {
		t.Fatalf("granted %d concurrent slots, want exactly 10", granted)
	}
}

func TestSeedSurvivesRestart(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	l := New(3, 5*time.Minute)
	l.SetClock(func() time.Time { return now })
	l.Seed(4, now.Add(-time.Minute), now.Add(-10*time.Minute), now.Add(-2*time.Minute), now.Add(-3*time.Minute))
	st := l.Status(4)
	if st.Successful != 3 || st.RetryAfter != 2*time.Minute {
		t.Fatalf("seeded status: %+v", st)
	}
	if RetryAfterSeconds(1500*time.Millisecond) != 2 {
		t.Fatal("Retry-After rounds up")
	}
}
