package main

import (
	"context"
	"log/slog"
	"time"

	"fieldkit/handlers"
	"fieldkit/hub"
	"fieldkit/observe"
	"fieldkit/store"
)

// edgeHub is what a site that has a hub (hub.url) runs beside its server: the pusher of
// its records and the runner of the hub's jobs.
type edgeHub struct {
	pusher *hub.Pusher
	jobs   *hub.Runner
}

// Wait waits for both to stop (at once for none).
func (e *edgeHub) Wait() {
	if e != nil {
		e.pusher.Wait()
		e.jobs.Wait()
	}
}

// Pusher is the pusher, nil for none.
func (e *edgeHub) Pusher() *hub.Pusher {
	if e == nil {
		return nil
	}
	return e.pusher
}

// startEdgeHub starts pushing this site's records to its hub (hub.url), after turning
// the outbox on so that every change from now on is noted, and taking the hub's jobs;
// without hub.url it turns the outbox off and returns nil. Both stop with bg.
func startEdgeHub(ctx, bg context.Context, cfg Config, db *store.DB, api *handlers.API, clock func() time.Time,
	m *observe.Metrics, logger *slog.Logger) (*edgeHub, error) {
	if db.Postgres() {
		return nil, nil // a hub on PostgreSQL notes nothing for another (config: no hub.url)
	}
	if cfg.Hub.URL == "" {
		n, err := db.DisableOutbox(ctx)
		if n > 0 {
			logger.Warn("hub.url is not set: records are no longer noted for a hub, and those not sent wait for one", "records", n)
		}
		return nil, err
	}
	p, err := hub.NewPusher(db, api, hub.PusherConfig{URL: cfg.Hub.URL, Token: cfg.Hub.Token, CAFile: cfg.Hub.CAFile,
		Version: version, Now: clock}, logger)
	if err != nil {
		return nil, err
	}
	st, err := db.EnableOutbox(ctx, cfg.Hub.URL)
	if err != nil {
		return nil, err
	}
	logger.Info("pushing this site's records to its hub", "url", cfg.Hub.URL, "pending", st.Pending, "epoch", st.Epoch)
	p.Start(bg)
	// The jobs the hub sends: polled beside the pushes, answered through the outbox.
	jobs, err := hub.NewRunner(db, api, hub.PusherConfig{URL: cfg.Hub.URL, Token: cfg.Hub.Token, CAFile: cfg.Hub.CAFile,
		Version: version}, p.Wake, logger)
	if err != nil {
		return nil, err
	}
	jobs.Start(bg)
	m.HubPusher(func() observe.HubStats {
		s := p.Status()
		h := observe.HubStats{Up: s.State == "ok", Sent: s.Sent, Failures: s.Failures}
		if st, err := db.OutboxState(context.Background()); err == nil {
			h.Pending, h.Behind = st.Pending, behind(st, db.Now())
		}
		return h
	})
	return &edgeHub{pusher: p, jobs: jobs}, nil
}

// behind is how old the oldest record the hub has not acknowledged is, at now.
func behind(st store.OutboxState, now time.Time) time.Duration {
	if st.Oldest.IsZero() {
		return 0
	}
	return max(now.Sub(st.Oldest), 0)
}

// hubHealth is the pusher's part of /api/status/.
func hubHealth(ctx context.Context, db *store.DB, p *hub.Pusher) map[string]any {
	s := p.Status()
	out := map[string]any{"url": s.URL, "state": s.State, "sent": s.Sent, "duplicates": s.Duplicates, "failures": s.Failures}
	if s.LastError != "" {
		out["last_error"] = s.LastError
	}
	if !s.LastPush.IsZero() {
		out["last_push"] = s.LastPush.UTC().Format(time.RFC3339Nano)
	}
	if st, err := db.OutboxState(ctx); err == nil {
		out["pending"], out["behind_seconds"] = st.Pending, behind(st, db.Now()).Seconds()
		out["epoch"], out["instance"], out["acknowledged"] = st.Epoch, st.Instance, st.Acked
	}
	return out
}
