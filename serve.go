package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kardianos/service"

	"fieldkit/events"
	"fieldkit/exec"
	"fieldkit/exec/ratelimit"
	"fieldkit/exec/textfsm"
	"fieldkit/handlers"
	"fieldkit/hub"
	"fieldkit/netbox"
	"fieldkit/observe"
	"fieldkit/schedules"
	"fieldkit/store"
	"fieldkit/ui"
)

// warmReadersAfter is how long after the start serve opens the database's readers
// ahead of the requests (store.DB.WarmReaders).
const warmReadersAfter = 5 * time.Second

// serveOptions is what serve takes beside the configuration.
type serveOptions struct {
	demo      bool
	demoReset bool          // the demo makes a new admin password and new tokens
	ready     chan<- string // receives the base URL once the server listens; nil = none
	// reload delivers a request to re-read the configuration (SIGHUP); nil = never.
	reload <-chan struct{}
	// load reads the configuration again, as at start-up.
	load func() (Config, error)
	// headerTimeout and bodyTimeout replace headerTimeout and web.BodyTimeout when set
	// (tests of the deadlines).
	headerTimeout, bodyTimeout time.Duration
	// clock replaces the store's clock, and so the times of the logs and of what the
	// hub pusher says its clock reads (tests of a site whose clock is off).
	clock func() time.Time
}

// headerTimeout is how long a client may take to send a request's line and headers; its
// body then has web.BodyTimeout (set by the router, lifted once the body is read).
const headerTimeout = 10 * time.Second

// newHTTPServer is the server serve runs. A slow client is cut off while it sends its
// request: the headers have header (0: headerTimeout), the body the router's deadline.
// There is deliberately no ReadTimeout or WriteTimeout: they cover the whole exchange
// and would cut an execution (which runs to its own timeout, up to 300 s) or a long
// export in the middle of its answer; each request's work has its own bound instead.
func newHTTPServer(h http.Handler, logger *slog.Logger, header time.Duration) *http.Server {
	if header <= 0 {
		header = headerTimeout
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: header,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

func cmdServe(ctx context.Context, e env, o *opts) error {
	extra := map[string]string{}
	if o.listen != "" {
		extra["server.listen"] = o.listen
	}
	cfg, err := o.load(e, extra)
	if err != nil {
		return err
	}
	so := serveOptions{demo: o.demo || o.demoReset, demoReset: o.demoReset, reload: reloadRequests(),
		load: func() (Config, error) { return o.load(e, extra) }}
	if !service.Interactive() {
		return runService(e, cfg, so)
	}
	return serve(ctx, e, cfg, so)
}

// serve runs the server until ctx is done, then shuts down gracefully: it stops
// accepting, lets running requests (and so executions, bounded by their timeout) finish,
// and closes the database. A reload request applies the settings that can change while
// running (log level, rate limit, schedules); nothing running is interrupted.
func serve(ctx context.Context, e env, cfg Config, so serveOptions) error {
	started := time.Now()
	logs, err := openLog(cfg, e)
	if err != nil {
		return err
	}
	defer logs.Close()
	logger := logs.logger
	if cfg.Server.ShutdownTimeout <= maxExecution {
		logger.Warn("server.shutdown_timeout is not above the longest execution: a stop may cut one short",
			"shutdown_timeout", cfg.Server.ShutdownTimeout, "longest_execution", maxExecution)
	}
	stillStarting := keepStarting(e.getenv, 20*time.Second, "opening the database: a migration is running, its progress is in the log")
	db, err := openStore(ctx, cfg, logger)
	stillStarting()
	if err != nil {
		return err
	}
	defer db.Close()
	if so.clock != nil {
		db.SetClock(so.clock)
	}
	// A few seconds after the start rather than before or during it: after a start with
	// the file out of the page cache, opening them beside the first requests slowed
	// those (the first statistics and page 0.49-0.55 s against 0.44-0.50).
	warmCtx, stopWarm := context.WithCancel(ctx)
	defer stopWarm() // before db.Close, deferred earlier: never opened on a closed file
	go func() {
		select {
		case <-warmCtx.Done():
			return
		case <-time.After(warmReadersAfter):
		}
		if err := db.WarmReaders(warmCtx); err != nil && warmCtx.Err() == nil {
			logger.Warn("opening the database's readers ahead", "err", err)
		}
	}()
	store.RemoveStaleTemps(cfg.Server.Data) // a backup or export into the data directory, killed
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close() // Serve closes it too; this covers the start-up errors below
	scheme := "http"
	if cfg.Server.TLSCert != "" {
		scheme = "https"
	}
	base := scheme + "://" + ln.Addr().String()
	keyring, err := loadKeyring(ctx, e, db, cfg.Server.Data, logger)
	if err != nil {
		return err
	}
	loc, _ := time.LoadLocation(cfg.Server.TimeZone)
	templates, problems := textfsm.Load(cfg.TextFSM.TemplatesDir, logger)
	for _, p := range problems {
		logger.Warn("textfsm template rejected", "err", p)
	}
	limiter, err := newLimiter(ctx, cfg, db)
	if err != nil {
		return err
	}
	if so.demo {
		stopDevices, err := seedDemo(ctx, e, db, keyring, cfg, base, so.demoReset)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer stopDevices()
	}
	dbFile := filepath.Join(cfg.Server.Data, "fieldkit.db")
	var metrics *observe.Metrics
	var metricsHandler http.Handler
	if cfg.Metrics.Enabled {
		metrics = observe.NewMetrics(version, observe.Files{Database: dbFile, WAL: dbFile + "-wal"})
		metricsHandler = metrics.Handler(cfg.Metrics.Token)
	}
	sched := newScheduler(logger)
	syncer := netbox.NewSyncer(db, cfg.Inventory.netboxConfig(), logger)
	// Executions get a context of their own: a shutdown lets them finish (bounded by their
	// timeout) and cancels them only when the shutdown timeout runs out.
	execCtx, cancelExec := context.WithCancel(context.Background())
	defer cancelExec()
	pool := exec.NewPool(poolConfig(cfg, logger))
	defer pool.Close() // after the graceful stop below; this covers the start-up errors
	if metrics != nil {
		metrics.SessionPool(func() observe.PoolStats {
			st := pool.Stats()
			return observe.PoolStats{Open: st.Open, Idle: st.Idle, Logins: st.Logins, Reuses: st.Reuses, Replaced: st.Replaced}
		})
	}
	// The web UI's streamed runs go through the API's own execute path; the API is built
	// after the web UI, whose routes it serves.
	var api *handlers.API
	web := ui.New(ui.Options{DB: db, Keyring: keyring, Limiter: limiter, Logger: logger, SessionHours: cfg.UI.SessionHours,
		TimeZone: cfg.Server.TimeZone, Sessions: pool, Hub: cfg.Hub.Serve, Execute: func(r *http.Request) (ui.Execution, error) {
			x, err := api.StartExecution(r)
			if err != nil {
				return nil, err
			}
			return x, nil
		}})
	var ingest handlers.HubServer
	var hubIngest *hub.Ingest
	if cfg.Hub.Serve {
		hubIngest = hub.NewIngest(db, logger)
		ingest = hubIngest
	}
	var edge *edgeHub // set below, once the API that renders its records is built
	// Events (a log written, a schedule's run) are matched against the event rules and
	// delivered by their own goroutines, never on an execution's path.
	evp := events.New(events.Options{DB: db, Keyring: keyring, Logger: logger, Config: cfg.Webhooks.events(), Version: version,
		Render: events.RendererFunc(func(ctx context.Context, objectType string, id int64) (map[string]any, error) {
			return api.RenderEvent(ctx, objectType, id)
		})})
	if hubIngest != nil {
		hubIngest.Stored = evp.Poke // the sites' logs raise the hub's events
	}
	if em := metrics.Events(func() int64 { n, _ := db.PendingDeliveries(context.Background()); return n }); em != nil {
		evp.SetObserver(em)
	}
	// The schedules' runs are the API's bulk executions: same checks, rate limit and log.
	sch := schedules.New(schedules.Options{DB: db, Logger: logger, Location: loc, Limits: cfg.Schedules.limits(), Context: execCtx,
		Events: evp,
		Planner: schedules.PlannerFunc(func(ctx context.Context, s store.ScheduleSpec, trigger, by string) (schedules.Plan, error) {
			return api.PlanRun(ctx, s, trigger, by)
		})})
	if sm := metrics.Schedules(func() (int, int) { st := sch.Stats(); return st.Running, st.Queued }); sm != nil {
		sch.SetObserver(sm)
	}
	api = handlers.New(handlers.Options{DB: db, Logger: logger, Version: version, Location: loc, Schedules: sch, Events: evp, BaseURL: base,
		Session: web.Session, Login: web.CheckLogin, UI: web.Routes, Metrics: metricsHandler, Observer: metrics,
		BodyTimeout: so.bodyTimeout, Hub: ingest, HubCredentialSet: cfg.Hub.CredentialSet,
		Health: health(db, dbFile, sched, sch, func() *hub.Pusher { return edge.Pusher() }), NetBox: syncer,
		Exec: handlers.ExecOptions{Keyring: keyring, Limiter: limiter, TextFSM: templates,
			HostKeyPolicy: exec.HostKeyPolicy(cfg.SSH.HostKeyPolicy), MaxOutputBytes: cfg.Exec.MaxOutputBytes,
			BulkMax: cfg.Exec.BulkMax, BulkConcurrency: cfg.Exec.BulkConcurrency, Pool: pool, Context: execCtx},
		Backup: handlers.BackupOptions{MinLines: cfg.Backup.MinLines, MaxShrink: float64(cfg.Backup.MaxShrinkPercent) / 100,
			Events: evp, MaxAge: cfg.Backup.MaxAge}})
	metrics.BackupHealth(func() []observe.DeviceBackup { return backupGauges(db, cfg.Backup.MaxAge, logger) })
	bgCtx, stopBackground := context.WithCancel(context.Background())
	defer stopBackground()
	sched.start(bgCtx, loc, jobs(cfg, db, loc, logger, syncer, evp))
	schDone, evDone := make(chan struct{}), make(chan struct{})
	go func() { // hub processes on one PostgreSQL: one of them runs the schedules at a time
		db.Leading(bgCtx, store.LockSchedules, 10*time.Second, func(ctx context.Context) { _ = sch.Run(ctx) })
		close(schDone)
	}()
	go func() { _ = evp.Run(bgCtx); close(evDone) }()
	if edge, err = startEdgeHub(ctx, bgCtx, cfg, db, api, so.clock, metrics, logger); err != nil {
		return err
	}
	defer func() { stopBackground(); edge.Wait() }() // stopped before db.Close, deferred earlier
	srv := newHTTPServer(observe.Access(api, logger, metrics), logger, so.headerTimeout)
	if hubIngest != nil {
		srv.RegisterOnShutdown(hubIngest.Stop) // the sites' long polls answer; the stop does not wait them out
	}
	errc := make(chan error, 1)
	go func() {
		if cfg.Server.TLSCert != "" {
			errc <- srv.ServeTLS(ln, cfg.Server.TLSCert, cfg.Server.TLSKey)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	if err := writePidFile(cfg.Server.Data); err != nil {
		logger.Warn("pid file not written", "err", err)
	}
	defer removePidFile(cfg.Server.Data)
	logger.Info("fieldkit listening", "url", base, "data", cfg.Server.Data, "version", version,
		"startup_ms", time.Since(started).Milliseconds())
	sdNotify(e.getenv, "READY=1\nSTATUS=listening on "+base)
	if so.ready != nil {
		so.ready <- base
	}
	r := reloader{cfg: cfg, load: so.load, logs: logs, limiter: limiter, pool: pool, sched: sched, db: db, getenv: e.getenv, syncer: syncer,
		schedules: sch, events: evp, pusher: edge.Pusher()}
	for running := true; running; {
		select {
		case err := <-errc:
			return fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
			running = false
		case <-so.reload:
			r.reload(bgCtx)
		}
	}
	logger.Info("shutting down: waiting for running requests", "timeout", cfg.Server.ShutdownTimeout)
	sdNotify(e.getenv, "STOPPING=1\nSTATUS=waiting for running requests and executions")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
	defer cancel()
	stopBackground()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("shutdown did not finish cleanly", "err", err)
	}
	cancelExec()
	<-schDone // its runs' jobs end with the executions' context
	<-evDone  // a request to a receiver under way ends within webhooks.timeout
	pool.Close()
	sched.wait()
	logger.Info("stopped")
	return nil
}

// newLimiter builds the rate limiter, seeded with the window's successes from the logs
// so that a restart does not reset it. It exists even when the limit is off, so that a
// reload can turn it on.
func newLimiter(ctx context.Context, cfg Config, db *store.DB) (*ratelimit.Limiter, error) {
	p := limitPolicy(cfg)
	l := ratelimit.New(p.Limit, p.Window)
	l.Configure(p)
	recent, err := db.RecentSuccesses(ctx, time.Now().Add(-p.Window))
	if err != nil {
		return nil, err
	}
	for id, at := range recent {
		l.Seed(id, at...)
	}
	return l, nil
}

func limitPolicy(cfg Config) ratelimit.Policy {
	return ratelimit.Policy{Enabled: cfg.RateLimit.Enabled, Limit: cfg.RateLimit.DeviceCommandLimit,
		Window:      time.Duration(cfg.RateLimit.TimeWindowMinutes) * time.Minute,
		BypassUsers: cfg.RateLimit.BypassUsers, BypassGroups: cfg.RateLimit.BypassGroups}
}

// reloader applies a new configuration to a running server.
type reloader struct {
	cfg     Config
	load    func() (Config, error)
	logs    *logSink
	limiter *ratelimit.Limiter
	pool    *exec.Pool
	sched   *scheduler
	db      *store.DB
	getenv  func(string) string
	syncer  *netbox.Syncer
	// schedules runs the users' schedules; a reload applies its worker limits.
	schedules *schedules.Scheduler
	// events delivers webhooks; a reload applies its delivery settings.
	events *events.Processor
	pusher *hub.Pusher // nil: no hub.url
}

// reload re-reads the configuration. A configuration that does not load or validate is
// refused whole and the running one kept; settings that need a restart are named.
func (r *reloader) reload(ctx context.Context) {
	log := r.logs.logger
	if r.load == nil {
		log.Warn("reload requested but this server cannot re-read its configuration")
		return
	}
	sdNotify(r.getenv, "RELOADING=1")
	defer sdNotify(r.getenv, "READY=1")
	cfg, err := r.load()
	if err != nil {
		log.Error("reload refused: the configuration has errors; the running one is kept", "err", err)
		return
	}
	if names := needsRestart(r.cfg, cfg); len(names) > 0 {
		log.Warn("reload: these settings take effect only after a restart", "settings", strings.Join(names, ","))
	}
	level, _ := parseLevel(cfg.Log.Level)
	r.logs.level.Set(level)
	r.limiter.Configure(limitPolicy(cfg))
	r.pool.Configure(poolConfig(cfg, log))
	loc, _ := time.LoadLocation(cfg.Server.TimeZone)
	r.syncer.Configure(cfg.Inventory.netboxConfig())
	r.sched.start(ctx, loc, jobs(cfg, r.db, loc, log, r.syncer, r.events))
	r.schedules.Configure(cfg.Schedules.limits())
	r.events.Configure(cfg.Webhooks.events())
	if r.pusher != nil {
		r.pusher.Wake() // a site waiting out a refusal or an older hub tries again now
	}
	r.cfg = cfg
	log.Info("configuration reloaded", "log_level", cfg.Log.Level, "rate_limit_enabled", cfg.RateLimit.Enabled,
		"device_command_limit", cfg.RateLimit.DeviceCommandLimit, "time_window_minutes", cfg.RateLimit.TimeWindowMinutes,
		"export_schedule", cfg.Export.Schedule, "session_idle", cfg.Exec.SessionIdle,
		"sessions_per_device", cfg.Exec.SessionsPerDevice)
}

func poolConfig(cfg Config, log *slog.Logger) exec.PoolConfig {
	return exec.PoolConfig{Idle: cfg.Exec.SessionIdle, PerDevice: cfg.Exec.SessionsPerDevice, Logger: log}
}

// health reports the database, the background jobs, the users' schedules and the hub
// pusher (when there is one) for /api/status/.
func health(db *store.DB, dbFile string, sched *scheduler, sch *schedules.Scheduler, pusher func() *hub.Pusher) func(context.Context) map[string]any {
	return func(ctx context.Context) map[string]any {
		dbh := map[string]any{"status": "ok"}
		var one int
		if err := db.Reader().QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
			dbh["status"], dbh["error"] = "error", "the database does not answer"
		}
		for key, path := range map[string]string{"size_bytes": dbFile, "wal_size_bytes": dbFile + "-wal"} {
			var size int64
			if st, err := os.Stat(path); err == nil {
				size = st.Size()
			}
			dbh[key] = size
		}
		jobs := sched.health()
		jobs["schedules"] = sch.Health()
		out := map[string]any{"database": dbh, "scheduler": jobs}
		if p := pusher(); p != nil {
			out["hub"] = hubHealth(ctx, db, p)
		}
		return out
	}
}

// backupGauges is each active device's backup age for /metrics.
func backupGauges(db *store.DB, limit time.Duration, logger *slog.Logger) []observe.DeviceBackup {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := db.BackupHealthOf(ctx, limit, store.True, time.Now())
	if err != nil {
		logger.Warn("backup health not read for /metrics", "err", err)
		return nil
	}
	out := make([]observe.DeviceBackup, len(rows))
	for i, b := range rows {
		out[i] = observe.DeviceBackup{Device: b.DeviceName, Site: b.SiteSlug, Age: b.Age, Never: b.Status == store.BackupNever,
			Stale: b.Status == store.BackupStale}
	}
	return out
}
