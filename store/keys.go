package store

import (
	"context"
	"fmt"
	"strings"
)

// Keys loads the id and the named stored fields of every row of a model (a reference
// as the referenced id), for callers that match rows by what identifies them to a
// person: an import finds a site by its slug, a device by its site and name.
func (db *DB) Keys(ctx context.Context, m *Model, fields ...string) ([]Row, error) {
	cols := []string{"t.id"}
	fs := []*Field{{Name: "id", Kind: KindInt}}
	for _, name := range fields {
		f, ok := m.Field(name)
		if !ok || !f.stored() {
			return nil, fmt.Errorf("store: keys: %s has no stored field %q", m.Type, name)
		}
		cols, fs = append(cols, "t."+f.Column), append(fs, f)
	}
	rows, err := db.reader(ctx).QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+m.Table+" t")
	if err != nil {
		return nil, fmt.Errorf("store: keys %s: %w", m.Table, err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		dest := make([]any, len(fs))
		for i := range dest {
			dest[i] = new(any)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: keys %s: %w", m.Table, err)
		}
		r := Row{}
		for i, f := range fs {
			r[f.Name] = fromColumn(f, *dest[i].(*any))
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
