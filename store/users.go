package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// Users is users.user: who may log in and call the API. A password is stored only as
// its bcrypt hash; at least one active superuser always remains.
var Users = declare(&Model{
	Type: TypeUser, Name: "User", Table: "users", DefaultOrder: "username",
	Fields: []Field{
		{Name: "username", Column: "username", Kind: KindString, Required: true, MaxLen: 150, Check: checkUsername, Nested: true,
			Filter: FilterLookups, Sort: true, Search: true, Doc: "Letters, digits and @/./+/-/_ only."},
		{Name: "password", Kind: KindString, Access: WriteOnly, Required: true, Check: checkPassword,
			Doc: "At most 72 bytes; stored as a bcrypt hash, never returned."},
		{Name: "password_hash", Column: "password_hash", Kind: KindString, Access: Internal, Secret: true},
		{Name: "first_name", Column: "first_name", Kind: KindString, MaxLen: 150, Filter: FilterLookups, Sort: true, Search: true},
		{Name: "last_name", Column: "last_name", Kind: KindString, MaxLen: 150, Filter: FilterLookups, Sort: true, Search: true},
		{Name: "email", Column: "email", Kind: KindString, MaxLen: 254, Check: checkEmail, Filter: FilterLookups, Sort: true,
			Search: true, Label: "E-mail"},
		{Name: "is_active", Column: "is_active", Kind: KindBool, Default: true, Filter: FilterExact, Sort: true,
			Label: "Active (may log in)", Doc: "Inactive users' tokens and sessions are refused."},
		{Name: "is_superuser", Column: "is_superuser", Kind: KindBool, Filter: FilterExact, Sort: true,
			Label: "Superuser", Doc: "Passes every permission check; only a superuser may set it."},
		{Name: "groups", Kind: KindInt, Rel: TypeGroup, Join: &Join{"user_groups", "user_id", "group_id"}},
		{Name: "date_joined", Column: "date_joined", Kind: KindTime, Access: ReadOnly, Default: Now, Filter: FilterLookups, Sort: true},
		{Name: "last_login", Column: "last_login", Kind: KindTime, Access: ReadOnly, Null: true, Filter: FilterLookups, Sort: true},
	},
	Filters: map[string]Filter{
		"group_id": {Path: "groups", Doc: "Group id; repeat to match any."},
		"group":    {Path: "groups__name", Doc: "Group name; repeat to match any."},
	},
	Prepare: hashPassword,
	Write: func(ctx context.Context, tx *sql.Tx, id int64, v Values, old Row) error {
		if err := endSessions(ctx, tx, id, v); err != nil {
			return err
		}
		return keepSuperuser(ctx, tx, old)
	},
	Deleted: func(ctx context.Context, tx *sql.Tx, old Row) error {
		if err := keepSuperuser(ctx, tx, old); err != nil {
			return err
		}
		return logKeyGone(ctx, tx, "user_key", old.ID())
	},
})

// endSessions ends every web session of a user whose password changed or who was
// deactivated: whoever held one of them (a stolen cookie, a shared browser) no longer
// passes for the user. API tokens stay: they are credentials of their own, refused
// anyway while the user is inactive.
func endSessions(ctx context.Context, tx *sql.Tx, id int64, v Values) error {
	pw, _ := v["password"].(string)
	if active, ok := v["is_active"].(bool); pw == "" && (!ok || active) {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, id); err != nil {
		return fmt.Errorf("store: end sessions of user %d: %w", id, err)
	}
	return nil
}

// ErrLastSuperuser is returned when a write would leave no active superuser, which
// would lock everyone out of the permission system.
var ErrLastSuperuser = errors.New("last active superuser")

// ErrDeleteSelf is returned when a user tries to delete their own account.
var ErrDeleteSelf = errors.New("cannot delete yourself")

var usernameRE = regexp.MustCompile(`^[\pL\pN@.+_-]+$`)

func checkUsername(v any) (any, error) {
	if !usernameRE.MatchString(v.(string)) {
		return nil, Problem("Enter a valid username: letters, numbers and @/./+/-/_ characters only.")
	}
	return v, nil
}

// checkPassword counts bytes: bcrypt reads only the first 72.
func checkPassword(v any) (any, error) {
	if len(v.(string)) > 72 {
		return nil, Problem("Ensure this field has no more than 72 bytes.")
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

// hashPassword stores a written password as its hash.
func hashPassword(v Values, _ bool) error {
	pw, ok := v["password"].(string)
	if !ok || pw == "" {
		return nil
	}
	hash, err := HashPassword(pw)
	v["password_hash"] = hash
	return err
}

// HashPassword hashes a password for storage.
func HashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("store: hash password: %w", err)
	}
	return string(h), nil
}

// keepSuperuser refuses a write or delete that took away the last active superuser:
// old is the user before it (nil for a new one).
func keepSuperuser(ctx context.Context, tx *sql.Tx, old Row) error {
	if old == nil || old["is_active"] != true || old["is_superuser"] != true {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE is_active = 1 AND is_superuser = 1`).Scan(&n); err != nil {
		return fmt.Errorf("store: count superusers: %w", err)
	}
	if n == 0 {
		return ErrLastSuperuser
	}
	return nil
}

// UserInput creates or partially updates a user outside the API (the command line,
// tests); nil fields are left as they are.
type UserInput struct {
	Username, FirstName, LastName, Email *string
	Password                             *string // clear text in, bcrypt hash stored
	IsActive, IsSuperuser                *bool
	Groups                               *[]int64
}

func (in UserInput) values() Values {
	v := Values{}
	put(v, "username", in.Username)
	put(v, "first_name", in.FirstName)
	put(v, "last_name", in.LastName)
	put(v, "email", in.Email)
	put(v, "password", in.Password)
	put(v, "is_active", in.IsActive)
	put(v, "is_superuser", in.IsSuperuser)
	put(v, "groups", in.Groups)
	return v
}

// put sets a field of a write when p is not nil.
func put[T any](v Values, name string, p *T) {
	if p != nil {
		v[name] = *p
	}
}

// CreateUser inserts a user that must fall within guard.
func (db *DB) CreateUser(ctx context.Context, in UserInput, guard Scope) (int64, error) {
	return db.Create(ctx, Users, in.values(), guard)
}

// UpdateUser changes the fields set in in; the result must stay within guard.
func (db *DB) UpdateUser(ctx context.Context, id int64, in UserInput, guard Scope) error {
	return db.Update(ctx, Users, id, in.values(), guard)
}

// SetPassword replaces a user's password.
func (db *DB) SetPassword(ctx context.Context, userID int64, password string) error {
	return db.Update(ctx, Users, userID, Values{"password": password}, All)
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

// HasUsers reports whether any user exists: an empty install has none until the first
// is created on the command line.
func (db *DB) HasUsers(ctx context.Context) (bool, error) {
	var exists bool
	if err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users)`).Scan(&exists); err != nil {
		return false, fmt.Errorf("store: users exist: %w", err)
	}
	return exists, nil
}

// Contact is how to reach a user: whom a user without permissions can ask for them.
type Contact struct {
	Username, Name, Email string
}

// Administrators lists the active superusers (at most limit, by username): the people
// who can grant permissions.
func (db *DB) Administrators(ctx context.Context, limit int) ([]Contact, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT username, trim(first_name || ' ' || last_name), email FROM users
		WHERE is_superuser = 1 AND is_active = 1 ORDER BY username LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: administrators: %w", err)
	}
	defer rows.Close()
	var out []Contact
	for rows.Next() {
		var c Contact
		if err := rows.Scan(&c.Username, &c.Name, &c.Email); err != nil {
			return nil, fmt.Errorf("store: administrators: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
