// Package schedules runs the users' schedules (netbox_toolkit_plugin.schedule): it
// knows when each is due, starts its runs, and runs their device jobs in a bounded
// pool where a hung device or a slow driver holds no more than its own workers until
// its hard deadline. What a run does (the checks, the executions, the logs) is the
// Planner's: the API's bulk execution.
package schedules

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"fieldkit/store"
)

// Triggers say why a run started.
const (
	TriggerSchedule = "schedule" // it was due
	TriggerCatchUp  = "catch_up" // it fell due while the server was down (run once at start-up)
	TriggerManual   = "manual"   // a person asked for it (POST …/run/)
)

// Rejection is a device a run could not run on, and why (a check refused it).
type Rejection struct {
	DeviceID int64  `json:"device_id"`
	Device   string `json:"device"`
	Reason   string `json:"reason"`
}

// Plan is a run checked and ready: the jobs of the devices that passed every check,
// and the devices refused.
type Plan struct {
	Jobs     []Job
	Rejected []Rejection
}

// Planner checks a run of a schedule and makes its jobs (handlers.API). An error is a
// run that cannot start at all (its command or credential set gone, its owner without
// the right to use the set).
type Planner interface {
	PlanRun(ctx context.Context, s store.ScheduleSpec, trigger, by string) (Plan, error)
}

// PlannerFunc is a function as a Planner.
type PlannerFunc func(ctx context.Context, s store.ScheduleSpec, trigger, by string) (Plan, error)

// PlanRun calls f.
func (f PlannerFunc) PlanRun(ctx context.Context, s store.ScheduleSpec, trigger, by string) (Plan, error) {
	return f(ctx, s, trigger, by)
}

// Observer is told what /metrics counts (observe.Metrics); nil: nothing.
type Observer interface {
	RunStarted(lag time.Duration)
	RunFinished(status string)
	RunSkipped(missed bool, n int)
	JobFinished(ok bool, wait, took time.Duration)
}

// Events queues the events of runs (events.Processor): status started, then completed,
// failed or errored; nil: none.
type Events interface {
	ScheduleRun(ctx context.Context, id int64, status string) error
}

// Options configure a Scheduler.
type Options struct {
	DB       *store.DB
	Planner  Planner
	Events   Events
	Observer Observer
	Logger   *slog.Logger
	Location *time.Location // of cron expressions and windows; nil = UTC
	Limits   Limits
	// Context bounds device jobs: the server's execution context, which a shutdown
	// lets run to their deadline. nil = context.Background().
	Context context.Context
	// Grace is how long past its deadline a job is waited for before it is abandoned
	// (10 s when 0).
	Grace time.Duration
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time
}

// Scheduler decides when schedules are due and runs them.
type Scheduler struct {
	o       Options
	pool    *pool
	changed chan struct{}
	mu      sync.Mutex
	entries map[int64]*entry
	loaded  bool // the schedules were read once (missed runs are counted then)
	stats   Stats
	runs    sync.WaitGroup
}

// entry is one schedule as the scheduler holds it.
type entry struct {
	spec    store.ScheduleSpec
	when    timing
	due     time.Time // next due time (zero: never)
	fireAt  time.Time // due plus this run's jitter
	running bool
	catchUp bool // the next run is the one run of those missed while the server was down
}

// Stats are the scheduler's counters since start-up, for /api/status/ and /metrics.
type Stats struct {
	Runs, Failed, Errored, Skipped, Missed int64
	LastLag                                time.Duration
	Running, Queued                        int // device jobs
	Schedules, Active                      int
}

// New makes a scheduler; Run starts it.
func New(o Options) *Scheduler {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	return &Scheduler{o: o, pool: newPool(o.Context, o.Limits, o.Grace, o.Logger, o.Observer),
		changed: make(chan struct{}, 1), entries: map[int64]*entry{}}
}

// SetObserver sets what /metrics counts, before Run.
func (s *Scheduler) SetObserver(o Observer) {
	s.o.Observer = o
	s.pool.obs = o
}

// Configure applies new worker limits (SIGHUP).
func (s *Scheduler) Configure(l Limits) { s.pool.configure(l) }

// Changed tells the scheduler that schedules were written: it reads them again at once.
func (s *Scheduler) Changed() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// reloadEvery is how often the schedules are read again without being told: another
// process may have written them, and a credential set or user changed pauses them.
const reloadEvery = 30 * time.Second

// Run runs schedules until ctx ends, then waits for the runs under way (their jobs
// end at their deadlines).
func (s *Scheduler) Run(ctx context.Context) error {
	defer s.runs.Wait()
	for {
		if err := s.load(ctx); err != nil && ctx.Err() == nil {
			s.o.Logger.Error("schedules not read", "err", err)
		}
		reload := time.NewTimer(reloadEvery)
		for again := true; again; {
			wait := time.NewTimer(s.untilNext())
			select {
			case <-ctx.Done():
				wait.Stop()
				reload.Stop()
				return nil
			case <-s.changed:
				again = false
			case <-reload.C:
				again = false
			case <-wait.C:
				s.fireDue(ctx)
			}
			wait.Stop()
		}
		reload.Stop()
	}
}

// untilNext is how long until the first entry is due (at most a minute, so that a
// clock that jumps is noticed).
func (s *Scheduler) untilNext() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	d := time.Minute
	for _, e := range s.entries {
		if !e.fireAt.IsZero() {
			d = min(d, e.fireAt.Sub(now))
		}
	}
	return max(d, 0)
}

// load reads every schedule and brings the entries in line: a new one gets its next
// due time, a changed one a new one, a deleted or paused one is dropped. At the first
// load, a schedule whose stored next run passed while the server was down runs once
// now (within its window) and the other missed runs are counted, not run.
func (s *Scheduler) load(ctx context.Context) error {
	specs, err := s.o.DB.ScheduleSpecs(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	first := !s.loaded
	s.loaded = true
	seen := map[int64]bool{}
	active := 0
	for _, sp := range specs {
		seen[sp.ID] = true
		e := s.entries[sp.ID]
		if sp.Status != "active" {
			if e != nil && !e.running {
				delete(s.entries, sp.ID)
			} else if e != nil {
				e.spec, e.due, e.fireAt = sp, time.Time{}, time.Time{}
			}
			if !sp.NextRun.IsZero() {
				s.persistNext(ctx, sp.ID, sp.When(), time.Time{})
			}
			continue
		}
		active++
		tm, err := timingOf(sp, s.o.Location)
		if err != nil {
			s.o.Logger.Error("schedule not scheduled", "schedule_id", sp.ID, "err", err)
			continue
		}
		if e != nil && e.spec.When() == sp.When() && !e.due.IsZero() {
			e.spec, e.when = sp, tm
			continue
		}
		if e == nil {
			e = &entry{}
			s.entries[sp.ID] = e
		}
		e.spec, e.when = sp, tm
		s.schedule(ctx, e, now, first)
	}
	for id, e := range s.entries {
		if !seen[id] && !e.running {
			delete(s.entries, id)
		}
	}
	s.stats.Schedules, s.stats.Active = len(specs), active
	return nil
}

// schedule sets a new or changed entry's next due time; s.mu is held.
func (s *Scheduler) schedule(ctx context.Context, e *entry, now time.Time, first bool) {
	sp := e.spec
	stored := sp.NextRun
	if sp.StateSpec == sp.When() && !stored.IsZero() && stored.After(now) {
		e.due = stored // as computed before a restart
	} else if sp.StateSpec == sp.When() && !stored.IsZero() && first {
		// Due while the server was down: run once now, inside the window; the rest are
		// counted as missed.
		missed := e.when.dueBetween(stored, now, 100000)
		if e.when.inWindow(now.In(s.o.Location)) {
			e.due, e.fireAt = now, now.Add(e.when.delay())
			s.persistNext(ctx, sp.ID, sp.When(), e.due)
			s.countMissed(ctx, sp.ID, missed)
			e.catchUp = true
			return
		}
		s.countMissed(ctx, sp.ID, missed+1)
		e.due = e.when.next(now)
	} else {
		e.due = e.when.next(now)
	}
	e.fireAt = time.Time{}
	if !e.due.IsZero() {
		e.fireAt = e.due.Add(e.when.delay())
	}
	s.persistNext(ctx, sp.ID, sp.When(), e.due)
}

func (s *Scheduler) countMissed(ctx context.Context, id int64, n int) {
	if n <= 0 {
		return
	}
	s.stats.Missed += int64(n)
	s.o.Observer.RunSkipped(true, n)
	go s.write(ctx, "missed runs", func(ctx context.Context) error { return s.o.DB.AddScheduleSkips(ctx, id, 0, n) })
}

// persistNext stores a schedule's next due time, off the loop: a busy database never
// holds the scheduler.
func (s *Scheduler) persistNext(ctx context.Context, id int64, when string, due time.Time) {
	go s.write(ctx, "next run", func(ctx context.Context) error { return s.o.DB.SetScheduleNext(ctx, id, when, due) })
}

func (s *Scheduler) write(ctx context.Context, what string, f func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := f(ctx); err != nil {
		s.o.Logger.Error("schedule state not written", "what", what, "err", err)
	}
}

// fireDue starts every entry whose time came; one still running from its last run is
// skipped and counted.
func (s *Scheduler) fireDue(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	for id, e := range s.entries {
		if e.fireAt.IsZero() || e.fireAt.After(now) {
			continue
		}
		due, fireAt := e.due, e.fireAt
		trigger := TriggerSchedule
		if e.catchUp {
			trigger, e.catchUp = TriggerCatchUp, false
		}
		e.due = e.when.next(due)
		if !e.due.IsZero() && !e.due.After(now) {
			// More than one due time passed (the machine was suspended, the clock
			// jumped): one run now, the others missed.
			s.countMissed(ctx, id, e.when.dueBetween(due, now, 100000))
			e.due = e.when.next(now)
		}
		e.fireAt = time.Time{}
		if !e.due.IsZero() {
			e.fireAt = e.due.Add(e.when.delay())
		}
		s.persistNext(ctx, id, e.spec.When(), e.due)
		if e.running {
			s.stats.Skipped++
			s.o.Observer.RunSkipped(false, 1)
			s.o.Logger.Warn("schedule skipped: its last run is still going", "schedule_id", id, "schedule", e.spec.Name)
			go s.write(ctx, "skipped run", func(ctx context.Context) error { return s.o.DB.AddScheduleSkips(ctx, id, 1, 0) })
			continue
		}
		e.running = true
		s.startRun(ctx, e.spec, trigger, "", now.Sub(fireAt))
	}
}

// PausedError is returned by RunNow for a schedule that is not active.
type PausedError struct{ Reason string }

func (e *PausedError) Error() string { return "schedules: not active: " + e.Reason }

// RunNow starts a run of a schedule at once, for a person (by): store.ErrScheduleBusy
// while one is going, a *PausedError when it cannot run.
func (s *Scheduler) RunNow(ctx context.Context, id int64, by string) error {
	sp, err := s.o.DB.ScheduleSpecByID(ctx, id)
	if err != nil {
		return err
	}
	if sp.Status != "active" {
		return &PausedError{Reason: sp.Reason}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[id]
	if e == nil {
		tm, err := timingOf(sp, s.o.Location)
		if err != nil {
			return err
		}
		e = &entry{spec: sp, when: tm}
		s.entries[id] = e
	}
	if e.running {
		return store.ErrScheduleBusy
	}
	e.running = true
	s.startRun(context.WithoutCancel(ctx), sp, TriggerManual, by, 0)
	return nil
}

// startRun runs a schedule on a goroutine of its own; s.mu is held.
func (s *Scheduler) startRun(ctx context.Context, sp store.ScheduleSpec, trigger, by string, lag time.Duration) {
	s.runs.Add(1)
	s.stats.Runs++
	s.stats.LastLag = lag
	s.o.Observer.RunStarted(lag)
	go func() {
		defer s.runs.Done()
		out := s.execute(ctx, sp, trigger, by, lag)
		s.mu.Lock()
		if e := s.entries[sp.ID]; e != nil {
			e.running = false
		}
		switch out.Status {
		case "failed":
			s.stats.Failed++
		case "errored":
			s.stats.Errored++
		}
		s.mu.Unlock()
	}()
}

// Outcome is a run's result, kept as the schedule's last_run.
type Outcome struct {
	Trigger     string      `json:"trigger"`
	TriggeredBy *string     `json:"triggered_by"`
	Started     string      `json:"started"`
	Finished    string      `json:"finished"`
	Status      string      `json:"status"` // completed, failed (some device failed or was refused) or errored
	Devices     int         `json:"devices"`
	Successful  int         `json:"successful"`
	Failed      int         `json:"failed"`
	Rejected    []Rejection `json:"rejected"`
	Error       string      `json:"error"`
	LagSeconds  float64     `json:"lag_seconds"`
}

// execute is one run: planned by the Planner, its jobs through the pool, its outcome
// stored and its event queued. Nothing it does can stop the scheduler's loop.
func (s *Scheduler) execute(ctx context.Context, sp store.ScheduleSpec, trigger, by string, lag time.Duration) (out Outcome) {
	start := s.o.Now()
	out = Outcome{Trigger: trigger, Started: stampOf(start), Rejected: []Rejection{}, LagSeconds: lag.Seconds()}
	if by != "" {
		out.TriggeredBy = &by
	}
	defer func() {
		if r := recover(); r != nil {
			s.o.Logger.Error("schedule run crashed", "schedule_id", sp.ID, "err", r)
			out.Status, out.Error = "errored", "The run stopped on an internal error."
		}
		out.Finished = stampOf(s.o.Now())
		s.finish(ctx, sp, out)
	}()
	if s.o.Events != nil {
		if err := s.o.Events.ScheduleRun(context.WithoutCancel(ctx), sp.ID, "started"); err != nil {
			s.o.Logger.Error("schedule run event not queued", "schedule_id", sp.ID, "err", err)
		}
	}
	planCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	plan, err := s.o.Planner.PlanRun(planCtx, sp, trigger, by)
	cancel()
	if err != nil {
		out.Status, out.Error = "errored", err.Error()
		return out
	}
	out.Rejected = append(out.Rejected, plan.Rejected...)
	out.Devices = len(plan.Jobs) + len(plan.Rejected)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, j := range plan.Jobs {
		wg.Add(1)
		s.pool.submit(j, func(ok bool) {
			mu.Lock()
			if ok {
				out.Successful++
			} else {
				out.Failed++
			}
			mu.Unlock()
			wg.Done()
		})
	}
	wg.Wait()
	out.Status = "completed"
	if out.Failed > 0 || len(out.Rejected) > 0 {
		out.Status = "failed"
	}
	return out
}

// finish stores a run's outcome and queues its event.
func (s *Scheduler) finish(ctx context.Context, sp store.ScheduleSpec, out Outcome) {
	s.o.Observer.RunFinished(out.Status)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	raw, _ := json.Marshal(out)
	if err := s.o.DB.SetScheduleLastRun(ctx, sp.ID, raw); err != nil {
		s.o.Logger.Error("schedule run not recorded", "schedule_id", sp.ID, "err", err)
	}
	level := slog.LevelInfo
	if out.Status != "completed" {
		level = slog.LevelWarn
	}
	s.o.Logger.Log(ctx, level, "schedule run", "schedule_id", sp.ID, "schedule", sp.Name, "trigger", out.Trigger,
		"status", out.Status, "devices", out.Devices, "successful", out.Successful, "failed", out.Failed,
		"rejected", len(out.Rejected), "err", out.Error)
	if s.o.Events != nil {
		if err := s.o.Events.ScheduleRun(ctx, sp.ID, out.Status); err != nil {
			s.o.Logger.Error("schedule run event not queued", "schedule_id", sp.ID, "err", err)
		}
	}
}

func stampOf(t time.Time) string { return t.UTC().Format(store.TimeFormat) }

// Stats reads the counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	st := s.stats
	s.mu.Unlock()
	st.Running, st.Queued = s.pool.counts()
	return st
}

// Health is the scheduler's part of /api/status/.
func (s *Scheduler) Health() map[string]any {
	st := s.Stats()
	return map[string]any{"schedules": st.Schedules, "active": st.Active, "runs": st.Runs, "failed_runs": st.Failed,
		"errored_runs": st.Errored, "skipped_runs": st.Skipped, "missed_runs": st.Missed,
		"last_lag_seconds": st.LastLag.Seconds(), "jobs_running": st.Running, "jobs_queued": st.Queued}
}

type noObserver struct{}

func (noObserver) RunStarted(time.Duration)                       {}
func (noObserver) RunFinished(string)                             {}
func (noObserver) RunSkipped(bool, int)                           {}
func (noObserver) JobFinished(bool, time.Duration, time.Duration) {}
