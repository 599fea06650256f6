package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Principal is the user a request acts for.
type Principal struct {
	ID           int64
	Username     string
	IsSuperuser  bool
	IsActive     bool
	GroupIDs     []int64
	WriteEnabled bool // false for a read-only token
}

// ErrTokenExpired is returned by Authenticate for a token past its expiry.
var ErrTokenExpired = errors.New("token expired")

// ErrInactive is returned by Authenticate when the token's user is inactive.
var ErrInactive = errors.New("user inactive")

// HashKey is how API keys, session ids and credential tokens are stored: SHA-256, hex.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// NewTokenKey makes a NetBox-style API key: 40 random hex characters.
func NewTokenKey() string {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

// lastUsedEvery bounds how often a token's last_used is written: a write per request
// would serialise every reader behind the one writer.
const lastUsedEvery = time.Minute

// tokenEntry is what Authenticate reads of a token and its user.
type tokenEntry struct {
	tokenID  int64
	p        Principal // IsActive as stored; WriteEnabled the token's
	expires  time.Time // zero: never
	lastUsed time.Time
}

// Authenticate finds the principal of an API key. The lookup is by hash, so the
// comparison never touches the key itself. The token and its user may come from the
// check cache (cache.go); the expiry is checked against the clock on every call.
func (db *DB) Authenticate(ctx context.Context, key string) (Principal, error) {
	hash := HashKey(key)
	t, err := cached(ctx, db, "token\x00"+hash, func() (tokenEntry, error) { return db.loadToken(ctx, hash) })
	if err != nil {
		return Principal{}, err
	}
	now := db.now()
	if !t.expires.IsZero() && t.expires.Before(now) {
		return Principal{}, ErrTokenExpired
	}
	if !t.p.IsActive {
		return Principal{}, ErrInactive
	}
	if !db.touched(fmt.Sprint("token\x00", t.tokenID), t.lastUsed, now) {
		if _, err := db.execer(ctx).ExecContext(ctx, `UPDATE tokens SET last_used = ? WHERE id = ?`, Stamp(now), t.tokenID); err != nil {
			return Principal{}, fmt.Errorf("store: token last_used: %w", err)
		}
	}
	p := t.p
	p.GroupIDs = slices.Clip(p.GroupIDs)
	return p, nil
}

func (db *DB) loadToken(ctx context.Context, hash string) (tokenEntry, error) {
	var t tokenEntry
	var expires, lastUsed sql.NullString
	var write, active, super int
	err := db.r.QueryRowContext(ctx, `
		SELECT t.id, t.write_enabled, t.expires, t.last_used, u.id, u.username, u.is_active, u.is_superuser
		FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.key_hash = ?`, hash).
		Scan(&t.tokenID, &write, &expires, &lastUsed, &t.p.ID, &t.p.Username, &active, &super)
	if errors.Is(err, sql.ErrNoRows) {
		return tokenEntry{}, fmt.Errorf("token: %w", ErrNotFound)
	}
	if err != nil {
		return tokenEntry{}, fmt.Errorf("store: authenticate: %w", err)
	}
	t.expires, t.lastUsed = ParseStamp(expires.String), ParseStamp(lastUsed.String)
	t.p.IsActive, t.p.IsSuperuser, t.p.WriteEnabled = active == 1, super == 1, write == 1
	if t.p.GroupIDs, err = db.userGroups(ctx, t.p.ID); err != nil {
		return tokenEntry{}, err
	}
	return t, nil
}

// PrincipalByID loads a user as a principal (sessions, the CLI).
func (db *DB) PrincipalByID(ctx context.Context, id int64) (Principal, error) {
	p, err := cached(ctx, db, fmt.Sprint("user\x00", id), func() (Principal, error) { return db.loadPrincipal(ctx, id) })
	p.GroupIDs = slices.Clip(p.GroupIDs)
	return p, err
}

func (db *DB) loadPrincipal(ctx context.Context, id int64) (Principal, error) {
	var p Principal
	var active, super int
	err := db.r.QueryRowContext(ctx, `SELECT id, username, is_active, is_superuser FROM users WHERE id = ?`, id).
		Scan(&p.ID, &p.Username, &active, &super)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Principal{}, fmt.Errorf("store: user %d: %w", id, err)
	}
	if active == 0 {
		return Principal{}, ErrInactive
	}
	p.IsActive, p.IsSuperuser, p.WriteEnabled = true, super == 1, true
	p.GroupIDs, err = db.userGroups(ctx, p.ID)
	return p, err
}

func (db *DB) userGroups(ctx context.Context, userID int64) ([]int64, error) {
	ids, err := scalars[int64](ctx, db.r, `SELECT group_id FROM user_groups WHERE user_id = ? ORDER BY group_id`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: user groups: %w", err)
	}
	return ids, nil
}
