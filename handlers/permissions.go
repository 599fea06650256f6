package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"fieldkit/store"
	"fieldkit/web"
)

// permissionHooks check a permission's object types, actions and constraints together,
// with the stored values of what a PATCH leaves out: an action of one object type
// (execute_show, clear_host_key) needs that type, and constraints must name fields of every object type. A writer who is not a
// superuser may only leave a permission granting what they hold themselves (see
// store.Grant for how constraints compare): whoever it is assigned to then holds no more
// than the writer.
var permissionHooks = hooks{check: checkPermission}

func checkPermission(ctx context.Context, a *API, f *web.Form, v store.Values, cur store.Row, _ bool) error {
	pick := func(name string) any {
		if x, ok := v[name]; ok || f.Has(name) {
			return x
		}
		return cur[name]
	}
	types, _ := pick("object_types").([]string)
	actions, _ := pick("actions").([]string)
	for _, act := range actions {
		if t := store.ActionType(act); t != "" && !slices.Contains(types, t) {
			f.Errs.Add("actions", fmt.Sprintf("Action %q applies only to %s.", act, t))
		}
	}
	cons := pick("constraints")
	if len(f.Errs) == 0 && !web.User(ctx).IsSuperuser {
		mine, err := a.grantOf(ctx)
		if err != nil {
			return err
		}
		if !mine.CoversPermission(types, actions, cons) {
			return web.Forbidden("You may only grant what you hold yourself: the same object types and actions, " +
				"with no constraints only if yours have none, else with all of your constraints (and perhaps more).")
		}
	}
	if cons == nil || f.Errs.Has("object_types") || f.Errs.Has("constraints") {
		return nil
	}
	raw, err := json.Marshal(cons)
	if err != nil {
		return err
	}
	if err := store.ValidateConstraints(types, string(raw)); err != nil {
		f.Errs.Add("constraints", err.Error())
	}
	return nil
}
