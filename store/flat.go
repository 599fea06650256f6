package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"slices"
)

// Flat is a page of objects loaded without a map per object: object i's values are
// Vals[i*len(Fields):(i+1)*len(Fields)], each as a Row would hold it, except that a
// kept reference is its id (Kept gives the Row). A list page of logs is written from
// it; building, filling and reading a map per log cost as much as SQLite's work.
type Flat struct {
	Fields  []*Field
	Vals    []any
	Display []string // each object's "display"
	index   map[string]int
}

// Len is the number of objects.
func (fl *Flat) Len() int { return len(fl.Display) }

// Row is object i's values, by position in Fields.
func (fl *Flat) Row(i int) []any { n := len(fl.Fields); return fl.Vals[i*n : (i+1)*n] }

// Col is the position of a field in Fields, or -1 when it was not loaded.
func (fl *Flat) Col(name string) int {
	if i, ok := fl.index[name]; ok {
		return i
	}
	return -1
}

// ID is object i's id.
func (fl *Flat) ID(i int) int64 { id, _ := fl.Row(i)[fl.index["id"]].(int64); return id }

// Kept is object i's kept reference f (see Field.KeptName): the object's id (nil once
// it is gone) and its kept name, which Rows loads as the Row {"id": id, f.KeptKey():
// name, "display": name}; false for a Null field whose object is gone (Rows: nil).
func (fl *Flat) Kept(i int, f *Field) (id, name any, ok bool) {
	row := fl.Row(i)
	id, name = row[fl.Col(f.Name)], row[fl.Col(f.KeptName)]
	return id, name, id != nil || !f.Null
}

// Flattens reports whether the model's objects load as a Flat: each readable field is
// a column or a kept reference (nothing loaded from another table, nothing computed
// from the row), and Display names the fields it reads.
func (m *Model) Flattens() bool {
	if m.Owner != "" || (m.Display != nil && m.DisplayFields == nil) {
		return false
	}
	for _, f := range m.Fields {
		if !f.Readable() || f.KeptName != "" {
			continue
		}
		if f.Compute != nil || f.Join != nil || f.Child != nil || f.Rel != "" || !(f.stored() || f.Select != "") {
			return false
		}
	}
	return true
}

// FlatRowsLeaving loads the objects of a model that Flattens by id, in the order of
// ids (an id no longer found is left out), with what RowsLeaving would load of them,
// except the fields leave names (leave may be nil): the caller does not show those, so
// they are not read, Lazy or not, unless the id, the display or a kept reference the
// caller shows needs them.
func (db *DB) FlatRowsLeaving(ctx context.Context, m *Model, ids []int64, leave func(name string) bool) (*Flat, error) {
	if !m.Flattens() {
		return nil, fmt.Errorf("store: %s does not load flat", m.Type)
	}
	fields, cols := loadedColumns(m, flatLeaves(m, leave), true)
	fl := &Flat{Fields: fields, index: make(map[string]int, len(fields))}
	for i, f := range fields {
		fl.index[f.Name] = i
	}
	if len(ids) == 0 {
		return fl, nil
	}
	n := len(fields)
	vals := make([]any, len(ids)*n)
	idCol := fl.index["id"]
	pos := make(map[int64]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	found := make([]bool, len(ids))
	err := readRows(ctx, db.reader(ctx), cols, m.Table+" t WHERE t.id IN ("+placeholders(len(ids))+")", "",
		int64Args(ids), func(got []driver.Value) error {
			id, _ := got[idCol].(int64)
			at, ok := pos[id]
			if !ok || found[at] {
				return nil
			}
			found[at] = true
			row := vals[at*n : (at+1)*n]
			for i, f := range fields {
				row[i] = fromColumn(f, got[i])
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", m.Table, err)
	}
	// a row deleted between the page's ids and this load: close the gap
	kept := 0
	for at := range ids {
		if found[at] {
			copy(vals[kept*n:(kept+1)*n], vals[at*n:(at+1)*n])
			kept++
		}
	}
	fl.Vals = vals[:kept*n]
	fl.Display = make([]string, kept)
	show := Row{}
	for i := range kept {
		fl.Display[i] = fl.display(m, fl.Row(i), show)
	}
	return fl, nil
}

// flatLeaves is leave for every field, less the fields the shown ones need: the id,
// what the display reads, and the kept names of the kept references not left out.
func flatLeaves(m *Model, leave func(string) bool) func(string) bool {
	if leave == nil {
		return nil
	}
	need := map[string]bool{"id": true}
	for _, name := range append(slices.Clip(displayNames), m.DisplayFields...) {
		need[name] = true
	}
	for _, f := range m.Fields {
		if f.KeptName != "" && !leave(f.Name) {
			need[f.KeptName] = true
		}
	}
	return func(name string) bool { return !need[name] && leave(name) }
}

// display is m.display of a row, from the fields Display reads alone (set into show,
// reused from row to row).
func (fl *Flat) display(m *Model, row []any, show Row) string {
	if m.Display == nil {
		for _, k := range displayNames {
			if c := fl.Col(k); c >= 0 {
				if s, ok := row[c].(string); ok {
					return s
				}
			}
		}
		return ""
	}
	for _, name := range m.DisplayFields {
		if c := fl.Col(name); c >= 0 {
			show[name] = row[c]
		} else {
			delete(show, name)
		}
	}
	return m.Display(show)
}

// loadedColumns are the fields a load reads, leaving out those leave names (the Lazy
// ones only, unless all), and the SQL of each.
func loadedColumns(m *Model, leave func(string) bool, all bool) ([]*Field, []string) {
	var fields []*Field
	var cols []string
	for i := range m.Fields {
		f := &m.Fields[i]
		if (f.Lazy || all) && leave != nil && leave(f.Name) {
			continue
		}
		if f.stored() || f.Select != "" {
			fields, cols = append(fields, f), append(cols, f.selected())
		}
	}
	return slices.Clip(fields), cols
}
