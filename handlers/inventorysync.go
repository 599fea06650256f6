package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"fieldkit/netbox"
	"fieldkit/store"
	"fieldkit/web"
)

// pathInventorySync runs and reports the sync of the inventory from a central NetBox.
const pathInventorySync = "/api/plugins/toolkit/inventory-sync/"

// NetBoxSyncer syncs the inventory from a NetBox (package netbox).
type NetBoxSyncer interface {
	Sync(ctx context.Context, progress netbox.Progress) (*netbox.Report, error)
	Config() netbox.Config
	Status() netbox.Status
}

// syncTimeout bounds a sync asked for through the API.
const syncTimeout = 30 * time.Minute

// runInventorySync serves POST …/inventory-sync/: it runs a sync now and answers with
// what it did. The sync runs on a context of its own, so a client that goes away does
// not cut it short. Needs add and change on devices (or a superuser).
func (a *API) runInventorySync(w http.ResponseWriter, r *http.Request) error {
	if err := a.maySync(r); err != nil {
		return err
	}
	if a.NetBox == nil || !a.NetBox.Config().Configured() {
		return web.Detail(http.StatusBadRequest, netbox.ErrNotConfigured.Error()+".")
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), syncTimeout)
	defer cancel()
	user := web.User(r.Context()).Username
	a.Logger.Info("netbox sync requested", "username", user)
	rep, err := a.NetBox.Sync(ctx, nil)
	switch {
	case errors.Is(err, netbox.ErrRunning), errors.Is(err, store.ErrSyncBusy):
		return web.Detail(http.StatusConflict, "A NetBox sync is already running; its progress is at GET "+pathInventorySync+".")
	case errors.Is(err, netbox.ErrEmpty):
		a.Logger.Warn("netbox sync refused", "username", user, "err", err)
		return web.Detail(http.StatusConflict, err.Error()+".")
	case err != nil:
		a.Logger.Warn("netbox sync failed", "username", user, "err", err)
		return web.Detail(http.StatusBadGateway, err.Error())
	}
	web.Write(w, http.StatusOK, rep)
	return nil
}

// maySync allows a superuser, or a user who may add and change devices.
func (a *API) maySync(r *http.Request) error {
	for _, action := range []string{"add", "change"} {
		s, err := a.scope(r, store.TypeDevice, action)
		if err != nil {
			return err
		}
		if !s.Granted || s.Expr.SQL != store.True.SQL {
			return web.Forbidden("Syncing from NetBox needs the add and change permissions on every device.")
		}
	}
	return nil
}

// syncStatus serves GET …/inventory-sync/: whether a NetBox is set (its URL and
// filter; never the token), what a sync is doing now, and the last runs.
func (a *API) syncStatus(w http.ResponseWriter, r *http.Request) error {
	s, err := a.scope(r, store.TypeDevice, "view")
	if err != nil {
		return err
	}
	if !s.Granted {
		return web.Forbidden("")
	}
	out := map[string]any{"configured": false, "netbox_url": "", "filter": "", "running": false, "progress": "", "runs": []any{}}
	if a.NetBox != nil {
		cfg, st := a.NetBox.Config(), a.NetBox.Status()
		out["configured"], out["netbox_url"], out["filter"] = cfg.Configured(), cfg.URL, cfg.Filter
		out["running"], out["progress"] = st.Running, st.Last
		if st.Running {
			out["started"] = web.Stamp(st.Started)
		}
	}
	runs, err := a.DB.SyncRuns(r.Context(), 5)
	if err != nil {
		return err
	}
	list := make([]any, len(runs))
	for i, run := range runs {
		list[i] = map[string]any{"id": run.ID, "state": run.State, "phase": run.Phase, "pages": run.Pages,
			"started": web.Stamp(run.Started), "finished": web.Stamp(run.Finished), "error": run.Error, "summary": run.Summary}
	}
	out["runs"] = list
	web.Write(w, http.StatusOK, out)
	return nil
}
