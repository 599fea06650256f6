package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// Objects a NetBox sync brought are NetBox's: written here, a change would be undone by
// the next sync, so every write but the sync's own is refused — except to the fields
// FieldKit keeps for itself (Field.Local: a platform's SSH driver, a device's
// timeouts).

type syncKey struct{}

// Syncing marks ctx as a NetBox sync's: its writes may change objects that come from
// NetBox.
func Syncing(ctx context.Context) context.Context { return context.WithValue(ctx, syncKey{}, true) }

func syncing(ctx context.Context) bool { b, _ := ctx.Value(syncKey{}).(bool); return b }

// fromNetBox refuses a write (v, or nil for a delete) to an object that came from
// NetBox, unless the sync makes it or it only sets FieldKit's own fields.
func fromNetBox(ctx context.Context, tx *sql.Tx, m *Model, id int64, v Values) error {
	if _, ok := m.Field("netbox_id"); !ok || syncing(ctx) || (v != nil && onlyLocal(m, v)) {
		return nil
	}
	var nb sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT netbox_id FROM `+m.Table+` WHERE id = ?`, id).Scan(&nb)
	if errors.Is(err, sql.ErrNoRows) || !nb.Valid {
		return nil // a missing row is the write's own ErrNotFound
	}
	if err != nil {
		return err
	}
	what := strings.ToLower(m.Name)
	if m.Type == TypeIPAddress {
		what = "IP address"
	}
	verb := "change"
	if v == nil {
		verb = "delete"
	}
	return &FieldError{Field: "non_field_errors", Err: problemf(
		"This %s comes from NetBox (NetBox id %d): %s it there, and the next sync brings the change here.", what, nb.Int64, verb)}
}

// onlyLocal reports whether a write sets only FieldKit's own fields.
func onlyLocal(m *Model, v Values) bool {
	for name := range v {
		if f, ok := m.Field(name); !ok || !f.Local {
			return false
		}
	}
	return true
}
