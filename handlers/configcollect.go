package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"fieldkit/exec"
	"fieldkit/exec/backup"
	"fieldkit/exec/ratelimit"
	"fieldkit/store"
)

// The checks of a read when BackupOptions leaves them zero (config_backup's defaults).
const (
	DefaultMinLines  = 5
	DefaultMaxShrink = 0.5
)

// BackupOptions are the checks a config backup's read must pass before it is kept.
type BackupOptions struct {
	// MinLines is the floor: a configuration of fewer lines is quarantined (0:
	// DefaultMinLines).
	MinLines int
	// MaxShrink is the share (0 to 1) of its lines a configuration may lose against the
	// last version with no FieldKit config execution between; more is quarantined (0:
	// DefaultMaxShrink).
	MaxShrink float64
	// Events is told of every version kept and every read quarantined; nil: nobody.
	Events ConfigEvents
	// MaxAge is the age past which a device's last good backup is stale (backup
	// health); a site's backup_max_age_hours custom field overrides it. 0: 26 h.
	MaxAge time.Duration
}

// ConfigEvents is told what config collections keep and refuse, as they happen, by
// whatever started them (the API, the web UI, a schedule): a webhook or an event rule
// subscribes here. Calls come from the collecting goroutines, one per device, and
// should return quickly.
type ConfigEvents interface {
	ConfigStored(ctx context.Context, o store.ConfigOutcome)
	ConfigQuarantined(ctx context.Context, o store.ConfigOutcome)
}

// CollectJob is a config collection: the devices, the credential set to log in with,
// who it runs as (its logs name them; the rate limit's bypass lists read them) and
// where it comes from (the logs' source: "backup" for the API and the web UI).
type CollectJob struct {
	Devices []int64
	Secret  store.Secret
	User    store.Principal
	Source  string
	Client  string // the client's address, for the logs ("" for a schedule)
}

// CollectResult is what one device's collection became.
type CollectResult struct {
	DeviceID   int64  `json:"device_id"`
	DeviceName string `json:"device_name"`
	// Status is stored, unchanged, quarantined, or rejected (never run: the device is
	// gone or has no address or no running-config command, the credential set is not
	// for its platform, or its rate limit is reached).
	Status       string `json:"status"`
	VersionID    *int64 `json:"version_id"`
	CommandLogID *int64 `json:"command_log_id"`
	Reason       string `json:"reason"`
}

// statusRejected is the status of a device whose collection never ran.
const statusRejected = "rejected"

// CollectConfigs runs a config collection now: on each device, the running-config
// command of its platform (or its driver's) as an ordinary execution marked as a
// backup, through the same drivers, session pool, rate limit and log as any execute,
// at most exec.bulk_concurrency devices at once; then each read is kept as a version,
// found unchanged, or quarantined (ConfigEvents is told). It checks no permission:
// the caller has (the API's collect, a schedule). Results are in the order of
// job.Devices.
func (a *API) CollectConfigs(ctx context.Context, job CollectJob) []CollectResult {
	out := make([]CollectResult, len(job.Devices))
	conc := a.Exec.BulkConcurrency
	if conc < 1 {
		conc = 16
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i, id := range job.Devices {
		out[i] = CollectResult{DeviceID: id, Status: statusRejected}
		p, slot, reason := a.planCollect(ctx, job, id)
		if p == nil {
			out[i].Reason = reason
			if t, err := a.DB.DeviceTarget(ctx, id); err == nil {
				out[i].DeviceName = t.Name
			}
			continue
		}
		out[i].DeviceName = p.target.Name
		wg.Add(1)
		sem <- struct{}{}
		go func(r *CollectResult) {
			defer wg.Done()
			defer func() { <-sem }()
			*r = a.collectOne(ctx, job, p, slot)
		}(&out[i])
	}
	wg.Wait()
	return out
}

// planCollect prepares one device's collection and takes its rate-limit slot, or says
// why it cannot run.
func (a *API) planCollect(ctx context.Context, job CollectJob, id int64) (*prepared, ratelimit.Slot, string) {
	target, err := a.DB.DeviceTarget(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ratelimit.Slot{}, "Device not found."
	case err != nil:
		a.Logger.Error("config collection: device", "device_id", id, "err", err)
		return nil, ratelimit.Slot{}, "Internal error."
	case target.Host == "":
		return nil, ratelimit.Slot{}, "The device has no primary IP address to connect to."
	}
	if _, err := a.credentialFor(job.Secret, target); err != nil {
		return nil, ratelimit.Slot{}, err.Error()
	}
	ignore, err := backup.ParseIgnore(target.ConfigIgnore)
	if err != nil {
		return nil, ratelimit.Slot{}, "The platform's config_ignore does not compile: " + err.Error()
	}
	profile := backup.For(driverOf(target), target.ConfigCommand, ignore)
	if profile.Command == "" {
		return nil, ratelimit.Slot{}, fmt.Sprintf("The %s driver has no running-config command: set the platform's config_command.", driverOf(target))
	}
	slot, err := a.acquireFor(ctx, job.User, id)
	var rj *rejection
	if errors.As(err, &rj) {
		return nil, ratelimit.Slot{}, fmt.Sprint(rj.details.(map[string]any)["reason"])
	}
	if err != nil {
		a.Logger.Error("config collection: rate limit", "device_id", id, "err", err)
		return nil, ratelimit.Slot{}, "Internal error."
	}
	return &prepared{cmd: store.Command{Name: "Config backup", CommandType: store.CommandShow, Command: profile.Command},
		target: target, secret: job.Secret, text: profile.Command, source: job.Source, client: job.Client,
		timeout: seconds(defaultTimeout), backup: &profile}, slot, ""
}

// collectOne runs one device's collection, logs it and keeps what it read.
func (a *API) collectOne(ctx context.Context, job CollectJob, p *prepared, slot ratelimit.Slot) CollectResult {
	r := CollectResult{DeviceID: p.target.ID, DeviceName: p.target.Name}
	started := time.Now()
	runCtx, cancel := context.WithTimeout(a.execContext(), p.bound())
	defer cancel()
	res := a.Exec.Pool.Run(runCtx, a.job([]*prepared{p}))[0]
	o, err := a.finish(context.WithoutCancel(ctx), p, job.User, started, res, slot)
	if err != nil {
		a.Logger.Error("config collection not logged", "device_id", p.target.ID, "err", err)
		r.Status, r.Reason = statusRejected, "Internal error."
		return r
	}
	r.CommandLogID = &o.logID
	kept, err := a.keepConfig(context.WithoutCancel(ctx), p, res, o)
	if err != nil {
		a.Logger.Error("config collection not kept", "device_id", p.target.ID, "log_id", o.logID, "err", err)
		r.Status, r.Reason = statusRejected, "Internal error."
		return r
	}
	r.Status, r.Reason, r.VersionID = kept.Status, kept.Reason, &kept.VersionID
	a.Logger.LogAttrs(ctx, slog.LevelInfo, "config collected", slog.Int64("device_id", p.target.ID),
		slog.String("status", kept.Status), slog.Int64("version_id", kept.VersionID), slog.Int64("log_id", o.logID))
	if ev := a.Backup.Events; ev != nil {
		switch kept.Status {
		case store.ConfigStored:
			ev.ConfigStored(ctx, kept)
		case store.ConfigQuarantined:
			ev.ConfigQuarantined(ctx, kept)
		}
	}
	return r
}

// keepConfig hands a collection's read to the store with what the profile checks of
// it: normalised, its end marker, its secrets masked.
func (a *API) keepConfig(ctx context.Context, p *prepared, res exec.Result, o outcome) (store.ConfigOutcome, error) {
	read := store.ConfigRead{DeviceID: p.target.ID, DeviceName: p.target.Name, LogID: o.logID,
		MinLines: a.Backup.MinLines, MaxShrink: a.Backup.MaxShrink}
	if read.MinLines <= 0 {
		read.MinLines = DefaultMinLines
	}
	if read.MaxShrink <= 0 {
		read.MaxShrink = DefaultMaxShrink
	}
	switch {
	case !res.Success:
		read.Failed = o.message
	case res.Truncated:
		read.Problem = "the output was cut at exec.max_output_bytes"
	default:
		read.Text = p.backup.Normalize(res.Output)
		if err := p.backup.Check(read.Text); err != nil {
			read.Problem = err.Error()
		}
		read.Masked, read.Secrets = p.backup.MaskSecrets(read.Text)
	}
	return a.DB.KeepConfig(ctx, a.Exec.Keyring, read)
}
