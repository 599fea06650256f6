package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// The small SQL helpers every table's code shares.

func (db *DB) deleteRow(ctx context.Context, table string, id int64) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ?`, id)
		if err != nil {
			return constraintErr(err, fmt.Sprintf("%s %d", table, id))
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%s %d: %w", table, id, ErrNotFound)
		}
		return nil
	})
}

// Set collects the columns of a partial update.
type Set struct {
	cols []string
	args []any
}

// Str sets a text column when v is not nil.
func (s *Set) Str(col string, v *string) {
	if v != nil {
		s.Val(col, *v)
	}
}

// Val sets a column to a value unconditionally.
func (s *Set) Val(col string, v any) {
	s.cols = append(s.cols, col+" = ?")
	s.args = append(s.args, v)
}

// Apply runs the UPDATE (touching last_updated); a missing row is ErrNotFound.
func (s *Set) Apply(ctx context.Context, tx *sql.Tx, table string, id int64, now time.Time) error {
	cols := append(s.cols, "last_updated = ?")
	args := append(s.args, Stamp(now), id)
	res, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+strings.Join(cols, ", ")+` WHERE id = ?`, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s %d: %w", table, id, ErrNotFound)
	}
	return nil
}

// scalars is the one column of every row query returns.
func scalars[T any](ctx context.Context, q querier, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func placeholders(n int) string {
	if n == 0 {
		return "NULL"
	}
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// setLinks replaces the rows of a link table for one owner.
func setLinks(ctx context.Context, tx *sql.Tx, table, local, remote string, id int64, ids []int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE `+local+` = ?`, id); err != nil {
		return err
	}
	for _, r := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (`+local+`, `+remote+`) VALUES (?, ?)`, id, r); err != nil {
			return err
		}
	}
	return nil
}

// links loads a link table for many owners at once: owner id → related ids in order.
func (db *DB) links(ctx context.Context, table, local, remote string, ids []int64) (map[int64][]int64, error) {
	return grouped(ctx, db, table, []string{local, remote}, table+` WHERE `+local+` IN (`+placeholders(len(ids))+`)`,
		local+`, `+remote, int64Args(ids), func(id *int64) []any { return []any{id} })
}

// grouped reads cols FROM from in the order orderBy gives; the first column is an owner
// id, and each row's other columns, assigned through fields (pointers to int64, float64,
// bool, string or any), are collected under its owner in that order. It is how a page of
// objects loads its related rows (platforms, groups, VLANs…) in one query.
func grouped[T any](ctx context.Context, db *DB, what string, cols []string, from, orderBy string, args []any,
	fields func(*T) []any) (map[int64][]T, error) {
	rows, err := db.reader(ctx).QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+from+" ORDER BY "+orderBy, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	defer rows.Close()
	out := map[int64][]T{}
	for rows.Next() {
		var owner int64
		var v T
		if err := rows.Scan(append([]any{&owner}, fields(&v)...)...); err != nil {
			return nil, fmt.Errorf("store: %s: %w", what, err)
		}
		out[owner] = append(out[owner], v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return out, nil
}
