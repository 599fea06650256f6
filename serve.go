package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/kardianos/service"

	"fieldkit/handlers"
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
	keyring, err := loadKeyring(ctx, e, db, cfg.Server.Data)
	if err != nil {
		return err
	}
	_ = keyring // handed to the execution endpoints
	loc, _ := time.LoadLocation(cfg.Server.TimeZone)
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	scheme := "http"
	if cfg.Server.TLSCert != "" {
		scheme = "https"
	}
	base := scheme + "://" + ln.Addr().String()
	if demo {
		if err := seedDemo(ctx, e, db, base); err != nil {
			ln.Close()
			return fmt.Errorf("demo: %w", err)
		}
	}
	api := handlers.New(handlers.Options{DB: db, Logger: logger, Version: version, Location: loc})
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
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("shutdown did not finish cleanly", "err", err)
	}
	logger.Info("stopped")
	return nil
}
