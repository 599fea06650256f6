package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"fieldkit/exec"
	"fieldkit/exec/ratelimit"
	"fieldkit/schedules"
	"fieldkit/store"
	"fieldkit/web"
)

// PlanRun checks a run of a schedule exactly as a bulk execution by its owner would be
// checked, device by device (the device visible, on one of the command's platforms,
// with an address; execute permission; the credential set's platforms; the variables;
// the rate limit), and makes a job of each device that passed. The run executes as
// the owner with the schedule's service credential set, which the owner must still be
// allowed to use; its logs say source schedule and name the schedule.
func (a *API) PlanRun(ctx context.Context, s store.ScheduleSpec, trigger, by string) (schedules.Plan, error) {
	if a.Exec.Keyring == nil {
		return schedules.Plan{}, errors.New("execution is not configured: no master key")
	}
	owner, err := a.DB.PrincipalByID(ctx, s.OwnerID)
	if err != nil {
		return schedules.Plan{}, fmt.Errorf("its owner cannot run it: %w", err)
	}
	r, err := a.asUser(ctx, owner)
	if err != nil {
		return schedules.Plan{}, err
	}
	if s.Kind == "config_backup" {
		return a.planBackupRun(r, s, owner)
	}
	cmds, err := a.DB.LoadCommands(r.Context(), []int64{s.CommandID})
	if err != nil {
		return schedules.Plan{}, err
	}
	if len(cmds) == 0 {
		return schedules.Plan{}, errors.New("its command is gone")
	}
	secret, err := a.serviceSecret(r, s.CredentialSetID)
	if err != nil {
		return schedules.Plan{}, err
	}
	devScope, err := a.scope(r, store.TypeDevice, "view")
	if err != nil {
		return schedules.Plan{}, err
	}
	var targets []int64
	if devScope.Granted {
		if targets, err = a.DB.ScheduleTargets(r.Context(), s.ID, s.CommandID, devScope.Expr); err != nil {
			return schedules.Plan{}, err
		}
	}
	var plan schedules.Plan
	pc := newPlanCache()
	req := execRequest{Variables: s.Variables, Timeout: int(s.Timeout / time.Second), TimeoutSet: true}
	for _, id := range targets {
		req.DeviceID = id
		p, slot, err := a.planDevice(r, cmds[0], req, secret, pc)
		if err != nil {
			var rj *rejection
			if !errors.As(err, &rj) {
				return schedules.Plan{}, err
			}
			t, _ := a.DB.DeviceTarget(r.Context(), id)
			plan.Rejected = append(plan.Rejected, schedules.Rejection{DeviceID: id, Device: t.Name, Reason: rejectionText(rj)})
			continue
		}
		p.source, p.client, p.schedule, p.scheduleName = "schedule", "", s.ID, s.Name
		plan.Jobs = append(plan.Jobs, a.scheduledJob(p, slot, owner))
	}
	return plan, nil
}

// asUser is a request of the user's, for the checks an execution makes: they read only
// its context (the user, the check cache's generation).
func (a *API) asUser(ctx context.Context, p store.Principal) (*http.Request, error) {
	ctx, err := a.DB.Fresh(ctx)
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", nil)
	if err != nil {
		return nil, err
	}
	return web.WithUser(r, p), nil
}

// serviceSecret loads the schedule's service credential set, active, and which its
// owner (the request's user) may still use.
func (a *API) serviceSecret(r *http.Request, id int64) (store.Secret, error) {
	secret, err := a.DB.ServiceSecret(r.Context(), a.Exec.Keyring, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Secret{}, errors.New("its service credential set is gone")
	}
	if err != nil {
		return store.Secret{}, err
	}
	if !secret.IsActive {
		return store.Secret{}, fmt.Errorf("its service credential set %s is inactive", secret.Name)
	}
	if err := mayAttachService(r.Context(), a, id); err != nil {
		return store.Secret{}, fmt.Errorf("its owner %s may no longer use the service credential set %s", web.User(r.Context()).Username, secret.Name)
	}
	return secret, nil
}

// planDevice is one device's checks, in the order an execute makes them, and its
// rate-limit slot.
func (a *API) planDevice(r *http.Request, cmd store.Command, req execRequest, secret store.Secret, pc *planCache) (*prepared, ratelimit.Slot, error) {
	p, err := a.prepare(r, cmd, req, false, pc)
	if err != nil {
		return nil, ratelimit.Slot{}, err
	}
	if p.secret, err = a.credentialFor(secret, p.target); err != nil {
		return nil, ratelimit.Slot{}, err
	}
	slot, err := a.acquire(r, p.target.ID)
	return p, slot, err
}

// rejectionText is why a device was refused, in one line.
func rejectionText(rj *rejection) string {
	switch d := rj.details.(type) {
	case map[string]any:
		if v, ok := d["variables"]; ok {
			raw, _ := json.Marshal(v)
			return rj.reason + " " + string(raw)
		}
		if reason, ok := d["reason"].(string); ok {
			return reason
		}
	}
	return rj.reason
}

// scheduledJob is a device's execution in a run: it runs and logs like a bulk
// element. If the scheduler abandons it (past its hard deadline, or crashed), the
// failure is logged instead and a late end changes nothing.
func (a *API) scheduledJob(p *prepared, slot ratelimit.Slot, owner store.Principal) schedules.Job {
	var once sync.Once
	record := func(ctx context.Context, started time.Time, res exec.Result) bool {
		ok := false
		once.Do(func() {
			_, err := a.finish(ctx, p, owner, started, res, slot)
			if err != nil {
				a.Logger.Error("scheduled execution not logged", "schedule_id", p.schedule, "device_id", p.target.ID, "err", err)
			}
			ok = res.Success && err == nil
		})
		return ok
	}
	var began atomic.Int64 // when Run began (Unix nanoseconds), which Abandon reads from another goroutine
	return schedules.Job{Site: p.target.SiteID, Driver: driverOf(p.target), Deadline: p.bound(),
		Run: func(ctx context.Context) bool {
			started := time.Now()
			began.Store(started.UnixNano())
			res := a.Exec.Pool.Run(ctx, a.job([]*prepared{p}))[0]
			return record(context.Background(), started, res)
		},
		Abandon: func(reason string) {
			started := time.Unix(0, began.Load())
			record(context.Background(), started, exec.Result{ErrorMessage: reason, Duration: time.Since(started)})
		},
	}
}

// planBackupRun is a config backup schedule's run: each target device's config
// collection (CollectConfigs: its platform's running-config command, kept as a config
// version or quarantined), as the API's collect makes it for a user holding
// execute_show, here the schedule's owner, with its service credential set.
func (a *API) planBackupRun(r *http.Request, s store.ScheduleSpec, owner store.Principal) (schedules.Plan, error) {
	secret, err := a.serviceSecret(r, s.CredentialSetID)
	if err != nil {
		return schedules.Plan{}, err
	}
	show, err := a.scope(r, store.TypeCommand, "execute_show")
	if err != nil {
		return schedules.Plan{}, err
	}
	if !show.Granted {
		return schedules.Plan{}, fmt.Errorf("its owner %s may not execute show commands, which a backup runs", owner.Username)
	}
	devScope, err := a.scope(r, store.TypeDevice, "view")
	if err != nil || !devScope.Granted {
		return schedules.Plan{}, err
	}
	targets, err := a.DB.ScheduleTargets(r.Context(), s.ID, 0, devScope.Expr)
	if err != nil {
		return schedules.Plan{}, err
	}
	var plan schedules.Plan
	for _, id := range targets {
		t, err := a.DB.DeviceTarget(r.Context(), id)
		if err != nil {
			return schedules.Plan{}, err
		}
		plan.Jobs = append(plan.Jobs, a.backupJob(s, t, secret, owner))
	}
	return plan, nil
}

// backupJob is one device's config collection in a run. CollectConfigs bounds the
// device's work by its own timeouts; the job's hard deadline is the longest execution.
// An abandoned collection is not logged here: CollectConfigs logs it when it ends.
func (a *API) backupJob(s store.ScheduleSpec, t store.Target, secret store.Secret, owner store.Principal) schedules.Job {
	return schedules.Job{Site: t.SiteID, Driver: driverOf(t), Deadline: seconds(maxTimeout),
		Run: func(ctx context.Context) bool {
			res := a.CollectConfigs(ctx, CollectJob{Devices: []int64{t.ID}, Secret: secret, User: owner, Source: "schedule"})[0]
			if res.CommandLogID != nil {
				if err := a.DB.LinkLogSchedule(context.WithoutCancel(ctx), *res.CommandLogID, s.ID, s.Name); err != nil {
					a.Logger.Error("scheduled backup's log not linked", "schedule_id", s.ID, "log_id", *res.CommandLogID, "err", err)
				}
			}
			if res.Status == statusRejected || res.Status == store.ConfigQuarantined {
				a.Logger.Warn("scheduled config backup", "schedule_id", s.ID, "device_id", t.ID, "status", res.Status, "reason", res.Reason)
			}
			return res.Status == store.ConfigStored || res.Status == store.ConfigUnchanged
		},
		Abandon: func(reason string) {
			a.Logger.Error("scheduled config backup abandoned", "schedule_id", s.ID, "device_id", t.ID, "reason", reason)
		},
	}
}
