package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Groups is users.group: users who share permissions.
var Groups = declare(&Model{
	Type: TypeGroup, Name: "Group", Table: "groups", DefaultOrder: "name",
	Fields: []Field{
		nameField(150, ""),
		{Name: "user_count", Kind: KindInt, Access: ReadOnly, Sort: true,
			Select: "(SELECT count(*) FROM user_groups ug WHERE ug.group_id = t.id)"},
		{Name: "users", Kind: KindInt, Rel: TypeUser, Join: &Join{"user_groups", "group_id", "user_id"}, Access: Internal},
	},
	Filters: map[string]Filter{
		"user_id": {Path: "users", Doc: "Member user id; repeat to match any."},
		"user":    {Path: "users__username", Doc: "Member username; repeat to match any."},
	},
})

// CreateGroup inserts a group.
func (db *DB) CreateGroup(ctx context.Context, name string, guard Scope) (int64, error) {
	return db.Create(ctx, Groups, Values{"name": name}, guard)
}

// GroupIDByName finds a group's id.
func (db *DB) GroupIDByName(ctx context.Context, name string) (int64, error) {
	return cached(ctx, db, "group\x00"+name, func() (int64, error) { return db.groupIDByName(ctx, name) })
}

func (db *DB) groupIDByName(ctx context.Context, name string) (int64, error) {
	var id int64
	err := db.r.QueryRowContext(ctx, `SELECT id FROM groups WHERE name = ?`, name).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, fmt.Errorf("group %q: %w", name, ErrNotFound)
	}
	return id, err
}
