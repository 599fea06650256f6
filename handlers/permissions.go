package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"fieldkit/store"
)

func (a *API) permissionCRUD() crudSet {
	wr := Writer{
		Fields: []string{"name", "description", "enabled", "object_types", "actions", "constraints", "users", "groups"},
		Create: func(ctx context.Context, f *form, guard store.Scope) (int64, error) {
			in := a.permissionInput(ctx, f, true, store.Permission{})
			if err := f.Err(); err != nil {
				return 0, err
			}
			return a.DB.CreatePermission(ctx, in, guard)
		},
		Update: func(ctx context.Context, id int64, f *form, partial bool, guard store.Scope) error {
			cur, err := a.DB.Permissions(ctx, []int64{id})
			if err != nil || len(cur) == 0 {
				return errors.Join(err, errNotFound())
			}
			in := a.permissionInput(ctx, f, !partial, cur[0])
			if err := f.Err(); err != nil {
				return err
			}
			return a.DB.UpdatePermission(ctx, id, in, guard)
		},
		Delete: a.DB.DeletePermission,
	}
	return crudOf(a, permissionResource, wr, a.DB.Permissions, func(p store.Permission) int64 { return p.ID }, a.renderPermission)
}

// permissionInput reads the form and validates object types, actions and constraints
// together, against the current values (cur) of the fields a PATCH leaves out.
func (a *API) permissionInput(ctx context.Context, f *form, create bool, cur store.Permission) store.PermissionInput {
	var in store.PermissionInput
	if s, ok := f.Str("name", create, 100); ok {
		in.Name = &s
	}
	if s, ok := f.Str("description", false, 200); ok {
		in.Description = &s
	}
	if b, ok := f.Boolean("enabled"); ok {
		in.Enabled = &b
	}
	types, typesOK := permList(f, "object_types", create)
	for _, t := range types {
		if !slices.Contains(store.ObjectTypes(), t) {
			f.Errs.Add("object_types", fmt.Sprintf("Unknown object type %q.", t))
		}
	}
	actions, actionsOK := permList(f, "actions", create)
	if typesOK {
		in.ObjectTypes = &types
	} else {
		types = cur.ObjectTypes
	}
	if actionsOK {
		in.Actions = &actions
	} else {
		actions = cur.Actions
	}
	for _, act := range actions {
		switch {
		case !slices.Contains(store.PermissionActions, act):
			f.Errs.Add("actions", fmt.Sprintf("Unknown action %q.", act))
		case strings.HasPrefix(act, "execute_") && !slices.Contains(types, store.TypeCommand):
			f.Errs.Add("actions", fmt.Sprintf("Action %q applies only to %s.", act, store.TypeCommand))
		}
	}
	cons, consOK := permConstraints(f, "constraints")
	if consOK {
		in.Constraints = &cons
	} else {
		cons = cur.Constraints
	}
	if cons != nil && string(cons) != "null" && !f.Errs.Has("object_types") && !f.Errs.Has("constraints") {
		if err := store.ValidateConstraints(types, string(cons)); err != nil {
			f.Errs.Add("constraints", err.Error())
		}
	}
	if ids, ok := a.refs(ctx, f, "users", store.TypeUser); ok {
		in.Users = &ids
	}
	if ids, ok := a.refs(ctx, f, "groups", store.TypeGroup); ok {
		in.Groups = &ids
	}
	return in
}

// strList reads a list of strings, without duplicates; required lists may not be empty.
func permList(f *form, name string, required bool) ([]string, bool) {
	raw, ok := f.Raw[name]
	if !ok {
		if required {
			f.Errs.Add(name, "This field is required.")
		}
		return nil, false
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		f.Errs.Add(name, `Expected a list of strings but got type "`+jsonType(raw)+`".`)
		return nil, false
	}
	if len(list) == 0 {
		f.Errs.Add(name, "This list may not be empty.")
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, true
}

// constraints reads a constraint field: null, an object, or a list of objects; it is
// stored compacted.
func permConstraints(f *form, name string) (json.RawMessage, bool) {
	raw, ok := f.Raw[name]
	if !ok {
		return nil, false
	}
	if string(raw) == "null" {
		return json.RawMessage("null"), true
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	okShape := false
	switch x := v.(type) {
	case map[string]any:
		okShape = true
	case []any:
		okShape = true
		for _, it := range x {
			if _, isObj := it.(map[string]any); !isObj {
				okShape = false
			}
		}
	}
	if !okShape {
		f.Errs.Add(name, "Constraints must be a JSON object, a list of JSON objects, or null.")
		return nil, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		f.Errs.Add(name, "Constraints must be valid JSON.")
		return nil, false
	}
	return json.RawMessage(buf.Bytes()), true
}

func (a *API) renderPermission(r *http.Request, p store.Permission, brief bool) any {
	n := nested{"id": p.ID, "url": permissionResource.objURL(r, p.ID), "display": p.Name, "name": p.Name}
	if brief {
		n["description"] = p.Description
		return n
	}
	users := make([]any, len(p.Users))
	for i, u := range p.Users {
		users[i] = briefUser(r, u.ID, u.Username)
	}
	groups := make([]any, len(p.Groups))
	for i, g := range p.Groups {
		groups[i] = briefGroup(r, g.ID, g.Name)
	}
	n["description"], n["enabled"] = p.Description, p.Enabled
	n["object_types"], n["actions"] = strsOrEmpty(p.ObjectTypes), strsOrEmpty(p.Actions)
	var cons any
	if p.Constraints != nil {
		cons = p.Constraints
	}
	n["constraints"] = cons
	n["users"], n["groups"] = users, groups
	n["created"], n["last_updated"] = stamp(p.Created), stamp(p.LastUpdated)
	return n
}

func strsOrEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
