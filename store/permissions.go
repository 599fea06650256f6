package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
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
			Doc: "execute_show and execute_config apply only to netbox_toolkit_plugin.command."},
		{Name: "constraints", Column: "constraints", Kind: KindJSON, Null: true,
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

// PermissionActions are the actions a permission may grant; the execute ones only on
// commands.
var PermissionActions = []string{"view", "add", "change", "delete", "execute_show", "execute_config"}

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

// Permission is a users.objectpermission.
type Permission struct {
	ID                   int64
	Name, Description    string
	Enabled              bool
	ObjectTypes, Actions []string
	Constraints          json.RawMessage // nil = none
	Users                []UserRef
	Groups               []GroupRef
	Created, LastUpdated time.Time
}

// Permissions loads object permissions by id, with their users and groups.
func (db *DB) Permissions(ctx context.Context, ids []int64) ([]Permission, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, description, enabled, object_types, actions, constraints,
		created, last_updated FROM object_permissions WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: permissions: %w", err)
	}
	defer rows.Close()
	var out []Permission
	for rows.Next() {
		var p Permission
		var types, actions, c, u string
		var cons sql.NullString
		if err := rows.Scan(&p.ID, &p.Name, &p.Description, &p.Enabled, &types, &actions, &cons, &c, &u); err != nil {
			return nil, err
		}
		// Both columns are written only by this package from []string.
		_ = json.Unmarshal([]byte(types), &p.ObjectTypes)
		_ = json.Unmarshal([]byte(actions), &p.Actions)
		if cons.Valid && cons.String != "" && cons.String != "null" {
			p.Constraints = json.RawMessage(cons.String)
		}
		p.Created, p.LastUpdated = ParseStamp(c), ParseStamp(u)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	users, err := db.userRefs(ctx, ids)
	if err != nil {
		return nil, err
	}
	groups, err := db.groupRefs(ctx, "permission_groups", "permission_id", ids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Users, out[i].Groups = users[out[i].ID], groups[out[i].ID]
	}
	return out, nil
}

func (db *DB) userRefs(ctx context.Context, permIDs []int64) (map[int64][]UserRef, error) {
	return grouped(ctx, db, "permission users", `SELECT l.permission_id, u.id, u.username FROM permission_users l
		JOIN users u ON u.id = l.user_id WHERE l.permission_id IN (`+placeholders(len(permIDs))+`)
		ORDER BY u.username, u.id`, int64Args(permIDs), func(u *UserRef) []any { return []any{&u.ID, &u.Username} })
}

// UpdatePermission changes the fields set in in; the result must stay within guard.
// The caller validates object types, actions and constraints together.
func (db *DB) UpdatePermission(ctx context.Context, id int64, in PermissionInput, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		set.Str("name", in.Name)
		set.Str("description", in.Description)
		if in.Enabled != nil {
			set.Val("enabled", *in.Enabled)
		}
		if in.ObjectTypes != nil {
			b, _ := json.Marshal(*in.ObjectTypes)
			set.Val("object_types", string(b))
		}
		if in.Actions != nil {
			b, _ := json.Marshal(*in.Actions)
			set.Val("actions", string(b))
		}
		if in.Constraints != nil {
			var v any
			if string(*in.Constraints) != "null" {
				v = string(*in.Constraints)
			}
			set.Val("constraints", v)
		}
		if err := set.Apply(ctx, tx, "object_permissions", id, db.now()); err != nil {
			return constraintErr(err, "permission")
		}
		if in.Users != nil {
			if err := setLinks(ctx, tx, "permission_users", "permission_id", "user_id", id, *in.Users); err != nil {
				return constraintErr(err, "permission users")
			}
		}
		if in.Groups != nil {
			if err := setLinks(ctx, tx, "permission_groups", "permission_id", "group_id", id, *in.Groups); err != nil {
				return constraintErr(err, "permission groups")
			}
		}
		return CheckScope(ctx, tx, TypePermission, id, guard)
	})
}

// DeletePermission deletes an object permission.
func (db *DB) DeletePermission(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "object_permissions", id)
}
