package schedules

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Limits bound the device jobs of every schedule's runs together.
type Limits struct {
	Workers   int // jobs running at once
	PerSite   int // of them, on the devices of one site
	PerDriver int // of them, through one driver
}

func (l Limits) withDefaults() Limits {
	if l.Workers < 1 {
		l.Workers = 32
	}
	if l.PerSite < 1 || l.PerSite > l.Workers {
		l.PerSite = l.Workers
	}
	if l.PerDriver < 1 || l.PerDriver > l.Workers {
		l.PerDriver = l.Workers
	}
	return l
}

// Job is one device's work in a run.
type Job struct {
	Site   int64
	Driver string
	// Deadline is the hard bound of Run: its context ends then, and a Run still going
	// grace later is abandoned (its worker freed, Abandon called).
	Deadline time.Duration
	// Run executes and logs, and reports success. ctx ends at Deadline.
	Run func(ctx context.Context) bool
	// Abandon records the job as failed when Run overran its deadline or panicked; the
	// job must then never record anything of its own (a late Run is ignored).
	Abandon func(reason string)
}

// pool runs the jobs of every run: at most Workers at once, at most PerSite on one
// site and PerDriver through one driver, the others queued in the order they came. A
// job that hangs holds one worker until its hard deadline, never longer; one whose site
// or driver is full waits while jobs of other sites and drivers pass it.
type pool struct {
	ctx    context.Context // the server's execution context: a shutdown lets jobs finish
	grace  time.Duration
	log    *slog.Logger
	obs    Observer
	mu     sync.Mutex
	limits Limits
	queue  []*task
	busy   int
	site   map[int64]int
	driver map[string]int
}

type task struct {
	job    Job
	queued time.Time
	done   func(ok bool)
}

func newPool(ctx context.Context, l Limits, grace time.Duration, log *slog.Logger, obs Observer) *pool {
	return &pool{ctx: ctx, limits: l.withDefaults(), grace: grace, log: log, obs: obs,
		site: map[int64]int{}, driver: map[string]int{}}
}

// configure applies new limits; jobs running keep their workers.
func (p *pool) configure(l Limits) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.limits = l.withDefaults()
	p.dispatch()
}

// submit queues a job; done is called once, from another goroutine, when it ends.
func (p *pool) submit(j Job, done func(ok bool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue = append(p.queue, &task{job: j, queued: time.Now(), done: done})
	p.dispatch()
}

// dispatch starts every queued job that fits; p.mu is held.
func (p *pool) dispatch() {
	kept := p.queue[:0]
	for _, t := range p.queue {
		if p.busy >= p.limits.Workers || p.site[t.job.Site] >= p.limits.PerSite || p.driver[t.job.Driver] >= p.limits.PerDriver {
			kept = append(kept, t)
			continue
		}
		p.busy++
		p.site[t.job.Site]++
		p.driver[t.job.Driver]++
		go p.run(t)
	}
	clear(p.queue[len(kept):])
	p.queue = kept
}

func (p *pool) run(t *task) {
	wait := time.Since(t.queued)
	start := time.Now()
	ok := p.guard(t.job)
	p.obs.JobFinished(ok, wait, time.Since(start))
	p.mu.Lock()
	p.busy--
	p.site[t.job.Site]--
	p.driver[t.job.Driver]--
	if p.site[t.job.Site] == 0 {
		delete(p.site, t.job.Site)
	}
	if p.driver[t.job.Driver] == 0 {
		delete(p.driver, t.job.Driver)
	}
	p.dispatch()
	p.mu.Unlock()
	t.done(ok)
}

// guard runs a job under its hard deadline: the job's context ends at the deadline,
// and if Run has not returned grace later (a read that ignores its context, a lock
// never released) or it panicked, the job is abandoned and its worker freed.
func (p *pool) guard(j Job) bool {
	ctx, cancel := context.WithTimeout(p.ctx, j.Deadline)
	defer cancel()
	result := make(chan bool, 1)
	crashed := make(chan string, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				crashed <- fmt.Sprint(r)
			}
		}()
		result <- j.Run(ctx)
	}()
	hard := time.NewTimer(j.Deadline + p.grace)
	defer hard.Stop()
	select {
	case ok := <-result:
		return ok
	case why := <-crashed:
		p.log.Error("scheduled job crashed", "err", why)
		j.Abandon("The job stopped on an internal error; the other devices were not affected.")
		return false
	case <-hard.C:
		p.log.Error("scheduled job abandoned past its hard deadline", "deadline", j.Deadline)
		j.Abandon(fmt.Sprintf("Did not finish within its hard deadline of %s; abandoned.", j.Deadline.Round(time.Second)))
		return false
	}
}

// counts are the pool's running and queued jobs.
func (p *pool) counts() (running, queued int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy, len(p.queue)
}
