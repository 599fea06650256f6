package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Permissions is users.objectpermission: NetBox's object permissions, actions on
// object types for users and groups, narrowed by constraints.
var Permissions = declare(&Model{
	Type: TypePermission, Name: "ObjectPermission", Table: "object_permissions", DefaultOrder: "name",
	Fields: []Field{
		nameField(100, ""),
		description(200),
		{Name: "enabled", Column: "enabled", Kind: KindBool, Default: true, Filter: FilterExact, Sort: true,
			Doc: "A disabled permission grants nothing."},
		{Name: "object_types", Column: "object_types", Kind: KindStrings, Required: true, Choices: objectTypeChoices(),
			Doc: `"app.model" names the permission applies to.`},
		{Name: "actions", Column: "actions", Kind: KindStrings, Required: true, Choices: plainChoices(PermissionActions),
			Doc: "execute_show and execute_config apply only to netbox_toolkit_plugin.command, clear_host_key only to dcim.device, " +
				"service (manage service credential sets, attach them to schedules) only to netbox_toolkit_plugin.devicecredentialset, " +
				"run (run a schedule now) only to netbox_toolkit_plugin.schedule, view_raw_config only to netbox_toolkit_plugin.configversion."},
		{Name: "constraints", Column: "constraints", Kind: KindJSON, Null: true, Check: checkConstraints, Schema: "PermissionConstraints",
			Doc: `A JSON object (all lookups must hold) or a list of objects (any may hold), in Django lookup syntax; "$user" is the requesting user's id; null = no constraint.`},
		{Name: "users", Kind: KindInt, Rel: TypeUser, Join: &Join{"permission_users", "permission_id", "user_id"}},
		{Name: "groups", Kind: KindInt, Rel: TypeGroup, Join: &Join{"permission_groups", "permission_id", "group_id"}},
	},
	Filters: map[string]Filter{
		"user_id":     {Path: "users", Doc: "Assigned user id; repeat to match any."},
		"user":        {Path: "users__username", Doc: "Assigned username; repeat to match any."},
		"group_id":    {Path: "groups", Doc: "Assigned group id; repeat to match any."},
		"group":       {Path: "groups__name", Doc: "Assigned group name; repeat to match any."},
		"object_type": {SQL: jsonArrayFilter("object_types", ObjectTypes()), Kind: KindString, Doc: `Object type ("dcim.device"); repeat to match any.`},
		"action":      {SQL: jsonArrayFilter("actions", PermissionActions), Kind: KindString, Doc: "Granted action; repeat to match any."},
	},
})

// PermissionActions are the actions a permission may grant: the four every object type
// has, then those of TypeActions.
var PermissionActions = []string{"view", "add", "change", "delete", "execute_show", "execute_config", "clear_host_key",
	ActionService, ActionRun, "view_raw_config"}

// TypeActions are the actions only one object type has: running commands; clearing
// a device's pinned SSH host key (which lets a changed key be trusted again, so editing
// a device is not enough); managing service credential sets and attaching them to
// schedules (a person's own sets need no permission); running a schedule now.
var TypeActions = map[string][]string{
	TypeCommand:       {"execute_show", "execute_config"},
	TypeDevice:        {"clear_host_key"},
	TypeCredentialSet: {ActionService},
	TypeSchedule:      {ActionRun},
	// A config version's text as read, secrets unmasked, is more than viewing it.
	TypeConfigVersion: {"view_raw_config"},
}

// ActionRun is the permission action to run a schedule now.
const ActionRun = "run"

// ActionsOf lists the actions a permission may grant on an object type.
func ActionsOf(objectType string) []string {
	return append([]string{"view", "add", "change", "delete"}, TypeActions[objectType]...)
}

// ActionType is the one object type an action applies to, or "" for an action every
// type has.
func ActionType(action string) string {
	for t, acts := range TypeActions {
		if slices.Contains(acts, action) {
			return t
		}
	}
	return ""
}

func objectTypeChoices() []Choice { return plainChoices(ObjectTypes()) }

// jsonArrayFilter filters on membership of a JSON array column.
func jsonArrayFilter(column string, valid []string) func(vals []string) (Expr, error) {
	return func(vals []string) (Expr, error) {
		args := make([]any, len(vals))
		for i, v := range vals {
			if !slices.Contains(valid, v) {
				return Expr{}, problemf("%q is not a valid choice.", v)
			}
			args[i] = v
		}
		return Expr{SQL: "EXISTS (SELECT 1 FROM json_each(t." + column + ") WHERE value IN (" + placeholders(len(args)) + "))",
			Args: args}, nil
	}
}

// checkConstraints accepts what a constraint may be: an object (every lookup must
// hold) or a list of objects (any may).
func checkConstraints(v any) (any, error) {
	ok := false
	switch x := v.(type) {
	case map[string]any:
		ok = true
	case []any:
		ok = true
		for _, it := range x {
			if _, isObj := it.(map[string]any); !isObj {
				ok = false
			}
		}
	}
	if !ok {
		return nil, Problem("Constraints must be a JSON object, a list of JSON objects, or null.")
	}
	return v, nil
}

// PermissionInput creates an object permission outside the API (tests, the demo).
type PermissionInput struct {
	Name, Description    *string
	Enabled              *bool
	ObjectTypes, Actions *[]string
	Constraints          *json.RawMessage // nil or "null": none
	Users, Groups        *[]int64
}

// CreatePermission inserts an object permission.
func (db *DB) CreatePermission(ctx context.Context, in PermissionInput, guard Scope) (int64, error) {
	v := Values{}
	put(v, "name", in.Name)
	put(v, "description", in.Description)
	put(v, "enabled", in.Enabled)
	put(v, "object_types", in.ObjectTypes)
	put(v, "actions", in.Actions)
	put(v, "users", in.Users)
	put(v, "groups", in.Groups)
	if in.Constraints != nil {
		var c any
		if err := json.Unmarshal(*in.Constraints, &c); err != nil {
			return 0, fmt.Errorf("store: permission constraints: %w", err)
		}
		v["constraints"] = c
	}
	return db.Create(ctx, Permissions, v, guard)
}
