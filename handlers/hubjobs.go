package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"fieldkit/store"
	"fieldkit/web"
)

// Commands flowing down (docs/HUB-PROTOCOL.md, "Jobs"). On a hub, an execute of a
// site's command queues a job for the site and answers the site's answer when it comes
// within the request's timeout, else 202 with the job to read later. On the site, RunJob
// runs the job as the API's execute would, as the owner of the service credential set
// hub.credential_set names.

const pathHubJobs = "/api/plugins/toolkit/hub-jobs/"

// The expiry a caller may give a job (expires_in, seconds): how long it waits for an
// offline site.
const (
	defaultJobExpiry = 3600
	maxJobExpiry     = 7 * 86400
)

// hubExecute runs an execute of a site's command as a job of that site; false when the
// command is the hub's own (run here as any execute).
func (a *API) hubExecute(w http.ResponseWriter, r *http.Request) (bool, error) {
	id, err := web.PathID(r)
	if err != nil {
		return true, err
	}
	site, edgeCmd, ok, err := a.DB.HubObjectOf(r.Context(), store.KindCommand, id)
	if err != nil || !ok {
		return err != nil, err
	}
	cmd, err := visible(a, r, commandResource, id, a.DB.LoadCommands)
	if err != nil {
		return true, err
	}
	f, err := web.DecodeForm(r, "device_id", "credential_token", "variables", "timeout", "expires_in", "notes")
	if err != nil {
		return true, err
	}
	req := readExecRequest(f, false) // the site runs it with its own hub credential set
	expiry := int64(defaultJobExpiry)
	if n, ok := f.Integer("expires_in", false, 60, maxJobExpiry); ok {
		expiry = n
	}
	if err := f.Err(); err != nil {
		return true, err
	}
	job, err := a.hubJob(r, cmd, site, edgeCmd, req)
	if err != nil {
		return true, err
	}
	job.Expires = a.DB.Now().Add(time.Duration(expiry) * time.Second)
	if job.ID, err = a.DB.QueueHubJob(r.Context(), job); err != nil {
		return true, err
	}
	// The site answers through its outbox: the job is read until it is done, up to the
	// request's timeout (a poll of the database: any hub process may get the answer).
	js, err := a.awaitHubJobs(r.Context(), []int64{job.ID}, time.Now().Add(time.Duration(req.Timeout)*time.Second))
	if err != nil {
		return true, err
	}
	if j := js[0]; j.State == "done" {
		writeRaw(w, j.Status, hubAnswer(j))
	} else {
		w.Header().Set("Location", web.URL(r, pathHubJobs+strconv.FormatInt(j.ID, 10)+"/"))
		web.Write(w, http.StatusAccepted, a.hubJobBody(r, j))
	}
	return true, nil
}

// awaitHubJobs reads the jobs every 200 ms until each is done or expired, or until
// deadline: their last reading, in the order of ids.
func (a *API) awaitHubJobs(ctx context.Context, ids []int64, deadline time.Time) ([]store.HubJob, error) {
	out := make([]store.HubJob, len(ids))
	waiting := make([]int, len(ids)) // indexes into ids of the jobs not yet final
	for i := range ids {
		waiting[i] = i
	}
	for {
		var still []int
		for _, i := range waiting {
			j, err := a.DB.HubJob(ctx, ids[i])
			if err != nil {
				return nil, err
			}
			if out[i] = j; j.State != "done" && j.State != "expired" {
				still = append(still, i)
			}
		}
		if waiting = still; len(waiting) == 0 || !time.Now().Before(deadline) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// hubJob checks an execute of a site's command as the hub can (the device visible and
// at the command's site, the execute permission) and makes its job; the site checks
// the rest (platform, address, variables, rate limit) and answers as its API would.
func (a *API) hubJob(r *http.Request, cmd store.Command, site int64, edgeCmd string, req execRequest) (store.HubJob, error) {
	var j store.HubJob
	if ok, err := a.DB.Exists(r.Context(), store.TypeDevice, req.DeviceID, a.mustScope(r, store.TypeDevice, "view")); err != nil || !ok {
		return j, errors.Join(err, fieldRejection("device_id", fmt.Sprintf("Device with ID %d not found.", req.DeviceID)).httpError())
	}
	devSite, edgeDev, ok, err := a.DB.HubObjectOf(r.Context(), store.KindDevice, req.DeviceID)
	if err != nil {
		return j, err
	}
	if !ok || devSite != site {
		return j, fieldRejection("device_id", "The device is not at the site of the command: a site's command runs on its own devices.").httpError()
	}
	action := "execute_show"
	if cmd.CommandType == store.CommandConfig {
		action = "execute_config"
	}
	scope, err := a.scope(r, store.TypeCommand, action)
	if err != nil {
		return j, err
	}
	if ok, err := a.DB.Exists(r.Context(), store.TypeCommand, cmd.ID, scope.Expr); err != nil || !scope.Granted || !ok {
		return j, errors.Join(err, web.Forbidden(fmt.Sprintf("You may not run %s commands on this device.", cmd.CommandType)))
	}
	if req.Variables == nil {
		req.Variables = map[string]json.RawMessage{}
	}
	vars, err := json.Marshal(req.Variables)
	if err != nil {
		return j, err
	}
	edgeCmdID, _ := strconv.ParseInt(edgeCmd, 10, 64)
	edgeDevID, _ := strconv.ParseInt(edgeDev, 10, 64)
	user := web.User(r.Context())
	return store.HubJob{Site: site, CommandID: cmd.ID, DeviceID: req.DeviceID, EdgeCommandID: edgeCmdID, EdgeDeviceID: edgeDevID,
		Variables: vars, Timeout: req.Timeout, UserID: user.ID, Username: user.Username, Notes: req.Notes}, nil
}

// mustScope is the expression of a scope, or one that holds for nothing when the
// scope is not granted (or not known).
func (a *API) mustScope(r *http.Request, objectType, action string) store.Expr {
	s, err := a.scope(r, objectType, action)
	if err != nil || !s.Granted {
		return store.False
	}
	return s.Expr
}

// hubAnswer is a site's answer to a job with the ids the hub knows: its command,
// device and log.
func hubAnswer(j store.HubJob) json.RawMessage {
	var body map[string]any
	if json.Unmarshal(j.Answer, &body) != nil {
		return j.Answer
	}
	for key, id := range map[string]int64{"command": j.CommandID, "device": j.DeviceID} {
		if ref, ok := body[key].(map[string]any); ok {
			ref["id"] = id
		}
	}
	out, err := json.Marshal(body)
	if err != nil {
		return j.Answer
	}
	return out
}

// writeRaw writes a JSON body as it is.
func writeRaw(w http.ResponseWriter, status int, body json.RawMessage) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// hubJobBody is a job as GET hub-jobs/{id}/ shows it: its state and, once done, the
// site's answer.
func (a *API) hubJobBody(r *http.Request, j store.HubJob) map[string]any {
	out := map[string]any{"id": j.ID, "url": web.URL(r, pathHubJobs+strconv.FormatInt(j.ID, 10)+"/"), "site": j.Site,
		"command": j.CommandID, "device": j.DeviceID, "state": j.State, "created": web.Stamp(j.Created), "expires": web.Stamp(j.Expires),
		"finished": web.Stamp(j.Finished), "status": nil, "result": nil}
	if j.State == "done" {
		out["status"], out["result"] = j.Status, hubAnswer(j)
	}
	return out
}

// hubJobDetail serves GET hub-jobs/{id}/: the job to its requester (or a superuser).
func (a *API) hubJobDetail(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	j, err := a.DB.HubJob(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return web.NotFound()
	}
	if err != nil {
		return err
	}
	if me := web.User(r.Context()); !me.IsSuperuser && me.ID != j.UserID {
		return web.NotFound()
	}
	web.Write(w, http.StatusOK, a.hubJobBody(r, j))
	return nil
}

// RunJob runs a hub's job as the API's execute would run it (hub.JobExecutor): every
// check in order, as the owner of the service credential set hub.credential_set names,
// with that set; the log says source hub. It returns the answer's status and body, and
// the log's id (0 when none was written).
func (a *API) RunJob(ctx context.Context, commandID, deviceID int64, variables json.RawMessage, timeout int, by, notes string) (int, json.RawMessage, int64) {
	status, body, logID := a.runJob(ctx, commandID, deviceID, variables, timeout, by, notes)
	raw, err := json.Marshal(body)
	if err != nil {
		raw, status = []byte(`{"detail":"The answer could not be written."}`), http.StatusInternalServerError
	}
	return status, raw, logID
}

func (a *API) runJob(ctx context.Context, commandID, deviceID int64, variables json.RawMessage, timeout int, by, notes string) (int, any, int64) {
	refuse := func(err error) (int, any, int64) {
		var rj *rejection
		if errors.As(err, &rj) {
			return rj.status, rj.body, 0
		}
		if e, ok := web.ClientError(err); ok {
			return e.Status, e.Body, 0
		}
		a.Logger.Error("hub job", "command_id", commandID, "device_id", deviceID, "err", err)
		return http.StatusInternalServerError, map[string]string{"detail": "The site failed to run the job: its log says why."}, 0
	}
	setID, why, err := a.hubSet(ctx)
	if err != nil {
		return refuse(err)
	}
	if why != "" {
		return http.StatusForbidden, map[string]string{"detail": why}, 0
	}
	set, err := a.DB.ServiceCredentialSet(ctx, setID, store.True)
	if err != nil {
		return refuse(err)
	}
	owner, err := a.DB.PrincipalByID(ctx, set.OwnerID)
	if err != nil {
		return http.StatusForbidden, map[string]string{"detail": "The owner of the site's hub credential set cannot run it."}, 0
	}
	r, err := a.asUser(ctx, owner)
	if err != nil {
		return refuse(err)
	}
	cmd, err := visible(a, r, commandResource, commandID, a.DB.LoadCommands)
	if err != nil {
		return refuse(err)
	}
	secret, err := a.serviceSecret(r, setID)
	if err != nil {
		return http.StatusForbidden, map[string]string{"detail": "The site's hub credential set: " + err.Error()}, 0
	}
	req := execRequest{DeviceID: deviceID, Timeout: max(min(timeout, maxTimeout), minTimeout), TimeoutSet: true,
		Notes: cutNotes(notes)}
	if len(variables) > 0 && string(variables) != "null" {
		if err := json.Unmarshal(variables, &req.Variables); err != nil {
			return refuse(fieldRejection("variables", "Must be an object of variable name to value."))
		}
	}
	p, slot, err := a.planDevice(r, cmd, req, secret, nil)
	if err != nil {
		return refuse(asHTTP(err))
	}
	p.source, p.client = "hub", "hub:"+by
	started := time.Now()
	runCtx, cancel := context.WithTimeout(a.execContext(), p.bound())
	defer cancel()
	res := a.Exec.Pool.Run(runCtx, a.job([]*prepared{p}))[0]
	o, err := a.finish(ctx, p, owner, started, res, slot)
	if err != nil {
		return refuse(err)
	}
	return http.StatusOK, a.executeBody(p, o), o.logID
}

// cutNotes keeps at most store.MaxNotes characters of a job's notes: a hub checks them
// against its own limit, which may be another version's.
func cutNotes(s string) string {
	if utf8.RuneCountInString(s) <= store.MaxNotes {
		return s
	}
	return string([]rune(s)[:store.MaxNotes])
}

// hubSet is the id of the service credential set hub.credential_set names, or why
// there is none (the detail of the job's answer).
func (a *API) hubSet(ctx context.Context) (int64, string, error) {
	if a.HubCredentialSet == "" {
		return 0, "This site runs no commands from its hub: its hub.credential_set is not set.", nil
	}
	sets, err := a.DB.ServiceCredentialSets(ctx, store.True)
	if err != nil {
		return 0, "", err
	}
	var found []int64
	for _, s := range sets {
		if s.Name == a.HubCredentialSet {
			found = append(found, s.ID)
		}
	}
	if len(found) != 1 {
		return 0, fmt.Sprintf("This site's hub.credential_set names %d service credential sets called %q: it must name one.",
			len(found), a.HubCredentialSet), nil
	}
	return found[0], "", nil
}
