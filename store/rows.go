package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Row is one object as loaded from its model: field name → value. A column is an int64,
// string, bool, float64, time.Time, json.RawMessage or []string, or nil for NULL; a
// reference is the referenced object's Row (with its nested fields) or nil; a relation
// or children a []Row. "display" holds the object's display text.
type Row map[string]any

// Values is a write: field name → value, for the fields the client sent. A column is as
// in a Row; a reference is the referenced id (int64) or nil; a relation the related ids
// ([]int64); children a []Values; a JSON object Patch to merge into the stored one.
type Values map[string]any

// Patch is a JSON object merged into the stored one (a PATCH of custom fields) rather
// than replacing it.
type Patch map[string]any

// ID is the row's id.
func (r Row) ID() int64 { id, _ := r["id"].(int64); return id }

// Rows loads the objects of a model by id, in no particular order, with their
// references and relations in nested form, their children and computed fields.
func (db *DB) Rows(ctx context.Context, m *Model, ids []int64) ([]Row, error) {
	return db.load(ctx, m, ids, false, nil)
}

// RowsLeaving loads rows as Rows does, except the fields leave says the caller will not
// show (see skipped): those are not read, and their names are absent from the rows.
func (db *DB) RowsLeaving(ctx context.Context, m *Model, ids []int64, leave func(name string) bool) ([]Row, error) {
	return db.load(ctx, m, ids, false, leave)
}

// load loads rows; nested loads only what the nested form shows (every column, and the
// references, relations and computed values marked Nested); leave (nil for none) names
// fields the caller does not show (see skipped).
func (db *DB) load(ctx context.Context, m *Model, ids []int64, nested bool, leave func(string) bool) ([]Row, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	skip := skipped(m, leave)
	rows, err := columnsLeaving(ctx, db.reader(ctx), m, "t.id IN ("+placeholders(len(ids))+")", int64Args(ids), skip)
	if err != nil {
		return nil, err
	}
	for _, f := range m.Fields {
		if (nested && !f.Nested) || f.Access == Internal || (skip != nil && skip(f.Name)) {
			continue
		}
		switch {
		case f.KeptName != "":
			keepRefs(&f, rows)
		case (f.Column != "" || f.Select != "") && f.Ref():
			err = db.loadRefs(ctx, &f, rows)
		case f.Join != nil:
			err = db.loadRelation(ctx, m, &f, rows)
		case f.Child != nil:
			err = db.loadChildren(ctx, &f, rows)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, r := range rows {
		for _, f := range m.Fields {
			if f.Compute != nil && (!nested || f.Nested) && (skip == nil || !skip(f.Name)) {
				r[f.Name] = f.Compute(r)
			}
		}
		if m.Owner == "" {
			r["display"] = m.display(r)
		}
	}
	return rows, nil
}

// skipped is what a load for a page that does not show the fields leave names leaves
// out: a Lazy field always; any other too, unless the page shows a computed field (whose
// inputs are not declared) or the model's display does not say what it reads. The id,
// what the display reads and the names of the kept references shown are always read.
func skipped(m *Model, leave func(string) bool) func(string) bool {
	if leave == nil {
		return nil
	}
	lazyOnly := m.Display != nil && m.DisplayFields == nil
	need := map[string]bool{"id": true}
	for _, name := range append(slices.Clip(displayNames), m.DisplayFields...) {
		need[name] = true
	}
	for _, f := range m.Fields {
		if leave(f.Name) {
			continue
		}
		lazyOnly = lazyOnly || f.Compute != nil
		if f.KeptName != "" {
			need[f.KeptName] = true
		}
	}
	return func(name string) bool {
		f, ok := m.Field(name)
		return ok && leave(name) && !need[name] && (f.Lazy || !lazyOnly)
	}
}

// querier is what the reader pool and a write transaction share.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// columns selects the model's columns of the rows matching where (on the table aliased t).
func (db *DB) columns(ctx context.Context, m *Model, where string, args []any) ([]Row, error) {
	return columnsOf(ctx, db.reader(ctx), m, where, args)
}

func columnsOf(ctx context.Context, q querier, m *Model, where string, args []any) ([]Row, error) {
	return columnsLeaving(ctx, q, m, where, args, nil)
}

// columnsLeaving is columnsOf without the fields leave names (leave may be nil).
func columnsLeaving(ctx context.Context, q querier, m *Model, where string, args []any, leave func(string) bool) ([]Row, error) {
	fields, cols := loadedColumns(m, leave)
	order := ""
	if m.Owner != "" {
		// Children are loaded for many owners at once: each row keeps its owner's id.
		fields, cols = append(fields, &Field{Name: m.Owner, Kind: KindInt}), append(cols, "t."+m.Owner)
		order = "t." + m.Owner + ", t." + m.Position + ", t.id"
	}
	query := "SELECT " + strings.Join(cols, ", ") + " FROM " + m.Table + " t WHERE " + where
	if order != "" {
		query += " ORDER BY " + order
	}
	rs, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", m.Table, err)
	}
	defer rs.Close()
	vals := make([]any, len(fields))
	dest := make([]any, len(fields))
	for i := range vals {
		dest[i] = &vals[i]
	}
	var out []Row
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: %s: %w", m.Table, err)
		}
		// room for the references, relations, computed values and display added later
		r := make(Row, len(m.Fields)+2)
		for i, f := range fields {
			r[f.Name] = fromColumn(f, vals[i])
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", m.Table, err)
	}
	return out, nil
}

// loadedColumns are the fields a load reads, leaving out those leave names, and the SQL
// of each.
func loadedColumns(m *Model, leave func(string) bool) ([]*Field, []string) {
	var fields []*Field
	var cols []string
	for i := range m.Fields {
		f := &m.Fields[i]
		if leave != nil && leave(f.Name) {
			continue
		}
		if f.stored() || f.Select != "" {
			fields, cols = append(fields, f), append(cols, f.selected())
		}
	}
	return slices.Clip(fields), cols
}

// fromColumn turns a column's stored value into the field's value.
func fromColumn(f *Field, v any) any {
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	if v == nil {
		if f.Kind == KindJSON && f.Default != nil {
			return f.Default
		}
		return nil
	}
	switch f.Kind {
	case KindBool:
		n, _ := v.(int64)
		return n != 0
	case KindFloat:
		if n, ok := v.(int64); ok {
			return float64(n)
		}
	case KindTime:
		s, _ := v.(string)
		return ParseStamp(s)
	case KindStrings:
		s, _ := v.(string)
		list := []string{}
		_ = json.Unmarshal([]byte(s), &list) // only this package writes it, from a []string
		return list
	case KindJSON:
		// Passed through as stored: a parse result keeps its keys in the order they
		// were written.
		s, _ := v.(string)
		if s == "null" || !json.Valid([]byte(s)) {
			return f.Default // only this package writes it, always valid JSON
		}
		return json.RawMessage(s)
	}
	return v
}

// loadRefs replaces each row's reference id by the referenced object's nested Row.
func (db *DB) loadRefs(ctx context.Context, f *Field, rows []Row) error {
	var ids []int64
	for _, r := range rows {
		if id, ok := r[f.Name].(int64); ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	byID, err := db.nestedByID(ctx, f.Rel, ids)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if id, ok := r[f.Name].(int64); ok {
			r[f.Name] = byID[id]
		}
	}
	return nil
}

// keepRefs replaces each row's kept reference (see Field.KeptName) by a Row of the
// related object: its id while the object exists, else nil, and the kept name as its
// name and display. A Null field whose object is gone stays nil.
func keepRefs(f *Field, rows []Row) {
	key := f.KeptKey()
	for _, r := range rows {
		if id := r[f.Name]; id != nil || !f.Null {
			r[f.Name] = Row{"id": id, key: r[f.KeptName], "display": r[f.KeptName]}
		}
	}
}

// KeptKey is the key of the kept name in a kept reference's Row: the name field of the
// object type it refers to.
func (f *Field) KeptKey() string { return models[f.Rel].nameField() }

func (db *DB) nestedByID(ctx context.Context, objectType string, ids []int64) (map[int64]Row, error) {
	rm := models[objectType]
	if rm == nil {
		return nil, fmt.Errorf("store: unknown object type %q", objectType)
	}
	rows, err := db.load(ctx, rm, ids, true, nil)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]Row, len(rows))
	for _, r := range rows {
		byID[r.ID()] = r
	}
	return byID, nil
}

// loadRelation sets each row's many-to-many relation, ordered as the related model's
// list is by default.
func (db *DB) loadRelation(ctx context.Context, m *Model, f *Field, rows []Row) error {
	rm := models[f.Rel]
	order, err := rm.Ordering("")
	if err != nil {
		return err
	}
	ob := ""
	for _, o := range order {
		ob += o.SQL + ", "
	}
	ids := rowIDs(rows)
	links, err := grouped(ctx, db, f.Join.Table, []string{`l.` + f.Join.Local, `t.id`}, f.Join.Table+` l JOIN `+
		rm.Table+` t ON t.id = l.`+f.Join.Remote+` WHERE l.`+f.Join.Local+` IN (`+placeholders(len(ids))+`)`,
		`l.`+f.Join.Local+`, `+ob+`t.id`, int64Args(ids), func(id *int64) []any { return []any{id} })
	if err != nil {
		return err
	}
	var related []int64
	for _, l := range links {
		related = append(related, l...)
	}
	slices.Sort(related)
	byID, err := db.nestedByID(ctx, f.Rel, slices.Compact(related))
	if err != nil {
		return err
	}
	for _, r := range rows {
		list := []Row{}
		for _, id := range links[r.ID()] {
			if x, ok := byID[id]; ok {
				list = append(list, x)
			}
		}
		r[f.Name] = list
	}
	return nil
}

// loadChildren sets each row's children, in their stored order.
func (db *DB) loadChildren(ctx context.Context, f *Field, rows []Row) error {
	c := f.Child
	ids := rowIDs(rows)
	children, err := db.columns(ctx, c, "t."+c.Owner+" IN ("+placeholders(len(ids))+")", int64Args(ids))
	if err != nil {
		return err
	}
	byOwner := map[int64][]Row{}
	for _, ch := range children {
		owner, _ := ch[c.Owner].(int64)
		delete(ch, c.Owner)
		byOwner[owner] = append(byOwner[owner], ch)
	}
	for _, r := range rows {
		r[f.Name] = append([]Row{}, byOwner[r.ID()]...)
	}
	return nil
}

func rowIDs(rows []Row) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID()
	}
	return ids
}

// Create inserts an object from a write; it must fall within guard. Fields the write
// leaves out get their Default, else the column's.
func (db *DB) Create(ctx context.Context, m *Model, v Values, guard Scope) (int64, error) {
	if err := prepare(m, v, true); err != nil {
		return 0, err
	}
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := db.now()
		var cols []string
		var args []any
		for _, f := range m.Fields {
			val, ok := v[f.Name]
			if ok && f.Access == ReadOnly {
				ok = false
			}
			if !ok && f.Default != nil {
				val, ok = f.Default, true
			}
			if val == Now {
				val = now
			}
			if ok && f.Column != "" {
				cols, args = append(cols, f.Column), append(args, toColumn(&f, val))
			}
		}
		if !m.NoStamps {
			cols, args = append(cols, "created", "last_updated"), append(args, Stamp(now), Stamp(now))
		}
		// RETURNING rather than LastInsertId, which PostgreSQL's driver has not.
		err := tx.QueryRowContext(ctx, `INSERT INTO `+m.Table+` (`+strings.Join(cols, ", ")+`) VALUES (`+
			placeholders(len(cols))+`) RETURNING id`, args...).Scan(&id)
		if err != nil {
			return constraintErr(err, m.Type)
		}
		return db.finish(ctx, tx, m, id, v, nil, guard)
	})
	return id, err
}

// Update changes the fields a write sent; the object must stay within guard.
func (db *DB) Update(ctx context.Context, m *Model, id int64, v Values, guard Scope) error {
	if err := prepare(m, v, false); err != nil {
		return err
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		if err := fromNetBox(ctx, tx, m, id, v); err != nil {
			return err
		}
		var old Row
		if m.Write != nil {
			var err error
			if old, err = rowTx(ctx, tx, m, id); err != nil {
				return err
			}
		}
		set := Set{}
		for _, f := range m.Fields {
			val, ok := v[f.Name]
			if !ok || f.Column == "" || f.Access == ReadOnly {
				continue
			}
			if p, isPatch := val.(Patch); isPatch {
				merged, err := mergeJSON(ctx, tx, m, &f, id, p)
				if err != nil {
					return err
				}
				val = merged
			}
			set.Val(f.Column, toColumn(&f, val))
		}
		if err := set.Apply(ctx, tx, m.Table, id, db.now()); err != nil {
			return constraintErr(err, m.Type)
		}
		return db.finish(ctx, tx, m, id, v, old, guard)
	})
}

// Delete deletes an object; objects that must refer to it make it ErrInUse.
func (db *DB) Delete(ctx context.Context, m *Model, id int64) error {
	_, synced := m.Field("netbox_id")
	if m.Deleted == nil && !synced {
		return db.deleteRow(ctx, m.Table, id)
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		if err := fromNetBox(ctx, tx, m, id, nil); err != nil {
			return err
		}
		old, err := rowTx(ctx, tx, m, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+m.Table+` WHERE id = ?`, id); err != nil {
			return constraintErr(err, fmt.Sprintf("%s %d", m.Type, id))
		}
		if m.Deleted == nil {
			return nil
		}
		return m.Deleted(ctx, tx, old)
	})
}

func prepare(m *Model, v Values, created bool) error {
	if m.Prepare == nil {
		return nil
	}
	return m.Prepare(v, created)
}

// rowTx reads one row's columns inside a write; a missing row is ErrNotFound.
func rowTx(ctx context.Context, tx *sql.Tx, m *Model, id int64) (Row, error) {
	rows, err := columnsOf(ctx, tx, m, "t.id = ?", []any{id})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s %d: %w", m.Type, id, ErrNotFound)
	}
	return rows[0], nil
}

// finish writes what needs the row's id (relations, children, the model's own rules)
// and checks the scope.
func (db *DB) finish(ctx context.Context, tx *sql.Tx, m *Model, id int64, v Values, old Row, guard Scope) error {
	for _, f := range m.Fields {
		val, ok := v[f.Name]
		if !ok {
			continue
		}
		switch {
		case f.Join != nil:
			ids, _ := val.([]int64)
			if err := setLinks(ctx, tx, f.Join.Table, f.Join.Local, f.Join.Remote, id, ids); err != nil {
				return constraintErr(err, m.Type+" "+f.Name)
			}
		case f.Child != nil:
			children, _ := val.([]Values)
			if err := replaceChildren(ctx, tx, f.Child, id, children); err != nil {
				return err
			}
		}
	}
	if m.Write != nil {
		if err := m.Write(ctx, tx, id, v, old); err != nil {
			return err
		}
	}
	return CheckScope(ctx, tx, m.Type, id, guard)
}

// toColumn turns a written value into what its column stores.
func toColumn(f *Field, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case time.Time:
		if x.IsZero() {
			return nil
		}
		return Stamp(x)
	case nowDefault:
		return nil
	case Patch:
		v = map[string]any(x)
	}
	if f.Kind == KindJSON || f.Kind == KindStrings {
		b, _ := json.Marshal(v) // decoded from a request's JSON: always representable
		return string(b)
	}
	return v
}

// mergeJSON is the stored JSON object of the field with p's keys set.
func mergeJSON(ctx context.Context, tx *sql.Tx, m *Model, f *Field, id int64, p Patch) (map[string]any, error) {
	var raw sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT `+f.Column+` FROM `+m.Table+` WHERE id = ?`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s %d: %w", m.Type, id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	cur := map[string]any{}
	_ = json.Unmarshal([]byte(raw.String), &cur) // only this package writes it, always an object
	if cur == nil {
		cur = map[string]any{}
	}
	maps.Copy(cur, p)
	return cur, nil
}

// replaceChildren makes the owner's children exactly vs, in order, updating in place the
// ones whose key already exists so that their ids stay stable.
func replaceChildren(ctx context.Context, tx *sql.Tx, c *Model, owner int64, vs []Values) error {
	del := `DELETE FROM ` + c.Table + ` WHERE ` + c.Owner + ` = ?`
	args := []any{owner}
	if len(vs) > 0 {
		// "NOT IN (NULL)" would keep everything, so the clause exists only with keys.
		key, _ := c.Field(c.Key)
		del += ` AND ` + key.Column + ` NOT IN (` + placeholders(len(vs)) + `)`
		for _, v := range vs {
			args = append(args, v[c.Key])
		}
	}
	if _, err := tx.ExecContext(ctx, del, args...); err != nil {
		return fmt.Errorf("store: %s: %w", c.Table, err)
	}
	for i, v := range vs {
		cols, vals := []string{c.Owner, c.Position}, []any{owner, i}
		var upd []string
		for _, f := range c.Fields {
			val, ok := v[f.Name]
			if !ok && f.Default != nil {
				val, ok = f.Default, true
			}
			if !ok || f.Column == "" || f.Access == ReadOnly {
				continue
			}
			cols, vals = append(cols, f.Column), append(vals, toColumn(&f, val))
			if f.Name != c.Key {
				upd = append(upd, f.Column+" = excluded."+f.Column)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO `+c.Table+` (`+strings.Join(cols, ", ")+`) VALUES (`+
			placeholders(len(cols))+`) ON CONFLICT (`+c.Owner+`, `+c.Key+`) DO UPDATE SET `+
			strings.Join(append(upd, c.Position+" = excluded."+c.Position), ", "), vals...)
		if err != nil {
			return constraintErr(err, c.Table)
		}
	}
	return nil
}
