package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"fieldkit/diff"
	"fieldkit/store"
	"fieldkit/web"
)

// logDiff serves GET command-logs/{id}/diff/?against=<id>|previous: the unified diff
// of the two outputs, from the one against names to this one, and, when both were
// parsed, their records compared by the template's Key values. Both logs must be
// visible to the user: either one out of sight is a 404, as for any log.
func (a *API) logDiff(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	where, err := a.logScope(r)
	if err != nil {
		return err
	}
	against, err := onlyParam(r, "against")
	if err != nil {
		return err
	}
	to, err := a.DB.LogForDiff(r.Context(), id, where)
	if err != nil {
		return err
	}
	var fromID int64
	switch {
	case against == "previous":
		if fromID, err = a.DB.PreviousRun(r.Context(), to, where); errors.Is(err, store.ErrNotFound) {
			return web.Detail(http.StatusNotFound, "No earlier successful run of this command on this device.")
		}
		if err != nil {
			return err
		}
	default:
		n, ok := web.ParseID(against)
		if !ok {
			return web.BadRequest("against", `A log id or "previous" is required.`)
		}
		fromID = n
	}
	from, err := a.DB.LogForDiff(r.Context(), fromID, where)
	if err != nil {
		return err
	}
	web.Write(w, http.StatusOK, a.diffBody(r, from, to))
	return nil
}

// onlyParam reads the one required query parameter name; any other is a 400.
func onlyParam(r *http.Request, name string) (string, error) {
	q := r.URL.Query()
	for k := range q {
		if k != name && k != "format" {
			return "", web.BadRequest(k, "Unknown parameter.")
		}
	}
	v := q.Get(name)
	if v == "" {
		return "", web.BadRequest(name, "This parameter is required.")
	}
	return v, nil
}

func (a *API) diffBody(r *http.Request, from, to store.LogText) map[string]any {
	body := map[string]any{
		"from": a.logRef(r, from), "to": a.logRef(r, to),
		"unified": diff.Unified(diffLabel(from), diffLabel(to), from.Output, to.Output),
	}
	if rd, ok := a.recordDiff(from, to); ok {
		body["records"] = rd
	}
	return body
}

// logRef is a log as a diff names it.
func (a *API) logRef(r *http.Request, l store.LogText) map[string]any {
	return map[string]any{
		"id": l.ID, "url": a.urlOf(r, store.TypeCommandLog, l.ID), "created": web.Stamp(l.Created),
		"device":  map[string]any{"id": l.DeviceID, "name": l.DeviceName},
		"command": map[string]any{"id": l.CommandID, "name": l.CommandName},
	}
}

func diffLabel(l store.LogText) string {
	return fmt.Sprintf("%s %s (log %d)", l.DeviceName, l.Created.UTC().Format("2006-01-02T15:04:05Z"), l.ID)
}

// parsedRecords reads a stored parsed_output: its records and template when it parsed.
func parsedRecords(raw json.RawMessage) ([]diff.Record, string, bool) {
	var p struct {
		Success  bool          `json:"success"`
		Template *string       `json:"template"`
		Data     []diff.Record `json:"data"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil || !p.Success {
		return nil, "", false
	}
	name := ""
	if p.Template != nil {
		name = *p.Template
	}
	return p.Data, name, true
}

// recordDiff compares two parsed outputs by the Key values of the newer one's
// template (every column when it has none, or when the template is gone); false
// when either side was not parsed.
func (a *API) recordDiff(from, to store.LogText) (diff.RecordDiff, bool) {
	a1, _, ok1 := parsedRecords(from.Parsed)
	b1, tmpl, ok2 := parsedRecords(to.Parsed)
	if !ok1 || !ok2 {
		return diff.RecordDiff{}, false
	}
	var keys []string
	if a.Exec.TextFSM != nil {
		keys, _ = a.Exec.TextFSM.Keys(tmpl)
	}
	return diff.Records(a1, b1, keys), true
}

// historyMax bounds a page of a command's history.
const historyMax = 200

// logHistory serves GET command-logs/history/?device_id=&command_id=[&limit=]: the
// newest runs of a command on a device that the user may view, each successful one
// marked `changed` when its output differs from the successful run before it.
func (a *API) logHistory(w http.ResponseWriter, r *http.Request) error {
	where, err := a.logScope(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	fe := web.FieldErrors{}
	for k := range q {
		if k != "device_id" && k != "command_id" && k != "limit" && k != "format" {
			fe.Add(k, "Unknown parameter.")
		}
	}
	id := func(name string) int64 {
		raw := q.Get(name)
		n, ok := web.ParseID(raw)
		switch {
		case raw == "":
			fe.Add(name, "This parameter is required.")
		case !ok:
			fe.Add(name, "A valid integer is required.")
		}
		return n
	}
	device, command, limit := id("device_id"), id("command_id"), 50
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > historyMax {
			fe.Add("limit", fmt.Sprintf("A whole number from 1 to %d is required.", historyMax))
		}
		limit = n
	}
	if err := fe.Err(); err != nil {
		return err
	}
	runs, err := a.DB.CommandHistory(r.Context(), device, command, where, limit)
	if err != nil {
		return err
	}
	results := make([]any, len(runs))
	for i, run := range runs {
		var changed any
		if run.Changed != nil {
			changed = *run.Changed
		}
		results[i] = map[string]any{"id": run.ID, "url": a.urlOf(r, store.TypeCommandLog, run.ID), "created": web.Stamp(run.Created),
			"success": run.Success, "cancelled": run.Cancelled, "username": run.Username, "notes": run.Notes, "changed": changed}
	}
	web.Write(w, http.StatusOK, map[string]any{"device_id": device, "command_id": command, "results": results})
	return nil
}
