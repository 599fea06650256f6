package store

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Grant is everything a user may do: each (object type, action) held, with the
// constraints under which it is held. It answers whether one grant covers another, so
// that a write that hands out permissions or credentials can be held to "the grant after
// the write stays within the writer's".
//
// Constraints are compared as written, conservatively: a held action covers another
// when it is held unconstrained, or when every alternative of the other (each object of
// a list) contains all the lookups of one held alternative with the same values — the
// same condition, or it and more (narrower). Lookups that would select the same rows
// under other spellings are not recognised, so such a write is refused. "$user" stands
// for whoever holds the permission; an identical lookup on "$user" is the same power
// over one's own objects, and is covered.
type Grant struct {
	Superuser bool
	held      map[grantKey]*heldAction
}

type grantKey struct{ objectType, action string }

// heldAction is one (object type, action): unconstrained, or any of the alternatives.
type heldAction struct {
	all  bool
	alts []map[string]any
}

// GrantOf loads the grant of a user as it would be with the given groups (a write may
// be about to change them): the enabled permissions assigned to the user or to any of
// the groups. userID 0 is a user not yet created.
func (db *DB) GrantOf(ctx context.Context, userID int64, groupIDs []int64, superuser bool) (Grant, error) {
	g := Grant{Superuser: superuser, held: map[grantKey]*heldAction{}}
	if superuser {
		return g, nil
	}
	groupCond := "0"
	args := []any{userID}
	if len(groupIDs) > 0 {
		groupCond = "EXISTS (SELECT 1 FROM permission_groups pg WHERE pg.permission_id = p.id AND pg.group_id IN (" +
			placeholders(len(groupIDs)) + "))"
		args = append(args, int64Args(groupIDs)...)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT p.object_types, p.actions, p.constraints FROM object_permissions p
		WHERE p.enabled = 1 AND (EXISTS (SELECT 1 FROM permission_users pu WHERE pu.permission_id = p.id AND pu.user_id = ?)
		OR `+groupCond+`)`, args...)
	if err != nil {
		return g, fmt.Errorf("store: grant of user %d: %w", userID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var types, actions string
		var constraints *string
		if err := rows.Scan(&types, &actions, &constraints); err != nil {
			return g, fmt.Errorf("store: grant of user %d: %w", userID, err)
		}
		var ts, as []string
		_ = json.Unmarshal([]byte(types), &ts)
		_ = json.Unmarshal([]byte(actions), &as)
		var c any
		if constraints != nil {
			_ = json.Unmarshal([]byte(*constraints), &c)
		}
		g.add(ts, as, c)
	}
	return g, rows.Err()
}

// add records a permission's object types × actions under its constraints.
func (g Grant) add(types, actions []string, constraints any) {
	all, alts := alternatives(constraints)
	for _, t := range types {
		for _, a := range actions {
			k := grantKey{t, a}
			h := g.held[k]
			if h == nil {
				h = &heldAction{}
				g.held[k] = h
			}
			h.all = h.all || all
			h.alts = append(h.alts, alts...)
		}
	}
}

// alternatives splits constraints into the objects any of which may hold; all is true
// when they restrict nothing (null, {}, [], or a list holding {}).
func alternatives(c any) (all bool, alts []map[string]any) {
	switch x := c.(type) {
	case nil:
		return true, nil
	case map[string]any:
		return len(x) == 0, []map[string]any{x}
	case []any:
		if len(x) == 0 {
			return true, nil
		}
		for _, it := range x {
			m, ok := it.(map[string]any)
			if !ok {
				continue // a malformed alternative grants nothing
			}
			if len(m) == 0 {
				return true, nil
			}
			alts = append(alts, m)
		}
	}
	return false, alts
}

// Holds reports whether the grant holds the action on the object type at all.
func (g Grant) Holds(objectType, action string) bool {
	_, ok := g.held[grantKey{objectType, action}]
	return g.Superuser || ok
}

// CoversPermission reports whether a permission of these object types, actions and
// constraints grants nothing beyond g.
func (g Grant) CoversPermission(types, actions []string, constraints any) bool {
	if g.Superuser {
		return true
	}
	all, alts := alternatives(constraints)
	for _, t := range types {
		for _, a := range actions {
			if !g.covers(grantKey{t, a}, all, alts) {
				return false
			}
		}
	}
	return true
}

// Covers reports whether o grants nothing beyond g.
func (g Grant) Covers(o Grant) bool {
	if g.Superuser {
		return true
	}
	if o.Superuser {
		return false
	}
	for k, h := range o.held {
		if !g.covers(k, h.all, h.alts) {
			return false
		}
	}
	return true
}

// covers reports whether g holds k for every row the alternatives (or all) select.
func (g Grant) covers(k grantKey, all bool, alts []map[string]any) bool {
	h := g.held[k]
	switch {
	case h == nil:
		return false
	case h.all:
		return true
	case all:
		return false
	}
	for _, alt := range alts {
		if !narrowerThanAny(alt, h.alts) {
			return false
		}
	}
	return true
}

// narrowerThanAny reports whether alt holds every lookup of one of held, with the same
// value: it selects the same rows or fewer.
func narrowerThanAny(alt map[string]any, held []map[string]any) bool {
	for _, h := range held {
		ok := true
		for k, v := range h {
			if w, has := alt[k]; !has || !reflect.DeepEqual(v, w) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// NamesUser reports whether the grant's constraints on the action explicitly name a
// user, by id or username, in a lookup on the object's "user" (a token's owner): the
// explicit delegation that lets someone act for that user. "$user" names only the
// holder and counts for nobody else.
func (g Grant) NamesUser(objectType, action string, userID int64, username string) bool {
	h := g.held[grantKey{objectType, action}]
	if h == nil {
		return false
	}
	for _, alt := range h.alts {
		for key, v := range alt {
			parts, lookup := ParseLookup(key)
			if lookup != "exact" && lookup != "in" {
				continue
			}
			var want any
			switch strings.TrimSuffix(strings.Join(parts, "__"), "__id") {
			case "user", "user_id":
				want = float64(userID)
			case "user__username":
				want = username
			default:
				continue
			}
			vals, isList := v.([]any)
			if !isList {
				vals = []any{v}
			}
			for _, x := range vals {
				if reflect.DeepEqual(x, want) {
					return true
				}
			}
		}
	}
	return false
}
