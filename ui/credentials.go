package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"

	"fieldkit/exec"
	"fieldkit/store"
	"fieldkit/web"
)

// Credential sets belong to their owner. Any logged-in, active user manages their own
// sets and nobody else's, superusers included: no object permission is consulted (a
// permission on netbox_toolkit_plugin.devicecredentialset could not let anyone see
// another user's secrets, and taking one away could not stop a user from holding
// device logins of their own). Another user's set is a 404, as if it did not exist.

var credentialFields = []string{"name", "description", "username", "password", "enable_secret",
	"enable_mode", "private_key", "platforms", "is_active"}

const (
	maxSecret     = 1024
	maxPrivateKey = 16 << 10
)

// listSets answers GET /ui/api/credential-sets/.
func (u *UI) listSets(w http.ResponseWriter, r *http.Request) error {
	sets, err := u.db.CredentialSets(r.Context(), sessionOf(r).Principal.ID)
	if err != nil {
		return err
	}
	out, err := u.renderSets(r.Context(), sets)
	if err != nil {
		return err
	}
	web.Write(w, http.StatusOK, map[string]any{"count": len(out), "results": out})
	return nil
}

// getSet answers GET /ui/api/credential-sets/{id}/.
func (u *UI) getSet(w http.ResponseWriter, r *http.Request) error {
	set, err := u.ownSet(r)
	if err != nil {
		return err
	}
	return u.writeSet(w, r, http.StatusOK, set, "")
}

// createSet answers POST /ui/api/credential-sets/: the token is in this answer only.
func (u *UI) createSet(w http.ResponseWriter, r *http.Request) error {
	in, err := u.readSet(r, nil)
	if err != nil {
		return err
	}
	owner := sessionOf(r).Principal.ID
	id, token, err := u.db.CreateCredentialSet(r.Context(), u.keyring, owner, in)
	if err != nil {
		return err
	}
	set, err := u.db.CredentialSet(r.Context(), owner, id)
	if err != nil {
		return err
	}
	u.log.Info("credential set created", "set_id", id, "username", sessionOf(r).Principal.Username)
	return u.writeSet(w, r, http.StatusCreated, set, token)
}

// updateSet answers PATCH /ui/api/credential-sets/{id}/. Secrets left out are kept; ""
// clears one.
func (u *UI) updateSet(w http.ResponseWriter, r *http.Request) error {
	cur, err := u.ownSet(r)
	if err != nil {
		return err
	}
	in, err := u.readSet(r, &cur)
	if err != nil {
		return err
	}
	owner := sessionOf(r).Principal.ID
	if err := u.db.UpdateCredentialSet(r.Context(), u.keyring, owner, cur.ID, in); err != nil {
		return err
	}
	u.closeSessions(cur.ID)
	set, err := u.db.CredentialSet(r.Context(), owner, cur.ID)
	if err != nil {
		return err
	}
	return u.writeSet(w, r, http.StatusOK, set, "")
}

// deleteSet answers DELETE /ui/api/credential-sets/{id}/.
func (u *UI) deleteSet(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	if err := u.db.DeleteCredentialSet(r.Context(), sessionOf(r).Principal.ID, id); err != nil {
		return err
	}
	u.closeSessions(id)
	u.log.Info("credential set deleted", "set_id", id, "username", sessionOf(r).Principal.Username)
	web.Write(w, http.StatusNoContent, nil)
	return nil
}

// regenerateSet answers POST /ui/api/credential-sets/{id}/regenerate/: the old token
// stops working at once.
func (u *UI) regenerateSet(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	token, err := u.db.RegenerateCredentialToken(r.Context(), sessionOf(r).Principal.ID, id)
	if err != nil {
		return err
	}
	u.closeSessions(id)
	u.log.Info("credential token regenerated", "set_id", id, "username", sessionOf(r).Principal.Username)
	web.Write(w, http.StatusOK, map[string]string{"token": token})
	return nil
}

// closeSessions closes the device sessions kept for a set that was just changed.
func (u *UI) closeSessions(setID int64) {
	if u.sessions != nil {
		u.sessions.CloseSet(setID)
	}
}

// ownSet loads the set of the path if the session's user owns it.
func (u *UI) ownSet(r *http.Request) (store.CredentialSet, error) {
	id, err := web.PathID(r)
	if err != nil {
		return store.CredentialSet{}, err
	}
	return u.db.CredentialSet(r.Context(), sessionOf(r).Principal.ID, id)
}

// readSet validates a create (cur nil) or a PATCH of cur, collecting every problem.
func (u *UI) readSet(r *http.Request, cur *store.CredentialSet) (store.CredentialInput, error) {
	f, err := web.DecodeForm(r, credentialFields...)
	if err != nil {
		return store.CredentialInput{}, err
	}
	create := cur == nil
	var in store.CredentialInput
	if s, ok := f.Str("name", create, 0); ok {
		s = strings.TrimSpace(s)
		switch n := len([]rune(s)); {
		case n == 0:
			f.Errs.Add("name", "This field may not be blank.")
		case n > 100:
			f.Errs.Add("name", "Ensure this field has no more than 100 characters.")
		default:
			in.Name = &s
		}
	}
	in.Description = optional(f.Str("description", false, 200))
	in.Username = optional(f.Str("username", create, 100))
	in.Password = optional(f.Str("password", false, maxSecret))
	in.EnableSecret = optional(f.Str("enable_secret", false, maxSecret))
	if m, ok := f.Str("enable_mode", false, 20); ok {
		if !slices.Contains(exec.EnableModes(), exec.EnableMode(m)) {
			f.Errs.Add("enable_mode", fmt.Sprintf("%q is not a valid choice.", m))
		} else {
			in.EnableMode = &m
		}
	}
	in.PrivateKey = optional(f.Str("private_key", false, maxPrivateKey))
	if in.PrivateKey != nil && *in.PrivateKey != "" {
		if msg := checkPrivateKey(*in.PrivateKey); msg != "" {
			f.Errs.Add("private_key", msg)
		}
	}
	if b, ok := f.Boolean("is_active"); ok {
		in.IsActive = &b
	}
	if f.Has("platforms") {
		ids, err := u.readPlatforms(r.Context(), f)
		if err != nil {
			return in, err
		}
		in.PlatformIDs = ids
	}
	// A set must be able to log in: a password or a key, after this change.
	hasPW := secretAfter(in.Password, cur != nil && cur.HasPassword)
	hasKey := secretAfter(in.PrivateKey, cur != nil && cur.HasPrivateKey)
	if !hasPW && !hasKey && !f.Errs.Has("password") && !f.Errs.Has("private_key") {
		f.Errs.Add("password", "A password is required unless a private key is given.")
	}
	return in, f.Err()
}

func optional(s string, ok bool) *string {
	if !ok {
		return nil
	}
	return &s
}

// secretAfter tells whether a secret is set once v (nil = unchanged) is applied.
func secretAfter(v *string, had bool) bool {
	if v == nil {
		return had
	}
	return *v != ""
}

// checkPrivateKey returns why key cannot be used for SSH, or "" when it can.
func checkPrivateKey(key string) string {
	_, err := ssh.ParsePrivateKey([]byte(key))
	var missing *ssh.PassphraseMissingError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &missing):
		return "Keys protected by a passphrase are not supported; remove the passphrase first."
	}
	return "Not a valid SSH private key (PEM or OpenSSH format)."
}

// readPlatforms reads "platforms": a list of platform ids (or {"id": n}, as the set's
// own JSON shows them), each of which must exist.
func (u *UI) readPlatforms(ctx context.Context, f *web.Form) (*[]int64, error) {
	var items []json.RawMessage
	if raw := f.Raw["platforms"]; string(raw) == "null" || json.Unmarshal(raw, &items) != nil {
		f.Errs.Add("platforms", "Expected a list of platform ids.")
		return nil, nil
	}
	ids := []int64{}
	seen := map[int64]bool{}
	for _, raw := range items {
		var ref struct {
			ID int64 `json:"id"`
		}
		id, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil && json.Unmarshal(raw, &ref) == nil {
			id, err = ref.ID, nil
		}
		if err != nil || id < 1 {
			f.Errs.Add("platforms", "Expected a list of platform ids.")
			return nil, nil
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		ok, err := u.db.Exists(ctx, store.TypePlatform, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			f.Errs.Add("platforms", fmt.Sprintf("Related object not found using the provided numeric ID: %d", id))
			return nil, nil
		}
		ids = append(ids, id)
	}
	return &ids, nil
}

// writeSet answers with one set, plus its token when one was just made.
func (u *UI) writeSet(w http.ResponseWriter, r *http.Request, status int, set store.CredentialSet, token string) error {
	out, err := u.renderSets(r.Context(), []store.CredentialSet{set})
	if err != nil {
		return err
	}
	if token != "" {
		out[0]["token"] = token
	}
	web.Write(w, status, out[0])
	return nil
}

// renderSets is the JSON of sets, with their platforms by name; never a secret.
func (u *UI) renderSets(ctx context.Context, sets []store.CredentialSet) ([]map[string]any, error) {
	platforms := map[int64]store.Row{}
	var ids []int64
	for _, s := range sets {
		ids = append(ids, s.PlatformIDs...)
	}
	ps, err := u.db.Rows(ctx, store.Platforms, ids)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		platforms[p.ID()] = p
	}
	out := make([]map[string]any, 0, len(sets))
	for _, s := range sets {
		plats := []map[string]any{}
		for _, id := range s.PlatformIDs {
			if p, ok := platforms[id]; ok {
				plats = append(plats, map[string]any{"id": id, "name": p["name"], "slug": p["slug"]})
			}
		}
		sort.Slice(plats, func(i, j int) bool { return plats[i]["name"].(string) < plats[j]["name"].(string) })
		out = append(out, map[string]any{
			"id": s.ID, "name": s.Name, "description": s.Description, "username": s.Username, "enable_mode": s.EnableMode,
			"platforms": plats, "is_active": s.IsActive, "has_password": s.HasPassword,
			"has_enable_secret": s.HasEnableSecret, "has_private_key": s.HasPrivateKey,
			"token_prefix": s.TokenPrefix, "last_used": web.Stamp(s.LastUsed), "created": web.Stamp(s.Created),
			"last_updated": web.Stamp(s.LastUpdated),
		})
	}
	return out, nil
}
