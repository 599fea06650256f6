package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"fieldkit/exec"
	"fieldkit/exec/ratelimit"
	"fieldkit/store"
	"fieldkit/web"
)

// bulkItem is one element of a bulk request on its way through.
type bulkItem struct {
	index  int
	p      *prepared
	slot   ratelimit.Slot
	result map[string]any
	// deviceID is the element's device_id as given (0: none readable), and deviceName
	// its name once the checks found it visible, for a rejected element's device; ran
	// holds what execute answers, for the fields on request.
	deviceID   int64
	deviceName string
	ran        map[string]any
}

// bulkIncludable are the fields an element carries on request ("include"), beside
// the seed's: what a script would otherwise fetch with one more call per device.
var bulkIncludable = []string{"device", "output", "parsed_output", "error"}

// bulkIncludes reads "include": a list of bulkIncludable names.
func bulkIncludes(f *web.Form) map[string]bool {
	raw, ok := f.Raw["include"]
	if !ok {
		return nil
	}
	var names []string
	if json.Unmarshal(raw, &names) != nil {
		f.Errs.Add("include", fmt.Sprintf("Expected a list of field names: any of %s.", strings.Join(bulkIncludable, ", ")))
		return nil
	}
	out := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(bulkIncludable, n) {
			f.Errs.Add("include", fmt.Sprintf("%q is not a field an element can include: any of %s.", n, strings.Join(bulkIncludable, ", ")))
			continue
		}
		out[n] = true
	}
	return out
}

// add puts the included fields on the element's result. An element rejected before it
// ran has null output and parsed output, its device as far as it is known, and an
// error_message saying why.
func (it *bulkItem) add(include map[string]bool) {
	res := it.result
	ran := it.ran
	if include["device"] {
		switch {
		case ran != nil:
			res["device"] = ran["device"]
		case it.deviceName != "":
			res["device"] = map[string]any{"id": it.deviceID, "name": it.deviceName}
		case it.deviceID > 0:
			res["device"] = map[string]any{"id": it.deviceID, "name": nil}
		default:
			res["device"] = nil
		}
	}
	for _, k := range []string{"output", "parsed_output"} {
		if include[k] {
			res[k] = nil
			if ran != nil {
				res[k] = ran[k]
			}
		}
	}
	if include["error"] {
		res["syntax_error"], res["failure"] = nil, nil
		_, waits := res["state"] // a hub's job not answered yet: no error so far
		switch {
		case ran != nil:
			res["syntax_error"], res["failure"] = ran["syntax_error"], ran["failure"]
		case waits:
			res["error_message"] = nil
		default:
			res["error_message"] = rejectionMessage(res["error"], res["details"])
		}
	}
}

// rejectionMessage is a rejected element's reason as one sentence: its short reason
// and what its details say ("Rate limit exceeded: Device rate limit exceeded: …").
func rejectionMessage(reason, details any) string {
	msg := fmt.Sprint(reason)
	d, _ := details.(map[string]any)
	if why, ok := d["reason"].(string); ok {
		return strings.TrimSuffix(msg, ".") + ": " + why
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(d)) {
		parts = append(parts, k+": "+flatMessages(d[k]))
	}
	if len(parts) == 0 {
		return msg
	}
	return strings.TrimSuffix(msg, ".") + ": " + strings.Join(parts, "; ")
}

// flatMessages is a field's error messages as one string.
func flatMessages(v any) string {
	switch x := v.(type) {
	case []string:
		return strings.Join(x, " ")
	case []any:
		var out []string
		for _, m := range x {
			out = append(out, flatMessages(m))
		}
		return strings.Join(out, " ")
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, k+": "+flatMessages(x[k]))
		}
		return strings.Join(out, "; ")
	}
	return fmt.Sprint(v)
}

// bulkExecute serves POST commands/bulk-execute/: every element is checked like
// a single execution; the accepted ones run concurrently, those on the same device with
// the same credentials in order over one session; results come back in request order.
func (a *API) bulkExecute(w http.ResponseWriter, r *http.Request) error {
	keys := []string{"executions", "include", "notes"}
	if a.Hub != nil {
		keys = append(keys, "expires_in") // the expiry of the sites' jobs (hubbulk.go)
	}
	f, err := web.DecodeForm(r, keys...)
	if err != nil {
		return err
	}
	include := bulkIncludes(f)
	expiry := jobExpiry(f)
	// notes beside the executions are every execution's that gives none of its own.
	notes, _ := f.Str("notes", false, store.MaxNotes)
	var elems []json.RawMessage
	raw, ok := f.Raw["executions"]
	switch {
	case !ok:
		f.Errs.Add("executions", "This field is required.")
	case json.Unmarshal(raw, &elems) != nil:
		f.Errs.Add("executions", "Expected a list of execution objects.")
	case len(elems) == 0:
		f.Errs.Add("executions", "Give at least one execution.")
	case len(elems) > a.bulkMax():
		f.Errs.Add("executions", fmt.Sprintf("Ensure this field has no more than %d elements.", a.bulkMax()))
	}
	if err := f.Err(); err != nil {
		return err
	}
	items := make([]*bulkItem, len(elems))
	pc := newPlanCache()
	start := time.Now()
	var jobs []*hubBulkJob // on a hub, the elements of a site's command, queued at their sites
	for i, el := range elems {
		if a.Hub != nil {
			var j *hubBulkJob
			if items[i], j = a.planHubElement(r, i, el, notes, expiry); j != nil {
				jobs = append(jobs, j)
			}
		}
		if items[i] == nil {
			items[i] = a.planElement(r, i, el, pc, notes)
		}
	}
	a.runBulk(r, items)
	pending, err := a.awaitJobs(r, jobs, start)
	if err != nil {
		return err
	}
	results := make([]any, len(items))
	ok2 := 0
	for i, it := range items {
		it.add(include)
		results[i] = it.result
		if it.result["success"] == true {
			ok2++
		}
	}
	summary := map[string]int{"total": len(items), "successful": ok2, "failed": len(items) - ok2 - pending}
	status := http.StatusOK
	if pending > 0 {
		summary["pending"], status = pending, http.StatusAccepted
	}
	web.Write(w, status, map[string]any{"results": results, "summary": summary})
	return nil
}

func (a *API) bulkMax() int {
	if a.Exec.BulkMax > 0 {
		return a.Exec.BulkMax
	}
	return 100
}

// planElement checks one element; a rejected element gets its result at once. notes
// are the request's, for an element without its own.
func (a *API) planElement(r *http.Request, i int, raw json.RawMessage, pc *planCache, notes string) *bulkItem {
	it := &bulkItem{index: i}
	reject := func(reason string, details any) *bulkItem {
		it.result = map[string]any{"execution_id": i + 1, "success": false, "command_log_id": nil,
			"execution_time": nil, "error": reason, "details": details}
		return it
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return reject("Invalid execution.", map[string]any{"non_field_errors": []string{"Expected an object."}})
	}
	f := web.NewForm(fields, "command_id", "device_id", "credential_token", "variables", "timeout", "notes")
	cmdID, _ := f.Integer("command_id", true, 1, 1<<53)
	req := readExecRequest(f, true)
	if !f.Has("notes") {
		req.Notes = notes
	}
	it.deviceID = req.DeviceID
	if len(f.Errs) > 0 {
		return reject("Invalid execution.", map[string]any(f.Errs))
	}
	cmd, err := pc.command(a, r, cmdID)
	if err != nil {
		if e, ok := err.(*web.Error); ok && e.Status == http.StatusNotFound {
			return reject("Command not found.", map[string]any{"command_id": []string{"Command not found."}})
		}
		return reject("Internal error.", map[string]any{"detail": web.Answer(r, a.Logger, err).Body})
	}
	p, err := a.prepare(r, cmd, req, true, pc)
	if err == nil {
		p.source = "bulk"
		it.slot, err = a.acquire(r, p.target.ID)
	}
	// The device's name, once the checks found it visible (the plan cache holds it).
	if t, terr := pc.target(a, r, req.DeviceID); terr == nil {
		it.deviceName = t.Name
	}
	if err != nil {
		if rj, ok := err.(*rejection); ok {
			return reject(rj.reason, rj.details)
		}
		return reject("Internal error.", map[string]any{"detail": web.Answer(r, a.Logger, err).Body})
	}
	it.p = p
	return it
}

// runBulk runs the accepted items, grouped per device and credential set.
func (a *API) runBulk(r *http.Request, items []*bulkItem) {
	type key struct{ device, set int64 }
	groups := map[key][]*bulkItem{}
	var order []key
	for _, it := range items {
		if it.p == nil {
			continue
		}
		k := key{it.p.target.ID, it.p.secret.SetID}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], it)
	}
	conc := a.Exec.BulkConcurrency
	if conc < 1 {
		conc = 16
	}
	pending := 0
	for _, g := range groups {
		pending += len(g)
	}
	a.observer().BulkPending(pending)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	user := web.User(r.Context())
	for _, k := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func(g []*bulkItem) {
			defer wg.Done()
			defer func() { <-sem }()
			a.runGroup(r.Context(), user, g)
		}(groups[k])
	}
	wg.Wait()
}

// runGroup runs one device's items in order over one session, logging each as it ends.
func (a *API) runGroup(ctx context.Context, user store.Principal, g []*bulkItem) {
	ps := make([]*prepared, len(g))
	for i, it := range g {
		ps[i] = it.p
	}
	start := time.Now()
	left := len(g)
	defer func() { a.observer().BulkPending(-left) }()
	j := a.job(ps)
	j.Done = func(i int, res exec.Result) {
		left--
		a.observer().BulkPending(-1)
		it := g[i]
		o, err := a.finish(ctx, it.p, user, start, res, it.slot)
		it.result = map[string]any{"execution_id": it.index + 1, "success": res.Success, "command_log_id": o.logID,
			"execution_time": round3(res.Duration.Seconds()), "error_message": o.message}
		it.ran = a.executeBody(it.p, o)
		if err != nil {
			a.Logger.Error("bulk execution not logged", "err", err)
			it.result["command_log_id"] = nil
		}
		start = time.Now()
	}
	a.Exec.Pool.Run(a.execContext(), j)
}
