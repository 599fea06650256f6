package handlers

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"fieldkit/store"
	"fieldkit/web"
)

// A bulk execute at a hub (docs/HUB-PROTOCOL.md, "Jobs"): each element of a site's
// command becomes a job at its site, checked as an execute at the hub is (hubJob); the
// hub's own commands run here as in any bulk execute. The answer is a bulk execute's
// when every site answers within the longest of the elements' timeouts; else 202, the
// same results with the elements still waiting carrying success null, their state and
// their job's URL to read later.

// hubBulkJob is a bulk element queued as a job at its site.
type hubBulkJob struct {
	it      *bulkItem
	id      int64
	timeout time.Duration
}

// planHubElement queues one element as a job when its command is a site's; nil when
// the element is not (the hub's own command, or one that does not read: the local
// checks answer it).
func (a *API) planHubElement(r *http.Request, i int, raw json.RawMessage, notes string, expiry time.Duration) (*bulkItem, *hubBulkJob) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, nil
	}
	var cmdID int64
	if json.Unmarshal(fields["command_id"], &cmdID) != nil || cmdID <= 0 {
		return nil, nil
	}
	site, edgeCmd, ok, err := a.DB.HubObjectOf(r.Context(), store.KindCommand, cmdID)
	if err != nil || !ok {
		return nil, nil
	}
	it := &bulkItem{index: i}
	reject := func(err error) (*bulkItem, *hubBulkJob) {
		reason, details := bulkRejection(r, a, err)
		it.result = map[string]any{"execution_id": i + 1, "success": false, "command_log_id": nil,
			"execution_time": nil, "error": reason, "details": details}
		return it, nil
	}
	f := web.NewForm(fields, "command_id", "device_id", "credential_token", "variables", "timeout", "notes")
	req := readExecRequest(f, false) // the site runs it with its own hub credential set
	if !f.Has("notes") {
		req.Notes = notes
	}
	it.deviceID = req.DeviceID
	if len(f.Errs) > 0 {
		it.result = map[string]any{"execution_id": i + 1, "success": false, "command_log_id": nil,
			"execution_time": nil, "error": "Invalid execution.", "details": map[string]any(f.Errs)}
		return it, nil
	}
	cmd, err := visible(a, r, commandResource, cmdID, a.DB.LoadCommands)
	if err != nil {
		if e, ok := err.(*web.Error); ok && e.Status == http.StatusNotFound {
			return reject(fieldRejection("command_id", "Command not found."))
		}
		return reject(err)
	}
	job, err := a.hubJob(r, cmd, site, edgeCmd, req)
	if err != nil {
		return reject(err)
	}
	job.Expires = a.DB.Now().Add(expiry)
	if job.ID, err = a.DB.QueueHubJob(r.Context(), job); err != nil {
		return reject(err)
	}
	return it, &hubBulkJob{it: it, id: job.ID, timeout: time.Duration(req.Timeout) * time.Second}
}

// bulkRejection is an error as a rejected element's reason and details: a rejection's
// own, a client error's body (its detail, or its first field's message, for the
// reason), or an internal error's safe answer.
func bulkRejection(r *http.Request, a *API, err error) (string, any) {
	var rj *rejection
	if errors.As(err, &rj) {
		return rj.reason, rj.details
	}
	e, ok := web.ClientError(err)
	if !ok {
		return "Internal error.", map[string]any{"detail": web.Answer(r, a.Logger, err).Body}
	}
	return answerReason(e.Body), e.Body
}

// answerReason is an error answer's short reason: its detail, or its first field's
// first message.
func answerReason(body any) string {
	var m map[string]any
	if raw, err := json.Marshal(body); err != nil || json.Unmarshal(raw, &m) != nil {
		return "Refused."
	}
	if d, ok := m["detail"].(string); ok {
		return d
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if msg := flatMessages(m[k]); msg != "" {
			return msg
		}
	}
	return "Refused."
}

// awaitJobs waits for the sites' answers to the jobs, up to the longest of their
// timeouts from start, and puts each on its element; it returns how many still wait.
func (a *API) awaitJobs(r *http.Request, jobs []*hubBulkJob, start time.Time) (int, error) {
	var longest time.Duration
	for _, j := range jobs {
		longest = max(longest, j.timeout)
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.id
	}
	js, err := a.awaitHubJobs(r.Context(), ids, start.Add(longest))
	if err != nil {
		return 0, err
	}
	for i, bj := range jobs {
		a.jobResult(r, bj.it, js[i])
	}
	pending := 0
	for _, bj := range jobs {
		if _, waits := bj.it.result["state"]; waits {
			pending++
		}
	}
	return pending, nil
}

// jobResult is a job's element of the bulk answer: the site's answer as a local
// element's (ran for the included fields), a refusal, an expiry, or, while it waits,
// success null with its state. Each carries its job's URL.
func (a *API) jobResult(r *http.Request, it *bulkItem, j store.HubJob) {
	url := web.URL(r, pathHubJobs+strconv.FormatInt(j.ID, 10)+"/")
	res := map[string]any{"execution_id": it.index + 1, "success": nil, "command_log_id": nil, "execution_time": nil, "job": url}
	var answer map[string]any
	_ = json.Unmarshal(hubAnswer(j), &answer)
	switch {
	case j.State == "done" && j.Status == http.StatusOK && answer != nil:
		res["success"], res["execution_time"], res["error_message"] = answer["success"], answer["execution_time"], answer["error_message"]
		if j.LogID != 0 {
			res["command_log_id"] = j.LogID
		}
		it.ran = answer
	case j.State == "done":
		res["success"], res["error"], res["details"] = false, answerReason(answer), answer
	case j.State == "expired":
		msg := "The site did not take the job before its expiry."
		res["success"], res["error"], res["details"] = false, msg, map[string]any{"detail": msg}
	default:
		res["state"] = j.State
	}
	it.result = res
}

// jobExpiry reads a bulk execute's expires_in at a hub.
func jobExpiry(f *web.Form) time.Duration {
	expiry := int64(defaultJobExpiry)
	if n, ok := f.Integer("expires_in", false, 60, maxJobExpiry); ok {
		expiry = n
	}
	return time.Duration(expiry) * time.Second
}
