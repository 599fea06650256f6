package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

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
