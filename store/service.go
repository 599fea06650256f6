package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Service credential sets are made for unattended use: the schedules that name them
// run with them, no person does (their token is never shown, and an execute request
// presenting it is refused as an unknown token). They are managed by whoever holds the
// service action on netbox_toolkit_plugin.devicecredentialset, within its constraints
// (within, below: a scope's condition on the sets, aliased t); the creator is kept as
// the set's owner, and deleting that user deletes the set (its schedules then pause).

// ActionService is the permission action to make, change and delete service credential
// sets and to attach them to schedules.
const ActionService = "service"

// CreateServiceCredentialSet stores a service set made by creator, which must fall
// within a scope (the creator's service action's constraints); ErrForbidden otherwise.
func (db *DB) CreateServiceCredentialSet(ctx context.Context, kr *Keyring, creator int64, in CredentialInput, within Expr) (int64, error) {
	in.Service = true
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		var err error
		if id, _, err = db.createSet(ctx, tx, kr, creator, in); err != nil {
			return err
		}
		if err := serviceIn(ctx, tx, id, within); errors.Is(err, ErrNotFound) {
			return fmt.Errorf("service credential set: %w", ErrForbidden)
		} else if err != nil {
			return err
		}
		return nil
	})
	return id, err
}

// ServiceCredentialSets lists the service sets within a scope, by name.
func (db *DB) ServiceCredentialSets(ctx context.Context, within Expr) ([]CredentialSet, error) {
	where, args := serviceWhere(within)
	return db.credentialSets(ctx, where, args...)
}

// ServiceCredentialSet loads one service set within a scope.
func (db *DB) ServiceCredentialSet(ctx context.Context, id int64, within Expr) (CredentialSet, error) {
	where, args := serviceWhere(within)
	sets, err := db.credentialSets(ctx, `t.id = ? AND `+where, append([]any{id}, args...)...)
	if err != nil {
		return CredentialSet{}, err
	}
	if len(sets) == 0 {
		return CredentialSet{}, fmt.Errorf("credential set %d: %w", id, ErrNotFound)
	}
	return sets[0], nil
}

// UpdateServiceCredentialSet changes a service set within a scope.
func (db *DB) UpdateServiceCredentialSet(ctx context.Context, kr *Keyring, id int64, in CredentialInput, within Expr) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		if err := serviceIn(ctx, tx, id, within); err != nil {
			return err
		}
		return db.updateSet(ctx, tx, kr, id, in)
	})
}

// DeleteServiceCredentialSet deletes a service set within a scope; the schedules naming
// it pause.
func (db *DB) DeleteServiceCredentialSet(ctx context.Context, id int64, within Expr) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		if err := serviceIn(ctx, tx, id, within); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM credential_sets WHERE id = ?`, id)
		return err
	})
}

// ServiceSecret loads a service set with its secrets, for a schedule's run; a set that
// is not a service set is ErrNotFound.
func (db *DB) ServiceSecret(ctx context.Context, kr *Keyring, id int64) (Secret, error) {
	var s Secret
	var pw, en, pk []byte
	var lastUsed sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT id, owner_id, name, is_active, version, username, enable_mode, password_enc,
		enable_secret_enc, private_key_enc, last_used FROM credential_sets WHERE id = ? AND service`, id).Scan(&s.SetID,
		&s.OwnerID, &s.Name, &s.IsActive, &s.Version, &s.Username, &s.EnableMode, &pw, &en, &pk, &lastUsed)
	if errors.Is(err, sql.ErrNoRows) {
		return Secret{}, fmt.Errorf("service credential set %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Secret{}, fmt.Errorf("store: service credential set %d: %w", id, err)
	}
	s.LastUsed = ParseStamp(lastUsed.String)
	return db.openSecret(ctx, kr, s, pw, en, pk)
}

// IsServiceSet reports whether a credential set is a service set (false when missing).
func (db *DB) IsServiceSet(ctx context.Context, id int64) (bool, error) {
	var service bool
	err := db.r.QueryRowContext(ctx, `SELECT service FROM credential_sets WHERE id = ?`, id).Scan(&service)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return service, err
}

func serviceWhere(within Expr) (string, []any) {
	if within.SQL == "" {
		return `t.service`, nil
	}
	return `t.service AND (` + within.SQL + `)`, within.Args
}

func serviceIn(ctx context.Context, tx *sql.Tx, id int64, within Expr) error {
	where, args := serviceWhere(within)
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM credential_sets t WHERE t.id = ? AND `+where,
		append([]any{id}, args...)...).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("credential set %d: %w", id, ErrNotFound)
	}
	return nil
}
