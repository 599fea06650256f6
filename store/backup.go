package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
)

// Backup writes a consistent copy of the live database to path (VACUUM INTO works
// while readers and the writer go on). The copy appears under path only once complete
// (WriteAtomic), 0600.
func (db *DB) Backup(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	err = WriteAtomic(abs, func(tmp string) error { return db.CopyInto(ctx, tmp) })
	if err != nil {
		return fmt.Errorf("store: backup to %s: %w", abs, err)
	}
	return nil
}

// CopyInto writes a consistent copy of the live database into path, which must be
// empty or absent; it is not atomic (Backup is). The caller removes path on failure.
// The copy is marked as one (MarkCopied): whoever opens it next starts a new hub epoch.
func (db *DB) CopyInto(ctx context.Context, path string) error {
	// A connection of its own that may write (the readers are query_only): VACUUM INTO
	// only reads the source, so in WAL mode writers go on while it copies.
	base := dsn(db.path, false)
	c, err := sql.Open("sqlite", base[:strings.Index(base, "?")]+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("store: copy: %w", err)
	}
	defer c.Close()
	// VACUUM INTO fills an existing empty file, keeping its mode.
	if _, err := c.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("store: copy: %w", err)
	}
	return MarkCopied(ctx, path)
}

// Counts are what a restore reports having brought back.
type Counts struct {
	Users, CredentialSets, CommandLogs int64
}

// Count counts the users, credential sets and command logs (every log: a restore
// reads it once, so it may take the log table's smallest index end to end).
func (db *DB) Count(ctx context.Context) (Counts, error) {
	var c Counts
	err := db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM credential_sets),
		(SELECT count(*) FROM command_logs)`).Scan(&c.Users, &c.CredentialSets, &c.CommandLogs)
	if err != nil {
		return c, fmt.Errorf("store: count: %w", err)
	}
	return c, nil
}

// CheckEveryCredentialSet decrypts every secret of every credential set with kr: after
// a restore, proof that the key brought back opens them all, not just the first
// (CheckKeyring, at every start). It returns how many sets it opened.
func (db *DB) CheckEveryCredentialSet(ctx context.Context, kr *Keyring) (int, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, password_enc, enable_secret_enc, private_key_enc FROM credential_sets ORDER BY id`)
	if err != nil {
		return 0, fmt.Errorf("store: check credential sets: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id int64
		var name string
		var pw, en, pk []byte
		if err := rows.Scan(&id, &name, &pw, &en, &pk); err != nil {
			return n, fmt.Errorf("store: check credential sets: %w", err)
		}
		for _, f := range []struct {
			col string
			v   []byte
		}{{"password_enc", pw}, {"enable_secret_enc", en}, {"private_key_enc", pk}} {
			if _, err := kr.open(id, f.col, f.v); err != nil {
				return n, fmt.Errorf("credential set %d (%q): %w", id, name, err)
			}
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("store: check credential sets: %w", err)
	}
	return n, nil
}
