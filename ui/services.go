package ui

import (
	"errors"
	"net/http"
	"strings"

	"fieldkit/store"
	"fieldkit/web"
)

// Service credential sets are made for unattended use: the schedules that name them
// run with them, nobody else (they have no token to show). They are managed here by
// whoever holds the service action on netbox_toolkit_plugin.devicecredentialset, within
// its constraints, whoever made them; the form is a personal set's, the secrets as
// write-only.

const pathServiceSets = "/ui/api/service-credential-sets/"

// serviceScope is the sets the session's user may manage, or a 403.
func (u *UI) serviceScope(r *http.Request) (store.Scope, error) {
	s, err := u.db.Scope(r.Context(), sessionOf(r).Principal, store.TypeCredentialSet, store.ActionService)
	if err != nil {
		return s, err
	}
	if !s.Granted {
		return s, web.Forbidden("Service credential sets are managed by users holding the service action on " +
			"netbox_toolkit_plugin.devicecredentialset.")
	}
	return s, nil
}

// listServiceSets answers GET /ui/api/service-credential-sets/ (?q= narrows by name,
// for the schedule form's chooser).
func (u *UI) listServiceSets(w http.ResponseWriter, r *http.Request) error {
	scope, err := u.serviceScope(r)
	if err != nil {
		return err
	}
	sets, err := u.db.ServiceCredentialSets(r.Context(), scope.Expr)
	if err != nil {
		return err
	}
	if q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q"))); q != "" {
		kept := sets[:0]
		for _, s := range sets {
			if strings.Contains(strings.ToLower(s.Name), q) {
				kept = append(kept, s)
			}
		}
		sets = kept
	}
	out, err := u.renderServiceSets(r, sets)
	if err != nil {
		return err
	}
	web.Write(w, http.StatusOK, map[string]any{"count": len(out), "next": nil, "previous": nil, "results": out})
	return nil
}

// getServiceSet answers GET /ui/api/service-credential-sets/{id}/.
func (u *UI) getServiceSet(w http.ResponseWriter, r *http.Request) error {
	set, _, err := u.serviceSet(r)
	if err != nil {
		return err
	}
	return u.writeServiceSet(w, r, http.StatusOK, set)
}

// createServiceSet answers POST /ui/api/service-credential-sets/.
func (u *UI) createServiceSet(w http.ResponseWriter, r *http.Request) error {
	scope, err := u.serviceScope(r)
	if err != nil {
		return err
	}
	in, err := u.readSet(r, nil)
	if err != nil {
		return err
	}
	who := sessionOf(r).Principal
	id, err := u.db.CreateServiceCredentialSet(r.Context(), u.keyring, who.ID, in, scope.Expr)
	if errors.Is(err, store.ErrForbidden) {
		return web.Forbidden("Your service permission's constraints do not cover this set.")
	}
	if err != nil {
		return err
	}
	set, err := u.db.ServiceCredentialSet(r.Context(), id, scope.Expr)
	if err != nil {
		return err
	}
	u.log.Info("service credential set created", "set_id", id, "username", who.Username)
	return u.writeServiceSet(w, r, http.StatusCreated, set)
}

// updateServiceSet answers PATCH /ui/api/service-credential-sets/{id}/.
func (u *UI) updateServiceSet(w http.ResponseWriter, r *http.Request) error {
	cur, scope, err := u.serviceSet(r)
	if err != nil {
		return err
	}
	in, err := u.readSet(r, &cur)
	if err != nil {
		return err
	}
	if err := u.db.UpdateServiceCredentialSet(r.Context(), u.keyring, cur.ID, in, scope.Expr); err != nil {
		return err
	}
	u.closeSessions(cur.ID)
	set, err := u.db.ServiceCredentialSet(r.Context(), cur.ID, scope.Expr)
	if err != nil {
		return err
	}
	u.log.Info("service credential set changed", "set_id", cur.ID, "username", sessionOf(r).Principal.Username)
	return u.writeServiceSet(w, r, http.StatusOK, set)
}

// deleteServiceSet answers DELETE /ui/api/service-credential-sets/{id}/: the schedules
// naming it pause.
func (u *UI) deleteServiceSet(w http.ResponseWriter, r *http.Request) error {
	cur, scope, err := u.serviceSet(r)
	if err != nil {
		return err
	}
	if err := u.db.DeleteServiceCredentialSet(r.Context(), cur.ID, scope.Expr); err != nil {
		return err
	}
	u.closeSessions(cur.ID)
	u.log.Info("service credential set deleted", "set_id", cur.ID, "username", sessionOf(r).Principal.Username)
	web.Write(w, http.StatusNoContent, nil)
	return nil
}

// serviceSet loads the set of the path within the user's service scope (404 outside).
func (u *UI) serviceSet(r *http.Request) (store.CredentialSet, store.Scope, error) {
	scope, err := u.serviceScope(r)
	if err != nil {
		return store.CredentialSet{}, scope, err
	}
	id, err := web.PathID(r)
	if err != nil {
		return store.CredentialSet{}, scope, err
	}
	set, err := u.db.ServiceCredentialSet(r.Context(), id, scope.Expr)
	return set, scope, err
}

func (u *UI) writeServiceSet(w http.ResponseWriter, r *http.Request, status int, set store.CredentialSet) error {
	out, err := u.renderServiceSets(r, []store.CredentialSet{set})
	if err != nil {
		return err
	}
	web.Write(w, status, out[0])
	return nil
}

// renderServiceSets is a personal set's JSON without the token, with who made the set.
func (u *UI) renderServiceSets(r *http.Request, sets []store.CredentialSet) ([]map[string]any, error) {
	out, err := u.renderSets(r.Context(), sets)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(sets))
	for i, s := range sets {
		ids[i] = s.OwnerID
	}
	users, err := u.db.Rows(r.Context(), store.Users, ids)
	if err != nil {
		return nil, err
	}
	names := map[int64]any{}
	for _, us := range users {
		names[us.ID()] = us["username"]
	}
	for i, m := range out {
		delete(m, "token_prefix")
		m["service"], m["display"], m["created_by"] = true, sets[i].Name, names[sets[i].OwnerID]
	}
	return out, nil
}
