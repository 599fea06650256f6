package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Scope is what a permission check yields: the condition rows must meet for the action.
// Granted is false when no permission names the action at all.
type Scope struct {
	Granted bool
	Expr    Expr
	// Problems lists constraints that grant nothing because they are malformed or name
	// unknown fields (fail closed); the caller logs them.
	Problems []string
}

// ErrForbidden is returned when a write would leave an object outside the writer's
// permitted scope.
var ErrForbidden = errors.New("forbidden")

// All is the scope of a superuser.
var All = Scope{Granted: true, Expr: True}

// Scope returns the rows of objectType the principal may perform action on.
func (db *DB) Scope(ctx context.Context, p Principal, objectType, action string) (Scope, error) {
	if p.IsSuperuser {
		return All, nil
	}
	m := models[objectType]
	if m == nil {
		return Scope{}, fmt.Errorf("store: scope: unknown object type %q", objectType)
	}
	s, err := cached(ctx, db, fmt.Sprint("scope\x00", p.ID, "\x00", objectType, "\x00", action), func() (Scope, error) {
		return db.loadScope(ctx, m, p.ID, objectType, action)
	})
	// A caller may append to what it gets; the cached slices must stay as they are.
	s.Expr.Args, s.Problems = slices.Clip(s.Expr.Args), slices.Clip(s.Problems)
	return s, err
}

// loadScope reads and compiles the enabled permissions granting action on objectType
// to the user, directly or through a group.
func (db *DB) loadScope(ctx context.Context, m *Model, userID int64, objectType, action string) (Scope, error) {
	rows, err := db.r.QueryContext(ctx, `
		SELECT p.id, p.name, p.constraints FROM object_permissions p
		WHERE p.enabled = 1
		  AND EXISTS (SELECT 1 FROM json_each(p.object_types) WHERE value = ?)
		  AND EXISTS (SELECT 1 FROM json_each(p.actions) WHERE value = ?)
		  AND (EXISTS (SELECT 1 FROM permission_users pu WHERE pu.permission_id = p.id AND pu.user_id = ?)
		    OR EXISTS (SELECT 1 FROM permission_groups pg JOIN user_groups ug ON ug.group_id = pg.group_id
		               WHERE pg.permission_id = p.id AND ug.user_id = ?))`,
		objectType, action, userID, userID)
	if err != nil {
		return Scope{}, fmt.Errorf("store: scope %s.%s: %w", objectType, action, err)
	}
	defer rows.Close()
	var s Scope
	var ors []Expr
	for rows.Next() {
		var id int64
		var name string
		var constraints *string
		if err := rows.Scan(&id, &name, &constraints); err != nil {
			return Scope{}, err
		}
		s.Granted = true
		if constraints == nil || strings.TrimSpace(*constraints) == "" || strings.TrimSpace(*constraints) == "null" {
			return All, rows.Err()
		}
		e, err := CompileConstraints(m, *constraints, userID)
		if err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("permission %d (%s): %v", id, name, err))
			continue
		}
		ors = append(ors, e)
	}
	if err := rows.Err(); err != nil {
		return Scope{}, err
	}
	s.Expr = Or(ors...)
	return s, nil
}

// CompileConstraints turns a permission's constraint JSON into a condition: an object
// means every lookup must hold, a list of objects means any of them may. "$user" stands
// for the requesting user's id. An empty object or list grants everything.
func CompileConstraints(m *Model, raw string, userID int64) (Expr, error) {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return Expr{}, fmt.Errorf("constraints are not valid JSON: %w", err)
	}
	switch x := v.(type) {
	case map[string]any:
		return compileConstraintSet(m, x, userID)
	case []any:
		if len(x) == 0 {
			return True, nil
		}
		var ors []Expr
		for _, item := range x {
			obj, ok := item.(map[string]any)
			if !ok {
				return Expr{}, errors.New("constraints list must hold objects")
			}
			e, err := compileConstraintSet(m, obj, userID)
			if err != nil {
				return Expr{}, err
			}
			ors = append(ors, e)
		}
		return Or(ors...), nil
	case nil:
		return True, nil
	}
	return Expr{}, errors.New("constraints must be an object or a list of objects")
}

// ValidateConstraints checks constraint JSON against every object type it would apply to.
func ValidateConstraints(objectTypes []string, raw string) error {
	for _, t := range objectTypes {
		m := models[t]
		if m == nil {
			continue
		}
		if _, err := CompileConstraints(m, raw, 0); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	return nil
}

func compileConstraintSet(m *Model, obj map[string]any, userID int64) (Expr, error) {
	var ands []Expr
	for key, val := range obj {
		path, lookup := ParseLookup(key)
		var vals []any
		switch x := val.(type) {
		case []any:
			if lookup != "in" && lookup != "n" && lookup != "exact" {
				return Expr{}, fmt.Errorf("%s: a list is only allowed with in or n", key)
			}
			vals = x
			if lookup == "exact" {
				lookup = "in"
			}
		default:
			vals = []any{val}
		}
		for i, v := range vals {
			if s, ok := v.(string); ok && s == "$user" {
				vals[i] = userID
			}
		}
		e, err := m.Compile(Cond{Path: path, Lookup: lookup, Values: vals})
		if err != nil {
			return Expr{}, fmt.Errorf("%s: %w", key, err)
		}
		ands = append(ands, e)
	}
	return And(ands...), nil
}

// CheckScope is run inside a write to make sure the written row is still within the
// writer's scope; outside it the write is refused with ErrForbidden.
func CheckScope(ctx context.Context, q rowQueryer, model string, id int64, s Scope) error {
	if !s.Granted {
		return ErrForbidden
	}
	if s.Expr.SQL == True.SQL {
		return nil
	}
	ok, err := exists(ctx, q, model, id, s.Expr)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s %d: %w", model, id, ErrForbidden)
	}
	return nil
}
