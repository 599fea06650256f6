package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// MaxNotes is the most characters a log's notes may hold.
const MaxNotes = 1000

// SetLogNotes replaces the notes of log id, the one part of a log that may change
// after it was written, and returns the notes it had. last_updated moves with them;
// the word index follows the column by its trigger. A missing log is ErrNotFound.
func (db *DB) SetLogNotes(ctx context.Context, id int64, notes string) (string, error) {
	var old string
	err := db.Write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT notes FROM command_logs WHERE id = ?`, id).Scan(&old)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: command log %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: command log %d notes: %w", id, err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE command_logs SET notes = ?, last_updated = ? WHERE id = ?`, notes, Stamp(db.now()), id)
		if err != nil {
			return fmt.Errorf("store: command log %d notes: %w", id, err)
		}
		return nil
	})
	return old, err
}
