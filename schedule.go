package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"fieldkit/events"
	"fieldkit/netbox"
	"fieldkit/store"
)

// job is one piece of background work that serve runs. Adding a schedule is adding a
// row to jobs (and its setting to Config).
type job struct {
	name string
	// schedule is "every DURATION" (first run at start-up), "hourly" or "daily HH:MM"
	// in server.time_zone; "" turns the job off.
	schedule string
	run      func(ctx context.Context) error
	// loop, instead of run, is a job that keeps its own schedule until ctx ends (the
	// export, which catches up on missed periods and retries failures itself).
	loop func(ctx context.Context) error
}

// jobs is every scheduled job of the server for a configuration.
func jobs(cfg Config, db *store.DB, loc *time.Location, logger *slog.Logger, syncer *netbox.Syncer, evp *events.Processor) []job {
	netboxSchedule, _ := syncSchedule(cfg.Inventory.NetBoxSchedule) // validated with the configuration
	if syncer == nil {
		netboxSchedule = ""
	}
	retention := ""
	if cfg.Logs.RetentionDays > 0 {
		retention = "every 1h"
	}
	return []job{
		{name: "session_cleanup", schedule: "every 1h", run: func(ctx context.Context) error {
			n, err := db.DeleteExpiredSessions(ctx)
			if n > 0 {
				logger.Info("expired sessions deleted", "deleted", n)
			}
			return err
		}},
		{name: "log_retention", schedule: retention, run: func(ctx context.Context) error {
			cut := time.Now().AddDate(0, 0, -cfg.Logs.RetentionDays)
			n, err := db.PruneLogs(ctx, cut)
			if n > 0 {
				logger.Info("log retention", "deleted", n, "older_than", cut)
			}
			return err
		}},
		{name: "log_export", schedule: cfg.Export.Schedule, loop: newExporter(cfg, db, loc, logger).Run},
		{name: "webhook_deliveries", schedule: "every 1h", run: func(ctx context.Context) error {
			n, err := db.PruneDeliveries(ctx, time.Now().AddDate(0, 0, -cfg.Webhooks.KeepDays))
			if n > 0 {
				logger.Info("webhook deliveries pruned", "deleted", n, "keep_days", cfg.Webhooks.KeepDays)
			}
			return err
		}},
		{name: "backup_health", schedule: "every 5m", run: func(ctx context.Context) error {
			rows, err := db.BackupHealthOf(ctx, cfg.Backup.MaxAge, store.True, time.Now())
			if err != nil {
				return err
			}
			return evp.WatchBackups(ctx, rows)
		}},
		{name: "netbox_sync", schedule: netboxSchedule, run: func(ctx context.Context) error {
			rep, err := syncer.Sync(ctx, nil)
			if errors.Is(err, netbox.ErrRunning) {
				return nil // one asked for through the API is running: this slot is covered
			}
			if err == nil {
				logSync(logger, rep)
			}
			return err
		}},
	}
}

// newExporter is the periodic CSV export of the command logs.
func newExporter(cfg Config, db *store.DB, loc *time.Location, logger *slog.Logger) *store.Exporter {
	dir := cfg.Export.Directory
	if dir == "" {
		dir = filepath.Join(cfg.Server.Data, "exports")
	}
	return &store.Exporter{DB: db, Logger: logger, Config: store.ExporterConfig{
		Schedule: cfg.Export.Schedule, Directory: dir, Keep: cfg.Export.Keep, Location: loc, BOM: cfg.Export.BOM}}
}

// when is a parsed schedule: next gives the first run after a time.
type when struct {
	every time.Duration // "every D"
	sched store.Schedule
	loc   *time.Location
}

func parseWhen(s string, loc *time.Location) (when, error) {
	if rest, ok := strings.CutPrefix(strings.TrimSpace(s), "every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil || d < time.Second {
			return when{}, fmt.Errorf("schedule %q: want \"every\" and a duration of at least 1s", s)
		}
		return when{every: d}, nil
	}
	sc, err := store.ParseSchedule(s)
	return when{sched: sc, loc: loc}, err
}

// first is when the job first runs: at once for "every", else at the next slot.
func (w when) first(now time.Time) time.Time {
	if w.every > 0 {
		return now
	}
	return w.next(now)
}

func (w when) next(now time.Time) time.Time {
	if w.every > 0 {
		return now.Add(w.every)
	}
	t := now.In(w.loc)
	if w.sched.Hourly {
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, w.loc).Add(time.Hour)
	}
	at := time.Date(t.Year(), t.Month(), t.Day(), w.sched.Hour, w.sched.Minute, 0, 0, w.loc)
	if !at.After(t) {
		at = at.AddDate(0, 0, 1)
	}
	return at
}

// scheduler runs the jobs and keeps their health for /api/status/.
type scheduler struct {
	log    *slog.Logger
	mu     sync.Mutex
	state  map[string]*jobState
	order  []string
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type jobState struct {
	schedule          string
	running           bool
	lastRun, nextRun  time.Time
	lastErr           string
	lastDurationMilli int64
}

func newScheduler(log *slog.Logger) *scheduler {
	return &scheduler{log: log, state: map[string]*jobState{}}
}

// start stops the jobs of a previous start (waiting for a run in progress to see its
// context end) and starts these.
func (s *scheduler) start(ctx context.Context, loc *time.Location, jobs []job) {
	s.stop()
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.cancel = cancel
	s.state, s.order = map[string]*jobState{}, nil
	s.mu.Unlock()
	for _, j := range jobs {
		s.launch(ctx, loc, j)
	}
}

func (s *scheduler) launch(ctx context.Context, loc *time.Location, j job) {
	st := &jobState{schedule: j.schedule}
	s.mu.Lock()
	s.state[j.name], s.order = st, append(s.order, j.name)
	s.mu.Unlock()
	if j.schedule == "" {
		return
	}
	s.wg.Add(1)
	if j.loop != nil {
		go func() {
			defer s.wg.Done()
			s.set(st, func() { st.running = true })
			err := j.loop(ctx)
			s.set(st, func() { st.running = false; st.lastErr = errText(err) })
			if err != nil && ctx.Err() == nil {
				s.log.Error("scheduled job stopped", "job", j.name, "err", err)
			}
		}()
		return
	}
	w, err := parseWhen(j.schedule, loc)
	if err != nil { // validated with the configuration; a bad row here is a bug
		s.log.Error("scheduled job not started", "job", j.name, "err", err)
		s.wg.Done()
		return
	}
	go func() {
		defer s.wg.Done()
		s.every(ctx, j, w, st)
	}()
}

func (s *scheduler) every(ctx context.Context, j job, w when, st *jobState) {
	at := w.first(time.Now())
	for {
		s.set(st, func() { st.nextRun = at })
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(at)):
		}
		start := time.Now()
		s.set(st, func() { st.running, st.lastRun = true, start })
		err := j.run(ctx)
		s.set(st, func() {
			st.running, st.lastErr, st.lastDurationMilli = false, errText(err), time.Since(start).Milliseconds()
		})
		if err != nil && ctx.Err() == nil {
			s.log.Error("scheduled job failed", "job", j.name, "err", err)
		}
		at = w.next(time.Now())
	}
}

func (s *scheduler) set(st *jobState, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// stop ends the running jobs and waits for them.
func (s *scheduler) stop() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
}

// wait waits for the jobs to end once their context is done.
func (s *scheduler) wait() { s.wg.Wait() }

// health is the scheduler's part of /api/status/: "ok", or "degraded" when a job's last
// run failed, with each job's state.
func (s *scheduler) health() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	status := "ok"
	list := []map[string]any{}
	for _, name := range s.order {
		st := s.state[name]
		state := "idle"
		switch {
		case st.schedule == "":
			state = "off"
		case st.running:
			state = "running"
		case st.lastErr != "":
			state, status = "failed", "degraded"
		}
		list = append(list, map[string]any{"name": name, "schedule": st.schedule, "state": state,
			"last_run": stampOrNil(st.lastRun), "next_run": stampOrNil(st.nextRun), "last_error": st.lastErr,
			"last_duration_ms": st.lastDurationMilli})
	}
	return map[string]any{"status": status, "jobs": list}
}

func stampOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}
