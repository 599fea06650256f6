package handlers

import (
	"context"
	"net/http"
	"time"

	"fieldkit/exec"
	"fieldkit/exec/ratelimit"
	"fieldkit/store"
	"fieldkit/web"
)

// Execution is one execute request that passed every check of the API's execute, in
// the same order, and holds the device's rate-limit slot. Run runs it to its end and
// logs it; the API's execute and the web interface's streamed run (StartExecution)
// both go through it, so neither can skip a check the other makes.
//
// Device work runs on the server's execution context, never on the request's: a client
// that goes away does not stop it. Only Cancel does, and only a show command: a config
// change stopped halfway could leave the device half-configured, so it runs to its end
// or its timeout.
type Execution struct {
	a      *API
	p      *prepared
	slot   ratelimit.Slot
	user   store.Principal
	logCtx context.Context // the request's values (its id, for the log), without its end
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// startExecution is execute's front half: the command visible, the body valid, every
// check of prepare in order, then the rate-limit slot.
func (a *API) startExecution(r *http.Request) (*Execution, error) {
	fields := []string{"device_id", "credential_token", "variables", "timeout", "notes"}
	if viaSession(r) {
		// A logged-in web user picks one of their own sets; an API client always sends
		// the token, as the contract says.
		fields = append(fields, "credential_set_id")
	}
	p, err := a.checkedRequest(r, true, fields...)
	if err != nil {
		return nil, err
	}
	slot, err := a.acquire(r, p.target.ID)
	if err != nil {
		return nil, asHTTP(err)
	}
	ctx, cancel := context.WithCancelCause(a.execContext())
	return &Execution{a: a, p: p, slot: slot, user: web.User(r.Context()), logCtx: context.WithoutCancel(r.Context()),
		ctx: ctx, cancel: cancel}, nil
}

// StartExecution checks a request to POST /ui/api/commands/{id}/run/ exactly as the
// API's execute checks its own (authentication, then every check in order, then the
// rate limit) and returns the execution ready to Run. It takes the web session only: a
// request with an API token is refused, as the web interface's endpoints refuse it.
func (a *API) StartExecution(r *http.Request) (*Execution, error) {
	var x *Execution
	err := a.authed(func(_ http.ResponseWriter, r *http.Request) error {
		if !viaSession(r) {
			return web.Forbidden("This endpoint belongs to the web interface and accepts only its login session.")
		}
		var err error
		x, err = a.startExecution(r)
		return err
	})(nil, r)
	return x, err
}

// Run executes, parses and logs, and returns the body execute answers with. output,
// when not nil, receives the device's output as it is read (see exec.Command.Output).
func (x *Execution) Run(output func(text string)) (map[string]any, error) {
	defer x.cancel(nil)
	a, p := x.a, x.p
	started := time.Now()
	ctx, cancel := context.WithTimeout(x.ctx, p.bound())
	defer cancel()
	j := a.job([]*prepared{p})
	j.Steps[0].Command.Output = output
	res := a.Exec.Pool.Run(ctx, j)[0]
	o, err := a.finish(x.logCtx, p, x.user, started, res, x.slot)
	if err != nil {
		return nil, err
	}
	return a.executeBody(p, o), nil
}

// Cancellable reports whether Cancel may stop the execution: a show command may, a
// config command runs to its end.
func (x *Execution) Cancellable() bool { return x.p.cmd.CommandType != store.CommandConfig }

// Cancel stops a show command: the session is closed and the log keeps the output read
// so far with "Cancelled by <by>". It does nothing to a config command.
func (x *Execution) Cancel(by string) {
	if x.Cancellable() {
		x.cancel(&exec.Cancelled{By: by})
	}
}

// Owner is the id of the user who started the execution.
func (x *Execution) Owner() int64 { return x.user.ID }
