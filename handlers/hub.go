package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"fieldkit/store"
	"fieldkit/web"
)

// The hub's routes (docs/HUB-PROTOCOL.md): its sites, and the push they send their
// records with. An edge's side is Render, which gives the pusher each record's body.

// HubServer takes the sites' pushes (hub.Ingest); nil: this FieldKit is no hub.
type HubServer interface {
	Push(w http.ResponseWriter, r *http.Request) error
	// Jobs answers a site's poll for the jobs queued for it.
	Jobs(w http.ResponseWriter, r *http.Request) error
}

// The hub's paths.
const (
	pathHubSites = "/api/plugins/toolkit/hub-sites/"
	pathHubPush  = "/api/hub/v1/push/"
	pathHubPoll  = "/api/hub/v1/jobs/"
)

// hubSiteResource is a hub's sites, with their state; a create shows the site's token.
var hubSiteResource = &Resource{Model: store.HubSites, Path: pathHubSites}

// hubRoutes routes the hub's side, when this FieldKit is one.
func (a *API) hubRoutes(rt *web.Router) {
	if a.Hub == nil {
		return
	}
	a.public(rt, http.MethodPost, pathHubPush, a.Hub.Push) // a site's token, checked by the hub
	a.public(rt, http.MethodGet, pathHubPoll, a.Hub.Jobs)
	rt.Handle(http.MethodGet, pathHubJobs+":id/", a.authed(a.hubJobDetail))
	sites := a.declared(hubSiteResource)
	sites.create = a.createHubSite
	sites.del, sites.bulkDel = nil, nil // a site is revoked, never deleted: its records stay
	sites.bulkPut, sites.bulkPatch = nil, nil
	a.crud(rt, hubSiteResource, sites)
	rt.Handle(http.MethodPost, pathHubSites+":id/revoke/", a.authed(a.hubSiteChange(func(ctx context.Context, id int64) (string, error) {
		return "", a.DB.RevokeHubSite(ctx, id)
	})))
	rt.Handle(http.MethodPost, pathHubSites+":id/token/", a.authed(a.hubSiteChange(a.DB.NewHubSiteToken)))
}

// createHubSite adds a site (and its dcim site) and answers it with its token, shown
// here only.
func (a *API) createHubSite(w http.ResponseWriter, r *http.Request) error {
	res := hubSiteResource
	scope, err := a.resScope(r, res, "add")
	if err != nil {
		return err
	}
	if !scope.Granted {
		return web.Forbidden("")
	}
	f, err := web.DecodeForm(r, "name", "description", "token")
	if err != nil {
		return err
	}
	name, _ := f.Str("name", true, 100)
	desc, _ := f.Str("description", false, 200)
	token, _ := f.Str("token", false, 47)
	if err := f.Err(); err != nil {
		return err
	}
	id, token, err := a.DB.CreateHubSite(r.Context(), name, desc, token, scope)
	if err != nil {
		return err
	}
	return a.writeHubSite(w, r, id, token, http.StatusCreated)
}

// writeHubSite answers a site, with its new token when there is one.
func (a *API) writeHubSite(w http.ResponseWriter, r *http.Request, id int64, token string, status int) error {
	rows, err := a.DB.Rows(r.Context(), store.HubSites, []int64{id})
	if err != nil || len(rows) == 0 {
		return errors.Join(err, fmt.Errorf("hub site %d vanished", id))
	}
	n := a.renderObject(r, hubSiteResource, store.HubSites, rows[0], full)
	if token != "" {
		n["token"] = token
	}
	if status == http.StatusCreated {
		w.Header().Set("Location", hubSiteResource.objURL(r, id))
	}
	web.Write(w, status, n)
	return nil
}

// hubSiteChange is the handler of a change of one site that needs change on it: revoke
// (its token fails at once; the site and its records stay) or a new token (for an edge
// installed anew: the token is bound to the database that pushes first), which the
// answer alone shows.
func (a *API) hubSiteChange(change func(ctx context.Context, id int64) (token string, err error)) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := web.PathID(r)
		if err != nil {
			return err
		}
		if _, err := changeable(a, r, hubSiteResource, id, "change", a.rows(hubSiteResource)); err != nil {
			return err
		}
		token, err := change(r.Context(), id)
		if err != nil {
			return err
		}
		return a.writeHubSite(w, r, id, token, http.StatusOK)
	}
}

// hubKinds are the resources whose objects an edge's records carry, by record kind.
var hubKinds = map[string]*Resource{
	store.KindLog: logResource, store.KindDevice: deviceResource, store.KindPlatform: platformResource,
	store.KindCommand: commandResource,
}

// Render renders objects of a record kind as this API shows them (the full form of a
// detail), for the hub pusher: each that exists, by id. URLs name the edge as
// "edge.invalid": the hub keeps its own.
func (a *API) Render(ctx context.Context, kind string, ids []int64) (map[int64]json.RawMessage, error) {
	res := hubKinds[kind]
	if res == nil {
		return nil, fmt.Errorf("handlers: render: unknown kind %q", kind)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://edge.invalid/", nil)
	if err != nil {
		return nil, err
	}
	rows, err := a.DB.Rows(ctx, res.Model, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]json.RawMessage, len(rows))
	for _, row := range rows {
		b, err := json.Marshal(a.renderObject(r, res, res.Model, row, full))
		if err != nil {
			return nil, fmt.Errorf("handlers: render %s %d: %w", kind, row.ID(), err)
		}
		out[row.ID()] = b
	}
	return out, nil
}
