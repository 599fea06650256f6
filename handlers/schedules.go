package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"fieldkit/schedules"
	"fieldkit/store"
	"fieldkit/web"
)

// Scheduler runs the schedules (schedules.Scheduler).
type Scheduler interface {
	// RunNow starts a run at once: store.ErrScheduleBusy while one is going, a
	// *schedules.PausedError when the schedule cannot run.
	RunNow(ctx context.Context, id int64, by string) error
	// Changed says that schedules were written.
	Changed()
}

// scheduleHooks check a schedule as a whole: when it runs (a cron expression or an
// interval, a whole window), what (a command for kind command, variables it has), on
// what (at least one device, site, platform or tag) and with what: a service credential
// set, which the writer must be allowed to attach (the service action on it). Whoever
// saves a schedule becomes its owner: its runs execute with the owner's permissions, so
// nobody makes a schedule do more than they may do themselves.
var scheduleHooks = hooks{check: checkSchedule, written: func(a *API) {
	if a.Schedules != nil {
		a.Schedules.Changed()
	}
}}

func checkSchedule(ctx context.Context, a *API, f *web.Form, v store.Values, cur store.Row, _ bool) error {
	pick := func(name string) any {
		if x, ok := v[name]; ok || f.Has(name) {
			return x
		}
		return cur[name]
	}
	if !f.Errs.Has("cron") && !f.Errs.Has("interval") && !f.Errs.Has("window_start") && !f.Errs.Has("window_end") {
		cron, _ := pick("cron").(string)
		interval, hasInterval := pick("interval").(int64)
		start, _ := pick("window_start").(string)
		end, _ := pick("window_end").(string)
		for field, msg := range schedules.CheckWhen(cron, interval, hasInterval, start, end) {
			f.Errs.Add(field, msg)
		}
	}
	command := refID(pick("command"))
	kind, _ := pick("kind").(string)
	switch {
	case (kind == "" || kind == "command") && command == 0 && !f.Errs.Has("command"):
		f.Errs.Add("command", "A schedule of kind command needs a command.")
	case kind == "config_backup" && command != 0:
		f.Errs.Add("command", "A config backup runs each device's running-config command: leave command empty.")
	case kind == "config_backup" && len(mapOf(pick("variables"))) > 0:
		f.Errs.Add("variables", "A config backup takes no variables.")
	}
	if command != 0 && !f.Errs.Has("variables") {
		if err := checkScheduleVariables(ctx, a, f, command, pick("variables")); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc([]string{"devices", "sites", "platforms", "tags"}, func(n string) bool { return len(refIDs(pick(n))) > 0 }) &&
		!f.Errs.Has("devices") {
		f.Errs.Add("devices", "Give the devices, sites, platforms or tags the schedule runs on.")
	}
	set := refID(pick("credential_set"))
	if set == 0 && !f.Errs.Has("credential_set") {
		f.Errs.Add("credential_set", "A schedule runs with a service credential set: choose one.")
	}
	if set != 0 && !f.Errs.Has("credential_set") {
		service, err := a.DB.IsServiceSet(ctx, set)
		if err != nil {
			return err
		}
		if !service {
			f.Errs.Add("credential_set", "This is a person's own credential set. A schedule runs only with a service "+
				"credential set, made for unattended use by an administrator.")
		}
	}
	if len(f.Errs) > 0 {
		return nil
	}
	if err := mayAttachService(ctx, a, set); err != nil {
		return err
	}
	v["owner_id"] = web.User(ctx).ID
	return nil
}

// mayAttachService checks the service action on a service credential set.
func mayAttachService(ctx context.Context, a *API, set int64) error {
	scope, err := a.DB.Scope(ctx, web.User(ctx), store.TypeCredentialSet, store.ActionService)
	if err != nil {
		return err
	}
	ok := scope.Granted
	if ok {
		if ok, err = a.DB.Exists(ctx, store.TypeCredentialSet, set, scope.Expr); err != nil {
			return err
		}
	}
	if !ok {
		return web.Forbidden("You may not use this service credential set: attaching one to a schedule needs the " +
			"service action on netbox_toolkit_plugin.devicecredentialset.")
	}
	return nil
}

// checkScheduleVariables refuses a value for a variable the command does not have.
func checkScheduleVariables(ctx context.Context, a *API, f *web.Form, command int64, vars any) error {
	m, _ := vars.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	cmds, err := a.DB.LoadCommands(ctx, []int64{command})
	if err != nil || len(cmds) == 0 {
		return err
	}
	for name := range m {
		if !slices.ContainsFunc(cmds[0].Variables, func(cv store.CommandVariable) bool { return cv.Name == name }) {
			f.Errs.Add("variables", fmt.Sprintf("The command %s has no variable %q.", cmds[0].Name, name))
		}
	}
	return nil
}

func mapOf(x any) map[string]any {
	m, _ := x.(map[string]any)
	return m
}

// refID is the id of a reference as parsed (an int64) or stored (a nested Row); 0 for none.
func refID(x any) int64 {
	switch r := x.(type) {
	case int64:
		return r
	case store.Row:
		return r.ID()
	}
	return 0
}

// refIDs are the ids of a relation as parsed ([]int64) or stored ([]store.Row).
func refIDs(x any) []int64 {
	switch r := x.(type) {
	case []int64:
		return r
	case []store.Row:
		return rowIDs(r)
	}
	return nil
}

// runSchedule serves POST schedules/{id}/run/: a run starts at once (202); the
// schedule's last_run shows its outcome when it ends, its logs carry its id. It needs
// the run action on the schedule.
func (a *API) runSchedule(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	if _, err := changeable(a, r, scheduleResource, id, store.ActionRun, a.rows(scheduleResource)); err != nil {
		return err
	}
	if a.Schedules == nil {
		return &web.Error{Status: http.StatusServiceUnavailable, Body: map[string]string{"detail": "This server runs no schedules."}}
	}
	err = a.Schedules.RunNow(r.Context(), id, web.User(r.Context()).Username)
	var paused *schedules.PausedError
	switch {
	case errors.Is(err, store.ErrScheduleBusy):
		return &web.Error{Status: http.StatusConflict, Body: map[string]string{"detail": "A run of this schedule is still going."}}
	case errors.As(err, &paused):
		return &web.Error{Status: http.StatusConflict, Body: map[string]string{"detail": "The schedule cannot run: " + paused.Reason}}
	case err != nil:
		return err
	}
	web.Write(w, http.StatusAccepted, map[string]any{"detail": "The run has started; the schedule's last_run shows how it went.",
		"schedule": id})
	return nil
}
