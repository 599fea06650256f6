package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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
}

// bulkExecute serves POST commands/bulk-execute/: every element is checked like
// a single execution; the accepted ones run concurrently, those on the same device with
// the same credentials in order over one session; results come back in request order.
func (a *API) bulkExecute(w http.ResponseWriter, r *http.Request) error {
	f, err := web.DecodeForm(r, "executions")
	if err != nil {
		return err
	}
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
	for i, el := range elems {
		items[i] = a.planElement(r, i, el, pc)
	}
	a.runBulk(r, items)
	results := make([]any, len(items))
	ok2 := 0
	for i, it := range items {
		results[i] = it.result
		if it.result["success"] == true {
			ok2++
		}
	}
	web.Write(w, http.StatusOK, map[string]any{"results": results,
		"summary": map[string]int{"total": len(items), "successful": ok2, "failed": len(items) - ok2}})
	return nil
}

func (a *API) bulkMax() int {
	if a.Exec.BulkMax > 0 {
		return a.Exec.BulkMax
	}
	return 100
}

// planElement checks one element; a rejected element gets its result at once.
func (a *API) planElement(r *http.Request, i int, raw json.RawMessage, pc *planCache) *bulkItem {
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
	f := web.NewForm(fields, "command_id", "device_id", "credential_token", "variables", "timeout")
	cmdID, _ := f.Integer("command_id", true, 1, 1<<53)
	req := readExecRequest(f, true)
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
		it.slot, err = a.acquire(r, p.target.ID)
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
		if err != nil {
			a.Logger.Error("bulk execution not logged", "err", err)
			it.result["command_log_id"] = nil
		}
		start = time.Now()
	}
	a.Exec.Pool.Run(a.execContext(), j)
}
