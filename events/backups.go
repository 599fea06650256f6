package events

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"fieldkit/store"
)

// ConfigStored queues the event of a backup that kept a changed configuration
// (handlers.ConfigEvents).
func (p *Processor) ConfigStored(ctx context.Context, o store.ConfigOutcome) { p.configEvent(ctx, o) }

// ConfigQuarantined queues the event of a backup's read refused as bad.
func (p *Processor) ConfigQuarantined(ctx context.Context, o store.ConfigOutcome) {
	p.configEvent(ctx, o)
}

// configEvent queues a config version's object_created, when something listens.
func (p *Processor) configEvent(ctx context.Context, o store.ConfigOutcome) {
	ctx = context.WithoutCancel(ctx)
	if on, err := p.o.DB.Subscribed(ctx, store.TypeConfigVersion); err != nil || !on {
		return
	}
	at := o.Time
	if at.IsZero() {
		at = p.o.Now()
	}
	if err := p.o.DB.QueueEvent(ctx, store.Event{ObjectType: store.TypeConfigVersion, ObjectID: o.VersionID,
		EventType: "object_created", At: at}); err != nil {
		p.o.Logger.Error("config version event not queued", "version_id", o.VersionID, "err", err)
	}
	p.Poke()
}

// WatchBackups takes each device's backup health as it stands and raises a device's
// backup_stale when its last good backup has grown older than its limit, backup_fresh
// when it is within its limit again. The first call after start-up raises the state of
// every device that has a backup (the rules' own states keep that from firing twice);
// a device never backed up raises nothing (it is counted in /metrics and listed).
func (p *Processor) WatchBackups(ctx context.Context, rows []store.BackupHealth) error {
	p.backupMu.Lock()
	defer p.backupMu.Unlock()
	first := p.backups == nil
	if first {
		p.backups = map[int64]string{}
	}
	on, err := p.o.DB.Subscribed(ctx, store.TypeDevice)
	if err != nil {
		return err
	}
	queued := false
	for _, b := range rows {
		was, seen := p.backups[b.DeviceID]
		p.backups[b.DeviceID] = b.Status
		if b.Status == store.BackupNever || (seen && was == b.Status) || (!seen && !first && b.Status == store.BackupOK) || !on {
			continue
		}
		ev := "backup_fresh"
		if b.Status == store.BackupStale {
			ev = "backup_stale"
		}
		data, err := p.o.Render.RenderEvent(ctx, store.TypeDevice, b.DeviceID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		data["backup"] = map[string]any{"status": b.Status, "last_good": b.LastGood.UTC().Format(store.TimeFormat),
			"age_seconds": int64(b.Age / time.Second), "limit_seconds": int64(b.Limit / time.Second),
			"latest_version_id": b.LatestVersion}
		raw, _ := json.Marshal(data)
		if err := p.o.DB.QueueEvent(ctx, store.Event{ObjectType: store.TypeDevice, ObjectID: b.DeviceID, EventType: ev,
			At: p.o.Now(), Data: raw}); err != nil {
			return err
		}
		queued = true
	}
	if queued {
		p.Poke()
	}
	return nil
}
