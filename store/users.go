package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Users is users.user: who may log in and call the API.
var Users = declare(&Model{
	Type: TypeUser, Name: "User", Table: "users", DefaultOrder: "username",
	Fields: []Field{
		{Name: "username", Column: "username", Kind: KindString, Required: true, MaxLen: 150, Check: checkUsername, Nested: true,
			Filter: FilterLookups, Sort: true, Search: true, Doc: "Letters, digits and @/./+/-/_ only."},
		{Name: "password", Kind: KindString, Access: WriteOnly, Required: true, MaxLen: 72,
			Doc: "Stored as a bcrypt hash; never returned."},
		{Name: "first_name", Column: "first_name", Kind: KindString, MaxLen: 150, Filter: FilterLookups, Sort: true, Search: true},
		{Name: "last_name", Column: "last_name", Kind: KindString, MaxLen: 150, Filter: FilterLookups, Sort: true, Search: true},
		{Name: "email", Column: "email", Kind: KindString, MaxLen: 254, Check: checkEmail, Filter: FilterLookups, Sort: true,
			Search: true, Label: "E-mail"},
		{Name: "is_active", Column: "is_active", Kind: KindBool, Default: true, Filter: FilterExact, Sort: true,
			Label: "Active (may log in)", Doc: "Inactive users' tokens and sessions are refused."},
		{Name: "is_superuser", Column: "is_superuser", Kind: KindBool, Filter: FilterExact, Sort: true,
			Label: "Superuser", Doc: "Passes every permission check; only a superuser may set it."},
		{Name: "groups", Kind: KindInt, Rel: TypeGroup, Join: &Join{"user_groups", "user_id", "group_id"}},
		{Name: "date_joined", Column: "date_joined", Kind: KindTime, Access: ReadOnly, Filter: FilterLookups, Sort: true},
		{Name: "last_login", Column: "last_login", Kind: KindTime, Access: ReadOnly, Null: true, Filter: FilterLookups, Sort: true},
	},
	Filters: map[string]Filter{
		"group_id": {Path: "groups", Doc: "Group id; repeat to match any."},
		"group":    {Path: "groups__name", Doc: "Group name; repeat to match any."},
	},
})

// Groups is users.group: users that share permissions.
var Groups = declare(&Model{
	Type: TypeGroup, Name: "Group", Table: "groups", DefaultOrder: "name",
	Fields: []Field{
		nameField(150, ""),
		{Name: "user_count", Kind: KindInt, Access: ReadOnly},
		{Name: "users", Kind: KindInt, Rel: TypeUser, Join: &Join{"user_groups", "group_id", "user_id"}, Access: Internal},
	},
	Filters: map[string]Filter{
		"user_id": {Path: "users", Doc: "Member user id; repeat to match any."},
		"user":    {Path: "users__username", Doc: "Member username; repeat to match any."},
	},
	Orders: map[string]string{"user_count": "(SELECT count(*) FROM user_groups ug WHERE ug.group_id = t.id)"},
})

// Tokens is users.token: API keys, stored only as their hash.
var Tokens = declare(&Model{
	Type: TypeToken, Name: "Token", Table: "tokens", DefaultOrder: "-created", OwnerColumn: "user_id",
	Display: func(r Row) string { return fmt.Sprint(r["key_prefix"]) + "**********" },
	Fields: []Field{
		{Name: "user", Column: "user_id", Kind: KindInt, Rel: TypeUser, Sort: true,
			Doc: "Defaults to the requesting user; another user's token needs users.token permissions."},
		{Name: "description", Column: "description", Kind: KindString, MaxLen: 200, Filter: FilterLookups, Sort: true, Search: true},
		{Name: "expires", Column: "expires", Kind: KindTime, Null: true, Filter: FilterLookups, Sort: true,
			Doc: "Must be in the future; null = never."},
		{Name: "last_used", Column: "last_used", Kind: KindTime, Access: ReadOnly, Null: true, Filter: FilterLookups, Sort: true},
		{Name: "write_enabled", Column: "write_enabled", Kind: KindBool, Default: true, Filter: FilterExact, Sort: true,
			Label: "Write enabled", Doc: "False makes a read-only token: unsafe methods get 403."},
		{Name: "key", Kind: KindString, Access: CreateOnly, MaxLen: 40,
			Doc: "40 hex characters; generated unless given. Returned only in the create response."},
		{Name: "key_prefix", Column: "key_prefix", Kind: KindString, Access: Internal},
	},
	Filters: map[string]Filter{
		"user_id": {Path: "user", Doc: "Owner's user id; repeat to match any."},
		"user":    {Path: "user__username", Doc: "Owner's username; repeat to match any."},
		"created": {Path: "created", Lookups: true},
	},
})

var usernameRE = regexp.MustCompile(`^[\pL\pN@.+_-]+$`)

func checkUsername(v any) (any, error) {
	if !usernameRE.MatchString(v.(string)) {
		return nil, Problem("Enter a valid username: letters, numbers and @/./+/-/_ characters only.")
	}
	return v, nil
}

func checkEmail(v any) (any, error) {
	s := v.(string)
	local, domain, ok := strings.Cut(s, "@")
	if s != "" && !(ok && local != "" && domain != "" && !strings.ContainsAny(s, " \t\r\n<>,;") &&
		!strings.Contains(domain, "@") && strings.Contains(domain, ".")) {
		return nil, Problem("Enter a valid email address.")
	}
	return v, nil
}

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

// ErrLastSuperuser is returned when a write would leave no active superuser, which
// would lock everyone out of the permission system.
var ErrLastSuperuser = errors.New("last active superuser")

// ErrDeleteSelf is returned when a user tries to delete their own account.
var ErrDeleteSelf = errors.New("cannot delete yourself")

// UserRef is a user as other objects refer to it.
type UserRef struct {
	ID       int64
	Username string
}

// GroupRef is a group as other objects refer to it.
type GroupRef struct {
	ID   int64
	Name string
}

// User is a users.user; the password hash never leaves the store.
type User struct {
	ID                         int64
	Username                   string
	FirstName, LastName, Email string
	IsActive, IsSuperuser      bool
	Groups                     []GroupRef
	DateJoined, LastLogin      time.Time // LastLogin zero = never
	Created, LastUpdated       time.Time
}

// Users loads users by id, with their groups.
func (db *DB) Users(ctx context.Context, ids []int64) ([]User, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, username, first_name, last_name, email, is_active, is_superuser,
		date_joined, last_login, created, last_updated FROM users WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: users: %w", err)
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		var u User
		var joined, c, up string
		var last sql.NullString
		if err := rows.Scan(&u.ID, &u.Username, &u.FirstName, &u.LastName, &u.Email, &u.IsActive, &u.IsSuperuser,
			&joined, &last, &c, &up); err != nil {
			return nil, err
		}
		u.DateJoined, u.LastLogin = ParseStamp(joined), ParseStamp(last.String)
		u.Created, u.LastUpdated = ParseStamp(c), ParseStamp(up)
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	groups, err := db.groupRefs(ctx, "user_groups", "user_id", ids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Groups = groups[out[i].ID]
	}
	return out, nil
}

// groupRefs loads the groups linked to many owners through a link table.
func (db *DB) groupRefs(ctx context.Context, table, local string, ids []int64) (map[int64][]GroupRef, error) {
	return grouped(ctx, db, table, `SELECT l.`+local+`, g.id, g.name FROM `+table+` l JOIN groups g ON g.id = l.group_id
		WHERE l.`+local+` IN (`+placeholders(len(ids))+`) ORDER BY g.name, g.id`, int64Args(ids),
		func(g *GroupRef) []any { return []any{&g.ID, &g.Name} })
}

// UpdateUser changes the fields set in in; the result must stay within guard, and at
// least one active superuser must remain if the user was one.
func (db *DB) UpdateUser(ctx context.Context, id int64, in UserInput, guard Scope) error {
	hash := ""
	if in.Password != nil {
		var err error
		if hash, err = HashPassword(*in.Password); err != nil {
			return err
		}
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		wasSuper, err := activeSuperuser(ctx, tx, id)
		if err != nil {
			return err
		}
		set := Set{}
		set.Str("username", in.Username)
		set.Str("first_name", in.FirstName)
		set.Str("last_name", in.LastName)
		set.Str("email", in.Email)
		if in.Password != nil {
			set.Val("password_hash", hash)
		}
		if in.IsActive != nil {
			set.Val("is_active", *in.IsActive)
		}
		if in.IsSuperuser != nil {
			set.Val("is_superuser", *in.IsSuperuser)
		}
		if err := set.Apply(ctx, tx, "users", id, db.now()); err != nil {
			return constraintErr(err, "user")
		}
		if in.Groups != nil {
			if err := setLinks(ctx, tx, "user_groups", "user_id", "group_id", id, *in.Groups); err != nil {
				return constraintErr(err, "user groups")
			}
		}
		if wasSuper {
			if err := keepSuperuser(ctx, tx); err != nil {
				return err
			}
		}
		return CheckScope(ctx, tx, TypeUser, id, guard)
	})
}

// DeleteUser deletes a user (their tokens and links go with it). actorID is the user
// asking: nobody deletes themselves, and the last active superuser stays.
func (db *DB) DeleteUser(ctx context.Context, id, actorID int64) error {
	if id == actorID {
		return ErrDeleteSelf
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		wasSuper, err := activeSuperuser(ctx, tx, id)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
		if err != nil {
			return constraintErr(err, fmt.Sprintf("user %d", id))
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user %d: %w", id, ErrNotFound)
		}
		if wasSuper {
			return keepSuperuser(ctx, tx)
		}
		return nil
	})
}

func activeSuperuser(ctx context.Context, tx *sql.Tx, id int64) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = ? AND is_active = 1 AND is_superuser = 1`, id).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: user %d: %w", id, err)
	}
	return n > 0, nil
}

// keepSuperuser fails the transaction when no active superuser is left.
func keepSuperuser(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE is_active = 1 AND is_superuser = 1`).Scan(&n); err != nil {
		return fmt.Errorf("store: count superusers: %w", err)
	}
	if n == 0 {
		return ErrLastSuperuser
	}
	return nil
}

// Group is a users.group.
type Group struct {
	ID                   int64
	Name                 string
	UserCount            int
	Created, LastUpdated time.Time
}

// Groups loads groups by id, with their member counts.
func (db *DB) Groups(ctx context.Context, ids []int64) ([]Group, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT g.id, g.name, g.created, g.last_updated,
		(SELECT count(*) FROM user_groups ug WHERE ug.group_id = g.id)
		FROM groups g WHERE g.id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: groups: %w", err)
	}
	defer rows.Close()
	var out []Group
	for rows.Next() {
		var g Group
		var c, u string
		if err := rows.Scan(&g.ID, &g.Name, &c, &u, &g.UserCount); err != nil {
			return nil, err
		}
		g.Created, g.LastUpdated = ParseStamp(c), ParseStamp(u)
		out = append(out, g)
	}
	return out, rows.Err()
}

// UpdateGroup renames a group (nil leaves the name); the result must stay within guard.
func (db *DB) UpdateGroup(ctx context.Context, id int64, name *string, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		set.Str("name", name)
		if err := set.Apply(ctx, tx, "groups", id, db.now()); err != nil {
			return constraintErr(err, "group")
		}
		return CheckScope(ctx, tx, TypeGroup, id, guard)
	})
}

// DeleteGroup deletes a group; its members and permissions lose the link.
func (db *DB) DeleteGroup(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "groups", id)
}

// Token is a users.token; the key itself is never stored, only its hash and prefix.
type Token struct {
	ID                   int64
	User                 UserRef
	KeyPrefix            string
	Description          string
	WriteEnabled         bool
	Expires, LastUsed    time.Time // zero = never
	Created, LastUpdated time.Time
}

// Tokens loads tokens by id, with their users.
func (db *DB) Tokens(ctx context.Context, ids []int64) ([]Token, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT t.id, u.id, u.username, t.key_prefix, t.description, t.write_enabled,
		t.expires, t.last_used, t.created, t.last_updated
		FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		var t Token
		var exp, used sql.NullString
		var c, u string
		if err := rows.Scan(&t.ID, &t.User.ID, &t.User.Username, &t.KeyPrefix, &t.Description, &t.WriteEnabled,
			&exp, &used, &c, &u); err != nil {
			return nil, err
		}
		t.Expires, t.LastUsed = ParseStamp(exp.String), ParseStamp(used.String)
		t.Created, t.LastUpdated = ParseStamp(c), ParseStamp(u)
		out = append(out, t)
	}
	return out, rows.Err()
}

// TokenUpdate is a partial update of a token; nil fields are left as they are.
type TokenUpdate struct {
	UserID       *int64
	Description  *string
	WriteEnabled *bool
	Expires      *time.Time // a zero time clears the expiry
}

// UpdateToken changes the fields set in in; the result must stay within guard.
func (db *DB) UpdateToken(ctx context.Context, id int64, in TokenUpdate, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		if in.UserID != nil {
			set.Val("user_id", *in.UserID)
		}
		set.Str("description", in.Description)
		if in.WriteEnabled != nil {
			set.Val("write_enabled", *in.WriteEnabled)
		}
		if in.Expires != nil {
			var v any
			if !in.Expires.IsZero() {
				v = Stamp(*in.Expires)
			}
			set.Val("expires", v)
		}
		if err := set.Apply(ctx, tx, "tokens", id, db.now()); err != nil {
			return constraintErr(err, "token")
		}
		return CheckScope(ctx, tx, TypeToken, id, guard)
	})
}

// DeleteToken deletes a token; requests using it fail from then on.
func (db *DB) DeleteToken(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "tokens", id)
}
