package handlers

import (
	"context"

	"fieldkit/store"
	"fieldkit/web"
)

// ipHooks: NetBox sets an address's assigned_object_type and assigned_object_id as a
// pair; the only assignable type here is an interface.
var ipHooks = hooks{check: checkAssignment}

func checkAssignment(ctx context.Context, a *API, f *web.Form, v store.Values, _ store.Row, full bool) error {
	typ, typeSet := v["assigned_object_type"]
	id, idSet := v["assigned_object_id"]
	if typeSet && typ == nil && !f.Has("assigned_object_id") {
		v["assigned_object_id"] = nil // a null type unassigns the address
	}
	if full && typeSet && typ != nil && !f.Has("assigned_object_id") {
		f.Errs.Add("assigned_object_id", "This field is required when assigned_object_type is set.")
	}
	if !idSet || id == nil {
		return nil
	}
	if f.IsNull("assigned_object_type") {
		f.Errs.Add("assigned_object_type", "This field is required when assigned_object_id is set.")
	}
	found, err := a.DB.Exists(ctx, store.TypeInterface, id.(int64))
	if err == nil && !found {
		f.Errs.Add("assigned_object_id", refMessage(id.(int64), nil))
	}
	return err
}
