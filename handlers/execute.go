package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"fieldkit/exec"
	"fieldkit/exec/backup"
	"fieldkit/exec/ratelimit"
	"fieldkit/exec/textfsm"
	"fieldkit/exec/variables"
	"fieldkit/store"
	"fieldkit/web"
)

// ExecOptions configures command execution.
type ExecOptions struct {
	Keyring *store.Keyring
	// Limiter is the rate limit with its bypass lists; nil: no rate limit.
	Limiter         *ratelimit.Limiter
	TextFSM         *textfsm.Library // nil: no parsing
	HostKeyPolicy   exec.HostKeyPolicy
	MaxOutputBytes  int
	BulkMax         int
	BulkConcurrency int
	// Pool keeps sessions open between executions and limits them per device; nil
	// opens a session for each execution (or bulk group) and closes it after.
	Pool *exec.Pool
	// Context bounds every execution: it is the server's lifetime, not the request's,
	// so a client that goes away cannot cut a config change in half.
	Context context.Context
}

const (
	defaultTimeout = 30
	minTimeout     = 5
	maxTimeout     = 300
)

// MaxTimeout is the longest execution a request may ask for, in seconds: a graceful
// shutdown must wait longer than this.
const MaxTimeout = maxTimeout

// execRequest is one execution as asked for.
type execRequest struct {
	DeviceID   int64
	Token      string
	SetID      int64 // the web UI names one of the user's sets instead of its token
	Variables  map[string]json.RawMessage
	Timeout    int
	TimeoutSet bool   // the request gave the timeout; otherwise it is the default
	Notes      string // why it runs, kept on its log
}

// prepared is an execution that passed every check and may run.
type prepared struct {
	cmd    store.Command
	target store.Target
	secret store.Secret
	text   string            // the command with its variables substituted: exactly what is sent
	values map[string]string // the value each variable took
	source string            // api, bulk, ui or schedule: where the execution came from, for its log
	// schedule and scheduleName name the schedule of a scheduled execution, for its log.
	schedule     int64
	scheduleName string
	client       string // the client's address, for its log
	notes        string // why it runs, as the request said, for its log
	timeout      time.Duration
	// explicit: the request gave the timeout, which then bounds the whole run; else the
	// device's or platform's own timeouts apply where they are set.
	explicit bool
	// backup, for a config collection, is how the platform's configuration is read and
	// kept: its log keeps the output with the secrets masked, and it is not parsed.
	backup *backup.Profile
}

// rejection is why an execution may not run: the status and body of a single
// execute, and the short reason and details of a bulk element.
type rejection struct {
	status     int
	reason     string
	body       any
	details    any
	retryAfter int
}

func (rj *rejection) Error() string { return rj.reason }

func (rj *rejection) httpError() *web.Error {
	e := &web.Error{Status: rj.status, Body: rj.body}
	if rj.retryAfter > 0 {
		e.Header = http.Header{"Retry-After": {strconv.Itoa(rj.retryAfter)}}
	}
	return e
}

func fieldRejection(field, msg string) *rejection {
	fe := map[string]any{field: []string{msg}}
	return &rejection{status: http.StatusBadRequest, reason: msg, body: fe, details: fe}
}

// readExecRequest reads the execution fields from a form (a body, or a bulk element).
func readExecRequest(f *web.Form, tokenRequired bool) execRequest {
	var req execRequest
	req.DeviceID, _ = f.Integer("device_id", true, 1, 1<<53)
	if f.Has("credential_set_id") {
		req.SetID, _ = f.Integer("credential_set_id", true, 1, 1<<53)
		tokenRequired = false
	}
	req.Token, _ = f.Str("credential_token", tokenRequired, 0)
	if raw, ok := f.Raw["variables"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &req.Variables); err != nil {
			f.Errs.Add("variables", "Must be an object of variable name to value.")
		}
	}
	req.Timeout = defaultTimeout
	if n, ok := f.Integer("timeout", false, minTimeout, maxTimeout); ok {
		req.Timeout, req.TimeoutSet = int(n), true
	}
	req.Notes, _ = f.Str("notes", false, store.MaxNotes)
	return req
}

// prepare runs an execution's checks after the body, in order: device, platform and
// address, execute permission, credential token (unless skipped), variables.
func (a *API) prepare(r *http.Request, cmd store.Command, req execRequest, checkToken bool, pc *planCache) (*prepared, error) {
	if pc == nil {
		pc = newPlanCache()
	}
	target, err := pc.target(a, r, req.DeviceID)
	if err != nil {
		return nil, err
	}
	if target.PlatformID == nil || !slices.Contains(cmd.PlatformIDs, *target.PlatformID) {
		plat := target.PlatformSlug
		if plat == "" {
			plat = "none"
		}
		return nil, fieldRejection("device_id", fmt.Sprintf("The device's platform (%s) is not one of this command's platforms.", plat))
	}
	if target.Host == "" {
		return nil, fieldRejection("device_id", "The device has no primary IP address to connect to.")
	}
	if err := pc.mayExecute(a, r, cmd); err != nil {
		return nil, err
	}
	p := &prepared{cmd: cmd, target: target, timeout: time.Duration(req.Timeout) * time.Second, explicit: req.TimeoutSet,
		source: "api", client: web.ClientAddr(r), notes: req.Notes}
	if viaSession(r) {
		p.source = "ui"
	}
	switch {
	case checkToken && req.SetID != 0:
		if p.secret, err = a.credentialSet(r, req.SetID, target); err != nil {
			return nil, err
		}
	case checkToken:
		if p.secret, err = pc.credential(a, r, req.Token, target); err != nil {
			return nil, err
		}
	}
	choices, err := pc.choiceValues(a, r.Context(), cmd, req.DeviceID)
	if err != nil {
		return nil, err
	}
	if p.text, p.values, err = a.render(cmd, req, choices, driverOf(target)); err != nil {
		return nil, err
	}
	return p, nil
}

// mayExecute checks execute_show or execute_config on the command.
func (a *API) mayExecute(r *http.Request, cmd store.Command) error {
	action := "execute_" + cmd.CommandType
	scope, err := a.scope(r, store.TypeCommand, action)
	if err != nil {
		return err
	}
	ok := scope.Granted
	if ok {
		if ok, err = a.DB.Exists(r.Context(), store.TypeCommand, cmd.ID, scope.Expr); err != nil {
			return err
		}
	}
	if !ok {
		msg := fmt.Sprintf("You do not have permission to execute %s commands.", cmd.CommandType)
		return &rejection{status: http.StatusForbidden, reason: msg, body: map[string]string{"detail": msg},
			details: map[string]string{"detail": msg}}
	}
	return nil
}

// lookupCredential finds the requester's active set of a token. Unknown, malformed and
// other users' tokens give the same answer, so the answer tells a guesser nothing.
func (a *API) lookupCredential(r *http.Request, token string) (store.Secret, error) {
	if a.Exec.Keyring == nil {
		return store.Secret{}, errors.New("execution is not configured: no master key")
	}
	s, err := a.DB.CredentialByToken(r.Context(), a.Exec.Keyring, token)
	if errors.Is(err, store.ErrNotFound) || (err == nil && s.OwnerID != web.User(r.Context()).ID) {
		return store.Secret{}, fieldRejection("credential_token", "Invalid credential token.")
	}
	if err != nil {
		return store.Secret{}, err
	}
	if !s.IsActive {
		return store.Secret{}, fieldRejection("credential_token", "This credential set is inactive; activate it in the web interface.")
	}
	return s, nil
}

// credentialSet is lookupCredential for a set named by id (web sessions only): another
// user's set is as unknown as a wrong id.
func (a *API) credentialSet(r *http.Request, id int64, target store.Target) (store.Secret, error) {
	if a.Exec.Keyring == nil {
		return store.Secret{}, errors.New("execution is not configured: no master key")
	}
	s, err := a.DB.CredentialByID(r.Context(), a.Exec.Keyring, web.User(r.Context()).ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Secret{}, fieldRejection("credential_set_id", "Credential set not found.")
	}
	if err != nil {
		return store.Secret{}, err
	}
	if !s.IsActive {
		return store.Secret{}, fieldRejection("credential_set_id", "This credential set is inactive; activate it first.")
	}
	return a.credentialFor(s, target)
}

// credentialFor checks the set's platform restriction against the device.
func (a *API) credentialFor(s store.Secret, target store.Target) (store.Secret, error) {
	if len(s.PlatformIDs) > 0 && (target.PlatformID == nil || !slices.Contains(s.PlatformIDs, *target.PlatformID)) {
		return store.Secret{}, fieldRejection("credential_token",
			fmt.Sprintf("This credential set is not valid for the device's platform (%s).", target.PlatformSlug))
	}
	return s, nil
}

// render validates the variables against their patterns, the device's inventory and
// its driver's rules, and substitutes them as the driver needs them written.
func (a *API) render(cmd store.Command, req execRequest, choices map[string][]string, driver string) (string, map[string]string, error) {
	vars := make([]variables.Variable, len(cmd.Variables))
	for i, v := range cmd.Variables {
		vars[i] = variables.Variable{Name: v.Name, Type: v.VariableType, Required: v.Required, Default: v.DefaultValue}
		if v.Pattern != "" {
			re, err := store.VariablePattern(v.Pattern)
			if err != nil {
				return "", nil, fmt.Errorf("command %d variable %s: stored pattern: %w", cmd.ID, v.Name, err)
			}
			vars[i].Pattern = re
		}
	}
	r := exec.ValueRulesFor(driver)
	text, used, verrs := variables.Render(cmd.Command, vars, req.Variables, choices,
		variables.Rules{Unsafe: r.Unsafe, OptionPrefix: r.OptionPrefix, Quote: r.Quote})
	if len(verrs) > 0 {
		body := map[string]any{"variables": verrs}
		return "", nil, &rejection{status: http.StatusBadRequest, reason: "Invalid variables.", body: body, details: body}
	}
	return text, used, nil
}

// choiceValues lists the allowed values of each inventory variable of cmd on a device.
func (a *API) choiceValues(ctx context.Context, cmd store.Command, deviceID int64) (map[string][]string, error) {
	out := map[string][]string{}
	for _, v := range cmd.Variables {
		cs, err := a.choices(ctx, v.VariableType, deviceID)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			out[v.Name] = append(out[v.Name], c["value"].(string))
		}
	}
	return out, nil
}

// bypass tells whether the rate limit does not apply to the requesting user.
func (a *API) bypass(ctx context.Context, p store.Principal) (bool, error) {
	users, groups := a.Exec.Limiter.Bypass()
	if slices.Contains(users, p.Username) {
		return true, nil
	}
	if len(groups) == 0 || len(p.GroupIDs) == 0 {
		return false, nil
	}
	for _, g := range groups {
		id, err := a.DB.GroupIDByName(ctx, g)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, err
		}
		if slices.Contains(p.GroupIDs, id) {
			return true, nil
		}
	}
	return false, nil
}

// acquire takes a rate-limit slot for the device, or returns the 429 rejection.
func (a *API) acquire(r *http.Request, deviceID int64) (ratelimit.Slot, error) {
	return a.acquireFor(r.Context(), web.User(r.Context()), deviceID)
}

// acquireFor is acquire for a user named outside a request (a schedule's owner).
func (a *API) acquireFor(ctx context.Context, user store.Principal, deviceID int64) (ratelimit.Slot, error) {
	if a.Exec.Limiter == nil || !a.Exec.Limiter.Enabled() {
		return ratelimit.Slot{}, nil
	}
	if ok, err := a.bypass(ctx, user); err != nil || ok {
		return ratelimit.Slot{}, err
	}
	slot, st, ok := a.Exec.Limiter.Acquire(deviceID)
	if ok {
		return slot, nil
	}
	a.observer().RateLimited()
	minutes := int(st.Window / time.Minute)
	last := fmt.Sprintf("%d minutes", minutes)
	if minutes == 1 {
		last = "minute"
	}
	wait := max(1, ratelimit.RetryAfterSeconds(st.RetryAfter))
	details := map[string]any{
		"reason": fmt.Sprintf("Device rate limit exceeded: %d/%d successful commands in the last %s",
			st.Count, st.Limit, last),
		"current_count": st.Count, "limit": st.Limit, "time_window_minutes": minutes,
		// Retry-After's seconds in the body too, for a client reading the body alone (a
		// bulk element has no header of its own).
		"retry_after_seconds": wait,
	}
	return slot, &rejection{status: http.StatusTooManyRequests, reason: "Rate limit exceeded",
		body: map[string]any{"error": "Rate limit exceeded", "details": details}, details: details,
		retryAfter: wait}
}

func (a *API) execOptions() exec.Options {
	return exec.Options{MaxOutputBytes: a.Exec.MaxOutputBytes, HostKeyPolicy: a.Exec.HostKeyPolicy,
		HostKeys: a.DB, Logger: a.Logger}
}

// driverOf is the driver a device runs with: exec decides from its platform's configured
// driver and slug; a device without a platform is driven generically.
func driverOf(t store.Target) string {
	if t.PlatformID == nil {
		return "generic"
	}
	return exec.DriverFor(t.PlatformDriver, t.PlatformSlug)
}

func credentials(s store.Secret) exec.Credentials {
	return exec.Credentials{Username: s.Username, Password: s.Password, EnableSecret: s.EnableSecret,
		EnableMode: exec.EnableMode(s.EnableMode), PrivateKey: []byte(s.PrivateKey)}
}

func execTarget(t store.Target) exec.Target {
	return exec.Target{DeviceID: t.ID, Name: t.Name, Host: t.Host, Port: t.Port, Driver: driverOf(t),
		LegacyAlgorithms: t.LegacyAlgorithms, PromptPattern: t.PromptPattern}
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// bound is the bound of a whole single execution. A timeout the request gives bounds
// everything, as the contract says; otherwise the device's (or its platform's) connect
// and command timeouts replace the default for their part, and the whole may take their
// sum with the default, never more than MaxTimeout.
func (p *prepared) bound() time.Duration {
	if p.explicit {
		return p.timeout
	}
	return min(p.timeout+seconds(p.target.ConnectTimeout)+seconds(p.target.CommandTimeout), seconds(maxTimeout))
}

// stepTimeout is the bound of one execution's command: the request's timeout if it gave
// one, else the device's (or platform's) command timeout, else the default.
func (p *prepared) stepTimeout() time.Duration {
	if !p.explicit && p.target.CommandTimeout > 0 {
		return seconds(p.target.CommandTimeout)
	}
	return p.timeout
}

// job is the work of executions prepared for one device with one credential set, in
// order: a single execution is a job of one, a bulk request's group a job of several,
// and both run (and measure execution_time) the same way, through the session pool.
// Logging in counts against the first command's timeout unless the device bounds it
// with its own connect timeout.
func (a *API) job(ps []*prepared) exec.Job {
	first := ps[0]
	t := execTarget(first.target)
	if !first.explicit {
		t.ConnectTimeout = seconds(first.target.ConnectTimeout)
	}
	steps := make([]exec.Step, len(ps))
	for i, p := range ps {
		steps[i] = exec.Step{Command: exec.Command{Type: p.cmd.CommandType, Text: p.text}, Timeout: p.stepTimeout()}
	}
	return exec.Job{Target: t, Creds: credentials(first.secret), SetID: first.secret.SetID,
		SetVersion: first.secret.Version, Options: a.execOptions(), Steps: steps}
}

// outcome is a finished execution, logged.
type outcome struct {
	res     exec.Result
	parsed  textfsm.Parsed
	logID   int64
	message string         // error_message: the failure in plain words, or the syntax error
	failure map[string]any // the failure's parts (failureBody); nil when none
}

// finish parses, logs (before any response is sent) and releases the slot.
func (a *API) finish(ctx context.Context, p *prepared, user store.Principal, started time.Time, res exec.Result, slot ratelimit.Slot) (outcome, error) {
	o := outcome{res: res, parsed: a.parse(p, res), message: res.ErrorMessage}
	output := res.Output
	if p.backup != nil {
		// The configuration as read is kept encrypted with its version; the log, which
		// every viewer of logs reads, keeps it with its secrets masked.
		output, _ = p.backup.MaskSecrets(output)
	}
	log := store.Values{
		"command": nullID(p.cmd.ID), "command_name": p.cmd.Name, "command_type": p.cmd.CommandType,
		"device": p.target.ID, "device_name": p.target.Name, "user": user.ID, "username": user.Username,
		"output": output, "parsed_output": o.parsed, "syntax_error": res.Syntax,
		"success": res.Success, "execution_duration": round3(res.Duration.Seconds()),
		"execution_time": started, "sent_command": p.text, "variables": p.values, "source": p.source,
		"client_address": p.client, "credential_set": nullID(p.secret.SetID), "credential_set_name": p.secret.Name,
		"notes": p.notes,
	}
	if f := res.Failure; f != nil {
		o.message, o.failure = f.Message(p.secret.Name), failureBody(f, p.secret.Name)
		log["failure"] = o.failure
	}
	log["error_message"] = o.message
	id, err := a.DB.CreateLog(context.WithoutCancel(ctx), log)
	slot.Release(res.Success)
	a.observer().Execution(driverOf(p.target), exec.Outcome(res), res.Duration)
	if err != nil {
		return o, err
	}
	o.logID = id
	if p.schedule != 0 {
		if err := a.DB.LinkLogSchedule(context.WithoutCancel(ctx), id, p.schedule, p.scheduleName); err != nil {
			return o, err
		}
	}
	a.pokeEvents()
	if err := a.DB.TouchCredentialSet(context.WithoutCancel(ctx), p.secret); err != nil {
		a.Logger.Warn("credential set last_used not updated", "set_id", p.secret.SetID, "err", err)
	}
	attrs := []slog.Attr{slog.Int64("command_id", p.cmd.ID), slog.Int64("device_id", p.target.ID),
		slog.String("username", user.Username), slog.Bool("success", res.Success), slog.Int64("log_id", id),
		slog.Float64("seconds", res.Duration.Seconds())}
	if f := res.Failure; f != nil {
		attrs = append(attrs, slog.String("phase", string(f.Phase)), slog.String("reason", string(f.Reason)), slog.String("err", f.Error()))
	}
	a.Logger.LogAttrs(ctx, slog.LevelInfo, "execution", attrs...)
	return o, nil
}

// nullID is an id, or nil for none.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// failureBody is a failure as the API shows it beside error_message and keeps in the
// log: the parts its sentence is made of, for a client (the web UI's details) to show.
func failureBody(f *exec.Failure, set string) map[string]any {
	m := map[string]any{"phase": f.Phase, "reason": f.Reason, "address": f.Host, "port": f.Port,
		"username": f.Username, "credential_set": set}
	if f.Cause != "" {
		m["detail"] = f.Cause
	}
	if f.Reason == exec.ReasonTimeout {
		m["timeout_seconds"] = f.Timeout.Seconds()
	}
	if f.By != "" {
		m["cancelled_by"] = f.By
	}
	if f.Reason == exec.ReasonExitStatus {
		m["exit_status"] = f.Status
	}
	return m
}

func (a *API) parse(p *prepared, res exec.Result) textfsm.Parsed {
	switch {
	case p.backup != nil:
		return notParsed("config backups are not parsed")
	case p.cmd.CommandType != store.CommandShow:
		return notParsed("a config command: only show commands are parsed")
	case !res.Success:
		return notParsed("the execution failed")
	case a.Exec.TextFSM == nil:
		return notParsed("no templates loaded")
	}
	parsed := a.Exec.TextFSM.Parse(textfsm.Platforms(p.target.PlatformSlug, p.target.PlatformName, driverOf(p.target)), p.text, res.Output)
	if parsed.Data == nil {
		parsed.Data = []map[string]any{}
	}
	return parsed
}

func notParsed(why string) textfsm.Parsed {
	return textfsm.Parsed{Data: []map[string]any{}, Error: why}
}

// checkedRequest is the front half of execute and validate-variables: the command must
// be visible (404), the body valid (400), then every check of prepare in its order.
// withToken says whether the credential is checked too.
func (a *API) checkedRequest(r *http.Request, withToken bool, fields ...string) (*prepared, error) {
	id, err := web.PathID(r)
	if err != nil {
		return nil, err
	}
	cmd, err := visible(a, r, commandResource, id, a.DB.LoadCommands)
	if err != nil {
		return nil, err
	}
	f, err := web.DecodeForm(r, fields...)
	if err != nil {
		return nil, err
	}
	req := readExecRequest(f, withToken)
	if err := f.Err(); err != nil {
		return nil, err
	}
	p, err := a.prepare(r, cmd, req, withToken, nil)
	if err != nil {
		return nil, asHTTP(err)
	}
	return p, nil
}

// execute serves POST commands/{id}/execute/; on a hub, a site's command runs at its
// site (hubExecute).
func (a *API) execute(w http.ResponseWriter, r *http.Request) error {
	if a.Hub != nil {
		if handled, err := a.hubExecute(w, r); handled {
			return err
		}
	}
	x, err := a.startExecution(r)
	if err != nil {
		return err
	}
	body, err := x.Run(nil)
	if err != nil {
		return err
	}
	web.Write(w, http.StatusOK, body)
	return nil
}

func (a *API) execContext() context.Context {
	if a.Exec.Context != nil {
		return a.Exec.Context
	}
	return context.Background()
}

func (a *API) executeBody(p *prepared, o outcome) map[string]any {
	return map[string]any{
		"success": o.res.Success, "output": o.res.Output, "error_message": o.message,
		"execution_time": round3(o.res.Duration.Seconds()),
		"command":        map[string]any{"id": p.cmd.ID, "name": p.cmd.Name, "command_type": p.cmd.CommandType},
		"device":         map[string]any{"id": p.target.ID, "name": p.target.Name},
		"syntax_error":   o.res.Syntax, "parsed_output": o.parsed, "command_log_id": o.logID,
		"output_truncated": o.res.Truncated, "failure": o.failure,
	}
}

// round3 is a duration in seconds to the millisecond, as the API states durations.
func round3(f float64) float64 { return store.Millis(f) }

// asHTTP turns a rejection into its HTTP error; other errors pass through.
func asHTTP(err error) error {
	var rj *rejection
	if errors.As(err, &rj) {
		return rj.httpError()
	}
	return err
}

// Observer is told what /metrics counts.
type Observer interface {
	Execution(driver, outcome string, d time.Duration)
	RateLimited()
	BulkPending(delta int)
}

type noObserver struct{}

func (noObserver) Execution(string, string, time.Duration) {}
func (noObserver) RateLimited()                            {}
func (noObserver) BulkPending(int)                         {}

func (a *API) observer() Observer {
	if a.Observer == nil {
		return noObserver{}
	}
	return a.Observer
}
