package store

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// Tokens is users.token: API keys, stored only as their hash. A key is shown once, in
// the response to its create; its first 8 characters stay to tell tokens apart.
var Tokens = declare(&Model{
	Type: TypeToken, Name: "Token", Table: "tokens", DefaultOrder: "-created", OwnerColumn: "user_id",
	Display: func(r Row) string { return fmt.Sprint(r["key_prefix"]) + "**********" },
	Fields: []Field{
		{Name: "user", Column: "user_id", Kind: KindInt, Rel: TypeUser, Sort: true,
			Doc: "Defaults to the requesting user. Another user's token needs a superuser, or a users.token permission " +
				"whose constraints name that user (user, user__id or user__username); never a superuser's unless the writer is one."},
		{Name: "description", Column: "description", Kind: KindString, MaxLen: 200, Filter: FilterLookups, Sort: true, Search: true},
		{Name: "expires", Column: "expires", Kind: KindTime, Null: true, Filter: FilterLookups, Sort: true,
			Doc: "Must be in the future; null = never."},
		{Name: "last_used", Column: "last_used", Kind: KindTime, Access: ReadOnly, Null: true, Filter: FilterLookups, Sort: true},
		{Name: "write_enabled", Column: "write_enabled", Kind: KindBool, Default: true, Filter: FilterExact, Sort: true,
			Label: "Write enabled", Doc: "False makes a read-only token: unsafe methods get 403."},
		{Name: "key", Kind: KindString, Access: CreateOnly, MaxLen: 40, Check: checkTokenKey,
			Doc: "40 hex characters; generated unless given. Returned only in the create response."},
		{Name: "key_hash", Column: "key_hash", Kind: KindString, Access: Internal, Secret: true},
		{Name: "key_prefix", Column: "key_prefix", Kind: KindString, Access: Internal},
	},
	Filters: map[string]Filter{
		"user_id": {Path: "user", Doc: "Owner's user id; repeat to match any."},
		"user":    {Path: "user__username", Doc: "Owner's username; repeat to match any."},
		"created": {Path: "created", Lookups: true},
	},
	Prepare: tokenKey,
})

var tokenKeyRE = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

func checkTokenKey(v any) (any, error) {
	if !tokenKeyRE.MatchString(v.(string)) {
		return nil, Problem("Enter exactly 40 hexadecimal characters.")
	}
	return v, nil
}

// tokenKey makes a new token's key (unless the write gave one) and stores only its
// hash and prefix; the key is left in v for the caller to show once.
func tokenKey(v Values, created bool) error {
	if !created {
		return nil
	}
	key, _ := v["key"].(string)
	if key == "" {
		key = NewTokenKey()
	}
	v["key"], v["key_hash"], v["key_prefix"] = key, HashKey(key), key[:min(8, len(key))]
	return nil
}

// TokenInput creates a token outside the API (the command line, tests).
type TokenInput struct {
	UserID       int64
	Description  string
	WriteEnabled bool
	Expires      time.Time // zero = never
	Key          string    // empty = generate
}

// CreateToken stores a new token and returns its id and key; the key is not kept.
func (db *DB) CreateToken(ctx context.Context, in TokenInput, guard Scope) (int64, string, error) {
	v := Values{"user": in.UserID, "description": in.Description, "write_enabled": in.WriteEnabled,
		"expires": in.Expires, "key": in.Key}
	id, err := db.Create(ctx, Tokens, v, guard)
	key, _ := v["key"].(string)
	return id, key, err
}
