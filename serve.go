package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/kardianos/service"

	"fieldkit/exec"
	"fieldkit/exec/ratelimit"
	"fieldkit/exec/textfsm"
	"fieldkit/handlers"
	"fieldkit/store"
	"fieldkit/ui"
)

func cmdServe(ctx context.Context, e env, args []string) error {
	fs, c := newFlags("serve", e)
	listen := fs.String("listen", "", "address to listen on (default 127.0.0.1:8080)")
	demo := fs.Bool("demo", false, "seed demo users, inventory, commands and logs, and print how to use them")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	extra := map[string]string{}
	if *listen != "" {
		extra["server.listen"] = *listen
	}
	cfg, err := c.load(e, extra)
	if err != nil {
		return err
	}
	if !service.Interactive() {
		return runService(e, cfg, *demo)
	}
	return serve(ctx, e, cfg, *demo, nil)
}

// serve runs the server until ctx is done, then shuts down gracefully: it stops
// accepting, lets running requests (and so executions, bounded by their timeout) finish,
// and closes the database. ready, if not nil, receives the base URL once listening.
func serve(ctx context.Context, e env, cfg Config, demo bool, ready chan<- string) error {
	started := time.Now()
	logger := newLogger(cfg, e.stderr)
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
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
	keyring, err := loadKeyring(ctx, e, db, cfg.Server.Data)
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
	if demo {
		stopDevices, err := seedDemo(ctx, e, db, keyring, cfg, base)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer stopDevices()
	}
	// Executions get a context of their own: a shutdown lets them finish (bounded by their
	// timeout) and cancels them only when the shutdown timeout runs out.
	execCtx, cancelExec := context.WithCancel(context.Background())
	defer cancelExec()
	web := ui.New(ui.Options{DB: db, Keyring: keyring, Limiter: limiter, Logger: logger, SessionHours: cfg.UI.SessionHours})
	api := handlers.New(handlers.Options{DB: db, Logger: logger, Version: version, Location: loc,
		Session: web.Session, Extra: web.Routes,
		Exec: handlers.ExecOptions{Keyring: keyring, Limiter: limiter, TextFSM: templates,
			HostKeyPolicy: exec.HostKeyPolicy(cfg.SSH.HostKeyPolicy), MaxOutputBytes: cfg.Exec.MaxOutputBytes,
			BulkMax: cfg.Exec.BulkMax, BulkConcurrency: cfg.Exec.BulkConcurrency,
			BypassUsers: cfg.RateLimit.BypassUsers, BypassGroups: cfg.RateLimit.BypassGroups, Context: execCtx}})
	bgCtx, stopBackground := context.WithCancel(context.Background())
	defer stopBackground()
	startBackground(bgCtx, cfg, db, loc, logger)
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() {
		if cfg.Server.TLSCert != "" {
			errc <- srv.ServeTLS(ln, cfg.Server.TLSCert, cfg.Server.TLSKey)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	logger.Info("fieldkit listening", "url", base, "data", cfg.Server.Data, "version", version,
		"startup_ms", time.Since(started).Milliseconds())
	if ready != nil {
		ready <- base
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: waiting for running requests", "timeout", cfg.Server.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
	defer cancel()
	stopBackground()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("shutdown did not finish cleanly", "err", err)
	}
	cancelExec()
	logger.Info("stopped")
	return nil
}

// newLimiter builds the rate limiter, seeded with the window's successes from the logs
// so that a restart does not reset it; nil when rate limiting is off.
func newLimiter(ctx context.Context, cfg Config, db *store.DB) (*ratelimit.Limiter, error) {
	if !cfg.RateLimit.Enabled {
		return nil, nil
	}
	window := time.Duration(cfg.RateLimit.TimeWindowMinutes) * time.Minute
	l := ratelimit.New(cfg.RateLimit.DeviceCommandLimit, window)
	recent, err := db.RecentSuccesses(ctx, time.Now().Add(-window))
	if err != nil {
		return nil, err
	}
	for id, at := range recent {
		l.Seed(id, at...)
	}
	return l, nil
}

// startBackground starts the periodic export, the log retention and the removal of
// expired web sessions, until ctx is done.
func startBackground(ctx context.Context, cfg Config, db *store.DB, loc *time.Location, logger *slog.Logger) {
	go func() {
		for {
			if n, err := db.DeleteExpiredSessions(ctx); err != nil && ctx.Err() == nil {
				logger.Error("expired session cleanup failed", "err", err)
			} else if n > 0 {
				logger.Info("expired sessions deleted", "deleted", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Hour):
			}
		}
	}()
	if cfg.Export.Schedule != "" {
		dir := cfg.Export.Directory
		if dir == "" {
			dir = filepath.Join(cfg.Server.Data, "exports")
		}
		ex := &store.Exporter{DB: db, Logger: logger, Config: store.ExporterConfig{
			Schedule: cfg.Export.Schedule, Directory: dir, Keep: cfg.Export.Keep, Location: loc}}
		go func() {
			if err := ex.Run(ctx); err != nil {
				logger.Error("periodic export stopped", "err", err)
			}
		}()
	}
	if days := cfg.Logs.RetentionDays; days > 0 {
		go func() {
			for {
				cut := time.Now().AddDate(0, 0, -days)
				if n, err := db.PruneLogs(ctx, cut); err != nil && ctx.Err() == nil {
					logger.Error("log retention failed", "err", err)
				} else if n > 0 {
					logger.Info("log retention", "deleted", n, "older_than", cut)
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Hour):
				}
			}
		}()
	}
}
