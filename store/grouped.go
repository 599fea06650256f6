package store

import (
	"context"
	"fmt"
)

// grouped runs a query whose first column is an owner id and collects each row's other
// columns, scanned through fields, under its owner, in the query's order. It is how a
// page of objects loads its related rows (platforms, groups, VLANs…) in one query.
func grouped[T any](ctx context.Context, db *DB, what, query string, args []any, fields func(*T) []any) (map[int64][]T, error) {
	rows, err := db.reader(ctx).QueryContext(ctx, query, args...)
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
	return out, rows.Err()
}
