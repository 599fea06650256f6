package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"fieldkit/diff"
	"fieldkit/store"
	"fieldkit/web"
)

// collectMax bounds the devices of one collect request.
const collectMax = 1000

// configRef is a config version as a diff names it.
func (a *API) configRef(r *http.Request, v store.Row) map[string]any {
	var device any
	if d, ok := v["device"].(store.Row); ok {
		device = d["id"]
	}
	created, _ := v["created"].(time.Time)
	return map[string]any{"id": v.ID(), "url": a.urlOf(r, store.TypeConfigVersion, v.ID()), "created": web.Stamp(created),
		"device": map[string]any{"id": device, "name": v["device_name"]}}
}

// configDiff serves GET config-versions/{id}/diff/?against=<id>|previous: the unified
// diff of the two configurations as shown (secrets masked), from against's to this
// one's. Both versions must be visible.
func (a *API) configDiff(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	against, err := onlyParam(r, "against")
	if err != nil {
		return err
	}
	load := a.rows(configVersionResource)
	to, err := visible(a, r, configVersionResource, id, load)
	if err != nil {
		return err
	}
	var fromID int64
	if against == "previous" {
		prev, _ := to["previous_id"].(int64)
		if prev == 0 {
			return web.Detail(http.StatusNotFound, "This is the device's first version: there is no previous one.")
		}
		fromID = prev
	} else if n, ok := web.ParseID(against); ok {
		fromID = n
	} else {
		return web.BadRequest("against", `A config version id or "previous" is required.`)
	}
	from, err := visible(a, r, configVersionResource, fromID, load)
	if err != nil {
		return err
	}
	label := func(v store.Row) string { return fmt.Sprintf("%s version %d", v["device_name"], v.ID()) }
	fromText, toText := fmt.Sprint(from["text"]), fmt.Sprint(to["text"])
	web.Write(w, http.StatusOK, map[string]any{
		"from": a.configRef(r, from), "to": a.configRef(r, to),
		"unified": diff.Unified(label(from), label(to), fromText, toText),
		// Configurations whose hashes differ but whose texts as shown are the same
		// differ in their masked secrets only.
		"secrets_changed": from["hash"] != to["hash"] && fromText == toText,
	})
	return nil
}

// configRaw serves GET config-versions/{id}/raw/: the configuration as read, secrets
// and all, to a user holding view_raw_config on the version (a superuser too).
func (a *API) configRaw(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	if _, err := changeable(a, r, configVersionResource, id, "view_raw_config", a.rows(configVersionResource)); err != nil {
		return err
	}
	if a.Exec.Keyring == nil {
		return errors.New("config versions: no master key")
	}
	text, err := a.DB.RawConfig(r.Context(), a.Exec.Keyring, id)
	if errors.Is(err, store.ErrNotFound) {
		return web.Detail(http.StatusNotFound, "A quarantined read keeps no configuration: its transcript is its command log.")
	}
	if err != nil {
		return err
	}
	a.Logger.Info("raw configuration shown", "version_id", id, "username", web.User(r.Context()).Username)
	web.Write(w, http.StatusOK, map[string]any{"id": id, "raw": text})
	return nil
}

// configCollect serves POST config-versions/collect/ {"device_ids": [...],
// "credential_token": "..."}: a config backup of each device now (CollectConfigs). It
// needs execute_show (a backup runs a show command) and view on each device; a device
// out of sight is rejected in its result, as a bulk element is.
func (a *API) configCollect(w http.ResponseWriter, r *http.Request) error {
	fields := []string{"device_ids", "credential_token"}
	if viaSession(r) {
		fields = append(fields, "credential_set_id")
	}
	f, err := web.DecodeForm(r, fields...)
	if err != nil {
		return err
	}
	var ids []int64
	if raw, ok := f.Raw["device_ids"]; !ok {
		f.Errs.Add("device_ids", "This field is required.")
	} else if json.Unmarshal(raw, &ids) != nil || len(ids) == 0 || len(ids) > collectMax {
		f.Errs.Add("device_ids", fmt.Sprintf("A list of 1 to %d device ids is required.", collectMax))
	}
	var req execRequest
	if f.Has("credential_set_id") {
		req.SetID, _ = f.Integer("credential_set_id", true, 1, 1<<53)
	} else {
		req.Token, _ = f.Str("credential_token", true, 0)
	}
	if err := f.Err(); err != nil {
		return err
	}
	scope, err := a.scope(r, store.TypeCommand, "execute_show")
	if err != nil {
		return err
	}
	if !scope.Granted {
		return web.Forbidden("You do not have permission to execute show commands.")
	}
	job, err := a.collectJob(r, req)
	if err != nil {
		return asHTTP(err)
	}
	visibleIDs, rejected, err := a.visibleDevices(r, ids)
	if err != nil {
		return err
	}
	job.Devices = visibleIDs
	results := a.CollectConfigs(r.Context(), job)
	byID := map[int64]CollectResult{}
	for _, res := range results {
		byID[res.DeviceID] = res
	}
	out := make([]CollectResult, len(ids))
	summary := map[string]int{"total": len(ids), store.ConfigStored: 0, store.ConfigUnchanged: 0, store.ConfigQuarantined: 0, statusRejected: 0}
	for i, id := range ids {
		if rejected[id] {
			out[i] = CollectResult{DeviceID: id, Status: statusRejected, Reason: "Device not found."}
		} else {
			out[i] = byID[id]
		}
		summary[out[i].Status]++
	}
	web.Write(w, http.StatusOK, map[string]any{"results": out, "summary": summary})
	return nil
}

// collectJob is the collection a request asks for: its user, credential set (by token,
// or by id from the web UI), source and address.
func (a *API) collectJob(r *http.Request, req execRequest) (CollectJob, error) {
	job := CollectJob{User: web.User(r.Context()), Source: "backup", Client: web.ClientAddr(r)}
	var err error
	if req.SetID != 0 {
		if a.Exec.Keyring == nil {
			return job, errors.New("execution is not configured: no master key")
		}
		job.Secret, err = a.DB.CredentialByID(r.Context(), a.Exec.Keyring, job.User.ID, req.SetID)
		if errors.Is(err, store.ErrNotFound) {
			return job, fieldRejection("credential_set_id", "Credential set not found.")
		}
		if err == nil && !job.Secret.IsActive {
			return job, fieldRejection("credential_set_id", "This credential set is inactive; activate it first.")
		}
		return job, err
	}
	job.Secret, err = a.lookupCredential(r, req.Token)
	return job, err
}

// visibleDevices splits ids into those the user may view (deduplicated, in order) and
// the others.
func (a *API) visibleDevices(r *http.Request, ids []int64) ([]int64, map[int64]bool, error) {
	scope, err := a.scope(r, store.TypeDevice, "view")
	if err != nil {
		return nil, nil, err
	}
	seen, rejected := map[int64]bool{}, map[int64]bool{}
	var out []int64
	for _, id := range ids {
		if seen[id] || rejected[id] {
			continue
		}
		ok := scope.Granted
		if ok {
			if ok, err = a.DB.Exists(r.Context(), store.TypeDevice, id, scope.Expr); err != nil {
				return nil, nil, err
			}
		}
		if ok {
			seen[id], out = true, append(out, id)
		} else {
			rejected[id] = true
		}
	}
	return out, rejected, nil
}

// configLastGood serves GET config-versions/last-good/[?site_id=N]: every device the
// user may view (of the site), with its last good backup (the last read that kept or
// confirmed a configuration), its latest version and its last quarantined read; those
// never backed up first, then the oldest backups.
func (a *API) configLastGood(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var site int64
	for k := range q {
		if k != "site_id" && k != "format" {
			return web.BadRequest(k, "Unknown parameter.")
		}
	}
	if raw := q.Get("site_id"); raw != "" {
		n, ok := web.ParseID(raw)
		if !ok {
			return web.BadRequest("site_id", "A valid integer is required.")
		}
		site = n
	}
	devs, err := a.scope(r, store.TypeDevice, "view")
	if err != nil {
		return err
	}
	vers, err := a.scope(r, store.TypeConfigVersion, "view")
	if err != nil {
		return err
	}
	if !devs.Granted {
		return web.Forbidden("")
	}
	if !vers.Granted {
		vers.Expr = store.False
	}
	rows, err := a.DB.BackupStatus(r.Context(), site, devs.Expr, vers.Expr)
	if err != nil {
		return err
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].LastGood.Before(rows[j].LastGood) })
	results := make([]any, len(rows))
	for i, s := range rows {
		results[i] = map[string]any{
			"device":    map[string]any{"id": s.DeviceID, "url": a.urlOf(r, store.TypeDevice, s.DeviceID), "name": s.DeviceName},
			"site":      map[string]any{"id": s.SiteID, "name": s.SiteName},
			"last_good": web.Stamp(s.LastGood), "version_id": nullID(s.VersionID), "version_created": web.Stamp(s.VersionCreated),
			"last_quarantined": web.Stamp(s.LastQuarantined), "last_quarantine_reason": s.QuarantineReason,
		}
	}
	web.Write(w, http.StatusOK, map[string]any{"count": len(results), "results": results})
	return nil
}

// searchMax bounds the devices a config search answers.
const searchMax = 1000

// configSearch serves GET config-versions/search/?q=: the devices whose latest
// configuration holds q, with the lines that do; a user holding view_raw_config on a
// version searches (and sees) its text as read, secrets included, others the text as
// shown.
func (a *API) configSearch(w http.ResponseWriter, r *http.Request) error {
	q, err := onlyParam(r, "q")
	if err != nil {
		return err
	}
	view, err := a.scope(r, store.TypeConfigVersion, "view")
	if err != nil {
		return err
	}
	if !view.Granted {
		return web.Forbidden("")
	}
	raw, err := a.scope(r, store.TypeConfigVersion, "view_raw_config")
	if err != nil {
		return err
	}
	if !raw.Granted || a.Exec.Keyring == nil {
		raw.Expr = store.False
	}
	found, err := a.DB.SearchConfigs(r.Context(), a.Exec.Keyring, q, view.Expr, raw.Expr, searchMax)
	if err != nil {
		return err
	}
	results := make([]any, len(found))
	for i, m := range found {
		results[i] = map[string]any{"version_id": m.VersionID, "url": a.urlOf(r, store.TypeConfigVersion, m.VersionID),
			"device": map[string]any{"id": m.DeviceID, "name": m.DeviceName}, "raw": m.Raw, "lines": m.Lines}
	}
	web.Write(w, http.StatusOK, map[string]any{"count": len(results), "results": results})
	return nil
}
