package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// UserInput creates or partially updates a user; nil fields are left as they are.
type UserInput struct {
	Username, FirstName, LastName, Email *string
	Password                             *string // clear text in, bcrypt hash stored
	IsActive, IsSuperuser                *bool
	Groups                               *[]int64
}

// HashPassword hashes a password for storage.
func HashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("store: hash password: %w", err)
	}
	return string(h), nil
}

// CreateUser inserts a user that must fall within guard.
func (db *DB) CreateUser(ctx context.Context, in UserInput, guard Scope) (int64, error) {
	hash := ""
	if in.Password != nil && *in.Password != "" {
		var err error
		if hash, err = HashPassword(*in.Password); err != nil {
			return 0, err
		}
	}
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		active := in.IsActive == nil || *in.IsActive
		res, err := tx.ExecContext(ctx, `INSERT INTO users (username, password_hash, first_name, last_name, email,
			is_active, is_superuser, date_joined, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			deref(in.Username), hash, deref(in.FirstName), deref(in.LastName), deref(in.Email),
			active, deref(in.IsSuperuser), now, now, now)
		if err != nil {
			return constraintErr(err, "user")
		}
		id, _ = res.LastInsertId()
		if in.Groups != nil {
			if err := setLinks(ctx, tx, "user_groups", "user_id", "group_id", id, *in.Groups); err != nil {
				return constraintErr(err, "user groups")
			}
		}
		return CheckScope(ctx, tx, TypeUser, id, guard)
	})
	return id, err
}

// TokenInput creates a token.
type TokenInput struct {
	UserID       int64
	Description  string
	WriteEnabled bool
	Expires      time.Time // zero = never
	Key          string    // empty = generate
}

// CreateToken stores a new token and returns its id and key; the key is not kept.
func (db *DB) CreateToken(ctx context.Context, in TokenInput, guard Scope) (int64, string, error) {
	key := in.Key
	if key == "" {
		key = NewTokenKey()
	}
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		var expires any
		if !in.Expires.IsZero() {
			expires = Stamp(in.Expires)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO tokens (user_id, key_hash, key_prefix, description, write_enabled,
			expires, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			in.UserID, HashKey(key), key[:min(8, len(key))], in.Description, in.WriteEnabled, expires, now, now)
		if err != nil {
			return constraintErr(err, "token")
		}
		id, _ = res.LastInsertId()
		return CheckScope(ctx, tx, TypeToken, id, guard)
	})
	return id, key, err
}

// PermissionInput creates or partially updates an object permission.
type PermissionInput struct {
	Name, Description    *string
	Enabled              *bool
	ObjectTypes, Actions *[]string
	Constraints          *json.RawMessage // nil = unchanged; "null" = none
	Users, Groups        *[]int64
}

// CreatePermission inserts an object permission.
func (db *DB) CreatePermission(ctx context.Context, in PermissionInput, guard Scope) (int64, error) {
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		enabled := in.Enabled == nil || *in.Enabled
		types, _ := json.Marshal(deref(in.ObjectTypes))
		actions, _ := json.Marshal(deref(in.Actions))
		var cons any
		if in.Constraints != nil && string(*in.Constraints) != "null" {
			cons = string(*in.Constraints)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO object_permissions (name, description, enabled, object_types,
			actions, constraints, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			deref(in.Name), deref(in.Description), enabled, string(types), string(actions), cons, now, now)
		if err != nil {
			return constraintErr(err, "permission")
		}
		id, _ = res.LastInsertId()
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
	return id, err
}

// CreateGroup inserts a group.
func (db *DB) CreateGroup(ctx context.Context, name string, guard Scope) (int64, error) {
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO groups (name, created, last_updated) VALUES (?, ?, ?)`, name, now, now)
		if err != nil {
			return constraintErr(err, "group")
		}
		id, _ = res.LastInsertId()
		return CheckScope(ctx, tx, TypeGroup, id, guard)
	})
	return id, err
}

// UserIDByName finds a user's id.
func (db *DB) UserIDByName(ctx context.Context, username string) (int64, error) {
	var id int64
	err := db.r.QueryRowContext(ctx, `SELECT id FROM users WHERE username = ?`, username).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, fmt.Errorf("user %q: %w", username, ErrNotFound)
	}
	return id, err
}

// GroupIDByName finds a group's id.
func (db *DB) GroupIDByName(ctx context.Context, name string) (int64, error) {
	var id int64
	err := db.r.QueryRowContext(ctx, `SELECT id FROM groups WHERE name = ?`, name).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, fmt.Errorf("group %q: %w", name, ErrNotFound)
	}
	return id, err
}

// SetPassword replaces a user's password.
func (db *DB) SetPassword(ctx context.Context, userID int64, password string) error {
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		set.Val("password_hash", hash)
		return set.Apply(ctx, tx, "users", userID, db.now())
	})
}
