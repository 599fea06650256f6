package handlers

import (
	"context"
	"net/http"

	"fieldkit/store"
)

// planCache remembers, for one request, what the checks of an execution looked up: a
// bulk request of a thousand elements names few commands, devices and tokens, and each
// is resolved (and a credential decrypted) once instead of once per element. The
// results are the same as uncached; the cache lives only as long as the request.
type planCache struct {
	commands map[int64]cached[store.Command]
	targets  map[int64]cached[store.Target]
	execOK   map[int64]error
	secrets  map[string]cached[store.Secret]
	choices  map[[2]int64]map[string][]string
	devScope *store.Scope
}

type cached[T any] struct {
	v   T
	err error
}

func newPlanCache() *planCache {
	return &planCache{commands: map[int64]cached[store.Command]{}, targets: map[int64]cached[store.Target]{},
		execOK: map[int64]error{}, secrets: map[string]cached[store.Secret]{}, choices: map[[2]int64]map[string][]string{}}
}

func (pc *planCache) command(a *API, r *http.Request, id int64) (store.Command, error) {
	c, ok := pc.commands[id]
	if !ok {
		c.v, c.err = visible(a, r, commandResource, id, a.DB.LoadCommands)
		pc.commands[id] = c
	}
	return c.v, c.err
}

// target is the visible device's connection details, or the 400 "Device not found.".
func (pc *planCache) target(a *API, r *http.Request, id int64) (store.Target, error) {
	if c, ok := pc.targets[id]; ok {
		return c.v, c.err
	}
	var c cached[store.Target]
	if pc.devScope == nil {
		s, err := a.scope(r, store.TypeDevice, "view")
		if err != nil {
			return store.Target{}, err
		}
		pc.devScope = &s
	}
	ok, err := a.DB.Exists(r.Context(), store.TypeDevice, id, pc.devScope.Expr)
	switch {
	case err != nil:
		c.err = err
	case !ok || !pc.devScope.Granted:
		c.err = fieldRejection("device_id", "Device not found.")
	default:
		c.v, c.err = a.DB.DeviceTarget(r.Context(), id)
	}
	pc.targets[id] = c
	return c.v, c.err
}

func (pc *planCache) mayExecute(a *API, r *http.Request, cmd store.Command) error {
	err, ok := pc.execOK[cmd.ID]
	if !ok {
		err = a.mayExecute(r, cmd)
		pc.execOK[cmd.ID] = err
	}
	return err
}

// credential caches the token's lookup; the platform check depends on the target and
// is made each time.
func (pc *planCache) credential(a *API, r *http.Request, token string, target store.Target) (store.Secret, error) {
	c, ok := pc.secrets[token]
	if !ok {
		c.v, c.err = a.lookupCredential(r, token)
		pc.secrets[token] = c
	}
	if c.err != nil {
		return c.v, c.err
	}
	return a.credentialFor(c.v, target)
}

func (pc *planCache) choiceValues(a *API, ctx context.Context, cmd store.Command, deviceID int64) (map[string][]string, error) {
	k := [2]int64{cmd.ID, deviceID}
	if v, ok := pc.choices[k]; ok {
		return v, nil
	}
	v, err := a.choiceValues(ctx, cmd, deviceID)
	if err == nil {
		pc.choices[k] = v
	}
	return v, err
}
