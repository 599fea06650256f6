package schedules

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// A job that ignores its context (a read with no deadline, a lock never released) holds
// its worker until its hard deadline and grace, then is abandoned: recorded once, as
// failed, and the jobs queued behind it run.
func TestPoolAbandonsAJobPastItsHardDeadline(t *testing.T) {
	p := newPool(context.Background(), Limits{Workers: 1}, 100*time.Millisecond, quiet, noObserver{})
	release := make(chan struct{})
	defer close(release)
	var abandoned []string
	var mu sync.Mutex
	hung := Job{Deadline: 200 * time.Millisecond,
		Run: func(ctx context.Context) bool { <-release; return true }, // ignores ctx
		Abandon: func(reason string) {
			mu.Lock()
			abandoned = append(abandoned, reason)
			mu.Unlock()
		}}
	// Each job has its own channel: the worker the hung job frees may start and finish
	// the next job before the hung one's result is handed over.
	hungDone, nextDone := make(chan bool, 1), make(chan bool, 1)
	start := time.Now()
	p.submit(hung, func(ok bool) { hungDone <- ok })
	p.submit(Job{Deadline: time.Second, Run: func(context.Context) bool { return true }}, func(ok bool) { nextDone <- ok })
	if ok := <-hungDone; ok {
		t.Fatal("the hung job reported success")
	}
	if ok := <-nextDone; !ok {
		t.Fatal("the job behind it failed")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the queue waited %s for a job with a 200 ms deadline", took)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(abandoned) != 1 {
		t.Fatalf("abandoned %d times: %v", len(abandoned), abandoned)
	}
}

// A job that panics is abandoned; the pool goes on.
func TestPoolSurvivesAPanickingJob(t *testing.T) {
	p := newPool(context.Background(), Limits{Workers: 2}, time.Second, quiet, noObserver{})
	var abandoned atomic.Int32
	done := make(chan bool, 2)
	p.submit(Job{Deadline: time.Second, Run: func(context.Context) bool { panic("boom") },
		Abandon: func(string) { abandoned.Add(1) }}, func(ok bool) { done <- ok })
	p.submit(Job{Deadline: time.Second, Run: func(context.Context) bool { return true }}, func(ok bool) { done <- ok })
	got := map[bool]int{}
	got[<-done]++
	got[<-done]++
	if got[true] != 1 || got[false] != 1 || abandoned.Load() != 1 {
		t.Fatalf("results %v, abandoned %d: want one success, one failure abandoned once", got, abandoned.Load())
	}
}

// Workers are bounded per site and per driver: a full site or driver holds its own
// jobs back while others pass them.
func TestPoolBoundsSitesAndDrivers(t *testing.T) {
	p := newPool(context.Background(), Limits{Workers: 4, PerSite: 1, PerDriver: 2}, time.Second, quiet, noObserver{})
	var mu sync.Mutex
	running := map[string]int{}
	peak := map[string]int{}
	var wg sync.WaitGroup
	job := func(site int64, driver string) Job {
		key := func(k string) {
			mu.Lock()
			running[k]++
			peak[k] = max(peak[k], running[k])
			mu.Unlock()
		}
		return Job{Site: site, Driver: driver, Deadline: time.Second, Run: func(context.Context) bool {
			key("site" + string(rune('0'+site)))
			key(driver)
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			running["site"+string(rune('0'+site))]--
			running[driver]--
			mu.Unlock()
			return true
		}}
	}
	for i := range 12 {
		wg.Add(1)
		p.submit(job(int64(i%3), []string{"ios", "eos"}[i%2]), func(bool) { wg.Done() })
	}
	wg.Wait()
	for k, n := range peak {
		limit := 1
		if k == "ios" || k == "eos" {
			limit = 2
		}
		if n > limit {
			t.Errorf("%s had %d jobs at once, limit %d", k, n, limit)
		}
	}
	if running, queued := p.counts(); running != 0 || queued != 0 {
		t.Fatalf("after: %d running, %d queued", running, queued)
	}
}
