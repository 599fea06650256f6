package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Expr is a piece of SQL (a boolean condition on the model's row, aliased "t") with its
// arguments.
type Expr struct {
	SQL  string
	Args []any
	// Reads names the columns of the row the condition reads, when it is known: a
	// condition compiled from a filter or a constraint (Model.Compile), and those joined
	// from such conditions. nil when it is not (SQL written by hand). A list may answer a
	// condition from what it keeps of those columns (the command logs' counters).
	Reads []string
	// Range, when set, says the condition compares its one column (Reads[0]) with one
	// value: a list may bound a count by it.
	Range *Range
}

// Range is a comparison of a column with a value: Op is <, <=, > or >=, and Value is
// the column's stored form.
type Range struct {
	Op    string
	Value any
}

// True and False are the trivial conditions (keywords both SQLite and PostgreSQL take
// as a condition; PostgreSQL takes no bare 1).
var (
	True  = Expr{SQL: "TRUE", Reads: []string{}}
	False = Expr{SQL: "FALSE", Reads: []string{}}
)

// And joins conditions; an empty list is True.
func And(es ...Expr) Expr { return join(es, " AND ", True) }

// Or joins conditions; an empty list is False.
func Or(es ...Expr) Expr { return join(es, " OR ", False) }

func join(es []Expr, sep string, empty Expr) Expr {
	if len(es) == 0 {
		return empty
	}
	if len(es) == 1 {
		return es[0]
	}
	parts := make([]string, len(es))
	var args []any
	reads := []string{}
	for i, e := range es {
		parts[i] = "(" + e.SQL + ")"
		args = append(args, e.Args...)
		if reads != nil && e.Reads != nil {
			for _, c := range e.Reads {
				if !slices.Contains(reads, c) {
					reads = append(reads, c)
				}
			}
		} else {
			reads = nil
		}
	}
	return Expr{SQL: strings.Join(parts, sep), Args: args, Reads: reads}
}

// Not negates a condition; a NULL (unknown) comparison counts as false before negation,
// so that "not in" keeps rows whose column is empty, as Django's exclude does. FALSE,
// not 0: PostgreSQL's conditions are booleans (SQLite reads FALSE as 0).
func Not(e Expr) Expr {
	return Expr{SQL: "NOT COALESCE((" + e.SQL + "), FALSE)", Args: e.Args, Reads: e.Reads}
}

// ErrUnknownField is returned when a lookup names a field or relation the model lacks.
var ErrUnknownField = errors.New("unknown field")

// ErrBadValue is returned when a value does not fit the field's kind.
var ErrBadValue = errors.New("bad value")

// Lookups are the Django-style lookups a Cond may use.
var Lookups = map[string]bool{
	"exact": true, "n": true, "in": true, "iexact": true, "ie": true, "nie": true,
	"icontains": true, "ic": true, "nic": true, "contains": true,
	"istartswith": true, "isw": true, "nisw": true, "startswith": true,
	"iendswith": true, "iew": true, "niew": true, "endswith": true,
	"lt": true, "lte": true, "gt": true, "gte": true, "isnull": true, "empty": true,
}

// negated maps each negated lookup to its positive form.
var negated = map[string]string{"n": "in", "nie": "ie", "nic": "ic", "nisw": "isw", "niew": "iew"}

// Cond is one lookup: a field path through relations, a lookup and its values (several
// values OR together).
type Cond struct {
	Path   []string
	Lookup string
	Values []any
}

// ParseLookup splits "device__site__slug__ic" into the path and the lookup ("exact"
// when none is given).
func ParseLookup(key string) ([]string, string) {
	parts := strings.Split(key, "__")
	if n := len(parts); n > 1 && Lookups[parts[n-1]] {
		return parts[:n-1], parts[n-1]
	}
	return parts, "exact"
}

// Compile turns the condition into SQL on the model's row aliased "t", and records the
// column of the row it reads (Expr.Reads), and a comparison with one value (Expr.Range).
func (m *Model) Compile(c Cond) (Expr, error) {
	e, err := m.compile("t", 0, c.Path, c.Lookup, c.Values)
	if err != nil || len(c.Path) == 0 {
		return e, err
	}
	f, _ := m.comparable(c.Path[0])
	e.Reads = []string{"id"} // a many-to-many relation is read through the row's id
	if f.Join == nil {
		e.Reads = []string{f.Column}
	}
	if op, ok := rangeOps[c.Lookup]; ok && len(c.Path) == 1 && f.Join == nil && len(c.Values) == 1 {
		if v, err := convert(f.Kind, c.Values[0]); err == nil {
			e.Range = &Range{Op: op, Value: v}
		}
	}
	return e, nil
}

// rangeOps are the lookups that compare a column with a value, and their operators.
var rangeOps = map[string]string{"lt": "<", "lte": "<=", "gt": ">", "gte": ">="}

func (m *Model) compile(alias string, depth int, path []string, lookup string, vals []any) (Expr, error) {
	if len(path) == 0 {
		return Expr{}, fmt.Errorf("%w: empty path", ErrUnknownField)
	}
	f, ok := m.comparable(path[0])
	if !ok {
		return Expr{}, fmt.Errorf("%w: %s has no field %q", ErrUnknownField, m.Type, path[0])
	}
	if len(path) == 1 {
		if f.Join != nil {
			return m.compileM2MIDs(alias, depth, f, lookup, vals)
		}
		return compare(alias+"."+f.Column, f.Kind, lookup, vals)
	}
	rm := models[f.Rel]
	if rm == nil {
		return Expr{}, fmt.Errorf("%w: %s.%s is not a relation", ErrUnknownField, m.Type, path[0])
	}
	if pos, ok := complement(lookup, vals); ok {
		// Across a relation, "n" and friends mean that no related row matches (Django's
		// exclude), so a row with no related row at all is kept: NOT EXISTS, not an
		// EXISTS of a negation.
		e, err := m.compile(alias, depth, path, pos, positiveVals(lookup, vals))
		if err != nil {
			return Expr{}, err
		}
		return Not(e), nil
	}
	sub := fmt.Sprintf("r%d", depth+1)
	inner, err := rm.compile(sub, depth+1, path[1:], lookup, vals)
	if err != nil {
		return Expr{}, err
	}
	if f.Join != nil {
		j := fmt.Sprintf("j%d", depth+1)
		return Expr{SQL: fmt.Sprintf("EXISTS (SELECT 1 FROM %s %s JOIN %s %s ON %s.id = %s.%s WHERE %s.%s = %s.id AND %s)",
			f.Join.Table, j, rm.Table, sub, sub, j, f.Join.Remote, j, f.Join.Local, alias, inner.SQL), Args: inner.Args}, nil
	}
	// A foreign key is tested with an uncorrelated "column IN (SELECT id …)": SQLite runs
	// the subquery once and can then walk the index on the key column (a million logs
	// filtered by device__site__slug touch only that site's rows), where a correlated
	// EXISTS would be evaluated for every row. A NULL key is not in the set, as before.
	return Expr{SQL: fmt.Sprintf("%s.%s IN (SELECT %s.id FROM %s %s WHERE %s)",
		alias, f.Column, sub, rm.Table, sub, inner.SQL), Args: inner.Args}, nil
}

// compileM2MIDs handles a bare relation name ("platforms": [1, 2]) by comparing ids in
// the link table.
func (m *Model) compileM2MIDs(alias string, depth int, f *Field, lookup string, vals []any) (Expr, error) {
	j := fmt.Sprintf("j%d", depth+1)
	if lookup == "isnull" || lookup == "empty" {
		b, err := toBool(first(vals))
		if err != nil {
			return Expr{}, err
		}
		e := Expr{SQL: fmt.Sprintf("EXISTS (SELECT 1 FROM %s %s WHERE %s.%s = %s.id)", f.Join.Table, j, j, f.Join.Local, alias)}
		if b {
			return Not(e), nil
		}
		return e, nil
	}
	if pos, ok := negated[lookup]; ok {
		// "n" on a relation: no linked row may match.
		e, err := m.compileM2MIDs(alias, depth, f, pos, vals)
		if err != nil {
			return Expr{}, err
		}
		return Not(e), nil
	}
	inner, err := compare(j+"."+f.Join.Remote, KindInt, lookup, vals)
	if err != nil {
		return Expr{}, err
	}
	return Expr{SQL: fmt.Sprintf("EXISTS (SELECT 1 FROM %s %s WHERE %s.%s = %s.id AND %s)",
		f.Join.Table, j, j, f.Join.Local, alias, inner.SQL), Args: inner.Args}, nil
}

// complement reports the positive lookup whose negation lookup is, for a lookup that
// crosses a relation: the negations, and isnull=true (no related row with a value).
func complement(lookup string, vals []any) (string, bool) {
	if pos, ok := negated[lookup]; ok {
		return pos, true
	}
	if lookup == "isnull" {
		if b, err := toBool(first(vals)); err == nil && b {
			return "isnull", true
		}
	}
	return "", false
}

// positiveVals is the values of the complement of lookup.
func positiveVals(lookup string, vals []any) []any {
	if lookup == "isnull" {
		return []any{false}
	}
	return vals
}

func first(vals []any) any {
	if len(vals) == 0 {
		return nil
	}
	return vals[0]
}

// compare builds the SQL for one lookup on a column expression.
func compare(e string, k Kind, lookup string, vals []any) (Expr, error) {
	if len(vals) == 0 {
		// An empty list: "in" matches nothing and "n" excludes nothing, as in Django.
		switch lookup {
		case "in":
			return False, nil
		case "n":
			return True, nil
		}
		return Expr{}, fmt.Errorf("%w: no value", ErrBadValue)
	}
	switch lookup {
	case "isnull", "empty":
		b, err := toBool(first(vals))
		if err != nil {
			return Expr{}, err
		}
		if lookup == "empty" && k == KindString {
			if b {
				return Expr{SQL: "COALESCE(" + e + ", '') = ''"}, nil
			}
			return Expr{SQL: "COALESCE(" + e + ", '') <> ''"}, nil
		}
		if b {
			return Expr{SQL: e + " IS NULL"}, nil
		}
		return Expr{SQL: e + " IS NOT NULL"}, nil
	case "n", "nie", "nic", "nisw", "niew":
		pos := negated[lookup]
		x, err := compare(e, k, pos, vals)
		if err != nil {
			return Expr{}, err
		}
		return Not(x), nil
	case "exact", "in":
		return compareIn(e, k, vals)
	}
	var parts []Expr
	for _, v := range vals {
		x, err := compareOne(e, k, lookup, v)
		if err != nil {
			return Expr{}, err
		}
		parts = append(parts, x)
	}
	return Or(parts...), nil
}

func compareIn(e string, k Kind, vals []any) (Expr, error) {
	var args []any
	null := false
	for _, v := range vals {
		if v == nil {
			null = true
			continue
		}
		x, err := convert(k, v)
		if err != nil {
			return Expr{}, err
		}
		args = append(args, x)
	}
	var parts []Expr
	switch len(args) {
	case 0:
	case 1:
		parts = append(parts, Expr{SQL: e + " = ?", Args: args})
	default:
		parts = append(parts, Expr{SQL: e + " IN (" + strings.TrimSuffix(strings.Repeat("?,", len(args)), ",") + ")", Args: args})
	}
	if null {
		parts = append(parts, Expr{SQL: e + " IS NULL"})
	}
	return Or(parts...), nil
}

func compareOne(e string, k Kind, lookup string, v any) (Expr, error) {
	switch lookup {
	case "lt", "lte", "gt", "gte":
		x, err := convert(k, v)
		if err != nil {
			return Expr{}, err
		}
		op := rangeOps[lookup]
		return Expr{SQL: e + " " + op + " ?", Args: []any{x}}, nil
	}
	s, err := toString(v)
	if err != nil {
		return Expr{}, err
	}
	esc := likeEscape(s)
	switch lookup {
	case "ie", "iexact":
		return Expr{SQL: "lower(" + e + ") = lower(?)", Args: []any{s}}, nil
	case "ic", "icontains":
		return Expr{SQL: e + ` LIKE ? ESCAPE '\'`, Args: []any{"%" + esc + "%"}}, nil
	case "isw", "istartswith":
		return Expr{SQL: e + ` LIKE ? ESCAPE '\'`, Args: []any{esc + "%"}}, nil
	case "iew", "iendswith":
		return Expr{SQL: e + ` LIKE ? ESCAPE '\'`, Args: []any{"%" + esc}}, nil
	case "contains":
		return Expr{SQL: "instr(" + e + ", ?) > 0", Args: []any{s}}, nil
	case "startswith":
		return Expr{SQL: "substr(" + e + ", 1, length(?)) = ?", Args: []any{s, s}}, nil
	case "endswith":
		// substr(x, -0) is all of x, so the empty suffix needs its own case.
		return Expr{SQL: "(? = '' OR substr(" + e + ", -length(?)) = ?)", Args: []any{s, s, s}}, nil
	}
	return Expr{}, fmt.Errorf("%w: unknown lookup %q", ErrUnknownField, lookup)
}

func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// convert turns a filter or constraint value into the stored representation of kind k.
func convert(k Kind, v any) (any, error) {
	switch k {
	case KindInt:
		return toInt(v)
	case KindFloat:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%w: %q is not a number", ErrBadValue, x)
			}
			return f, nil
		}
	case KindBool:
		b, err := toBool(v)
		if err != nil {
			return nil, err
		}
		if b {
			return int64(1), nil
		}
		return int64(0), nil
	case KindTime:
		switch x := v.(type) {
		case time.Time:
			return Stamp(x), nil
		case string:
			t, err := ParseTime(x)
			if err != nil {
				return nil, err
			}
			return Stamp(t), nil
		}
	case KindString:
		return toString(v)
	}
	return nil, fmt.Errorf("%w: %v", ErrBadValue, v)
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("%w: %v is not a whole number", ErrBadValue, x)
		}
		return int64(x), nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not a whole number", ErrBadValue, x)
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: %v is not a whole number", ErrBadValue, v)
}

func toBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		return ParseBool(x)
	case float64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case int64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	}
	return false, fmt.Errorf("%w: %v is not a boolean", ErrBadValue, v)
}

// ParseBool accepts true/false/1/0 in any case.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("%w: %q is not a boolean", ErrBadValue, s)
}

func toString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("%w: %v is not text", ErrBadValue, v)
}

// ParseTime reads a date or datetime the way NetBox filters accept them: RFC 3339 (with
// or without zone, T or space), or a bare date (midnight UTC).
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: %q is not a date or datetime", ErrBadValue, s)
}

// Order is one ORDER BY term.
type Order struct {
	SQL  string
	Desc bool
	// NotNull: the term is a column that never holds NULL, so a cursor can compare it
	// plainly (and through an index).
	NotNull bool
	// Index, on an ordering's first term, names the index that holds the rows in the
	// whole ordering's order (Field.SortIndex): a list may read a page along it.
	Index string
}

// Query selects a page of one model's rows.
type Query struct {
	Model string
	Where []Expr
	// Search is ?q=: the model's Search condition, besides Where.
	Search string
	Order  []Order
	Limit  int
	Offset int
	// Keyed asks for the page's sort key (see ListKeyed); After, when set, is the sort
	// key of the row the page starts after (keyset pagination).
	Keyed bool
	After []any

	from Expr // what a page reads in place of its table, aliased t; its args come first
}

func (q Query) where() (string, []any) {
	e := And(q.Where...)
	return e.SQL, e.Args
}

// ListIDs returns the ids of one page in order, and the count of all matching rows.
func (db *DB) ListIDs(ctx context.Context, q Query) ([]int64, int, error) {
	ids, total, _, err := db.ListKeyed(ctx, q)
	return ids, total, err
}

// ListKeyed is ListIDs that also returns, when q.Keyed and more rows follow the page,
// the sort key of the page's last row: the values of its ordering terms and its id.
// Given back as q.After, it selects the rows after that one, so that walking a whole
// table page by page costs the same per page at its end as at its start, and no row is
// skipped or seen twice when rows are added or deleted meanwhile. A model with a List
// hook answers it itself.
func (db *DB) ListKeyed(ctx context.Context, q Query) ([]int64, int, []any, error) {
	m := models[q.Model]
	if m == nil {
		return nil, 0, nil, fmt.Errorf("store: list: unknown model %q", q.Model)
	}
	if m.List != nil {
		return m.List(ctx, db, q)
	}
	if q.Search != "" {
		search, err := m.Search(ctx, db, q.Search)
		if err != nil {
			return nil, 0, nil, err
		}
		q.Where = append(slices.Clip(q.Where), search)
	}
	after, err := q.afterCond()
	if err != nil {
		return nil, 0, nil, err
	}
	where, args := q.where()
	var total int
	if err := db.reader(ctx).QueryRowContext(ctx, "SELECT count(*) FROM "+m.Table+" t WHERE "+where, args...).Scan(&total); err != nil {
		return nil, 0, nil, fmt.Errorf("store: count %s: %w", m.Table, err)
	}
	if total == 0 || (q.After == nil && q.Offset >= total) {
		return nil, total, nil, nil
	}
	if q.After != nil {
		// The count is of the whole list; the page is what follows the cursor.
		e := And(append(slices.Clip(q.Where), after)...)
		where, args = e.SQL, e.Args
	}
	ids, next, err := db.pageIDs(ctx, db.reader(ctx), m, where, args, q)
	return ids, total, next, err
}

// ByRowid is the SortIndex of the id: the table itself holds its rows in the id's order.
const ByRowid = "rowid"

// keyTerms are the ordering terms with the id that breaks ties, in the first term's
// direction.
func keyTerms(order []Order) []Order {
	desc := len(order) > 0 && order[0].Desc
	return append(slices.Clip(order), Order{SQL: "t.id", Desc: desc, NotNull: true})
}

// orderBy is the ORDER BY list of terms.
func orderBy(terms []Order) string {
	ob := make([]string, len(terms))
	for i, o := range terms {
		ob[i] = o.SQL
		if o.Desc {
			ob[i] += " DESC"
		}
	}
	return strings.Join(ob, ", ")
}

func (db *DB) pageIDs(ctx context.Context, rq querier, m *Model, where string, args []any, q Query) ([]int64, []any, error) {
	terms := keyTerms(q.Order)
	var sel []string
	for _, o := range terms {
		sel = append(sel, o.SQL)
	}
	cols, limit := "t.id", q.Limit
	if q.Keyed {
		// one row more than the page says whether a next page exists
		cols, limit = strings.Join(sel, ", "), q.Limit+1
	}
	from := Expr{SQL: m.Table + " t"}
	if q.from.SQL != "" {
		from = q.from
	}
	sqlText := "SELECT " + cols + " FROM " + from.SQL + " WHERE " + where + " ORDER BY " + orderBy(terms) + " LIMIT ? OFFSET ?"
	rows, err := rq.QueryContext(ctx, sqlText, append(append(slices.Clip(from.Args), args...), limit, q.Offset)...)
	if err != nil {
		return nil, nil, fmt.Errorf("store: list %s: %w", m.Table, err)
	}
	defer rows.Close()
	ids := make([]int64, 0, q.Limit)
	var key, last []any
	for rows.Next() {
		if !q.Keyed {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return nil, nil, err
			}
			ids = append(ids, id)
			continue
		}
		if len(ids) == q.Limit {
			last = key
			break
		}
		key = make([]any, len(terms))
		ptrs := make([]any, len(terms))
		for i := range key {
			ptrs[i] = &key[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		id, ok := key[len(key)-1].(int64)
		if !ok {
			return nil, nil, fmt.Errorf("store: list %s: id %v", m.Table, key[len(key)-1])
		}
		for i, v := range key {
			if b, ok := v.([]byte); ok {
				key[i] = string(b)
			}
		}
		ids = append(ids, id)
	}
	return ids, last, rows.Err()
}

// ErrBadCursor is returned for a cursor that does not fit the list's ordering.
var ErrBadCursor = errors.New("bad cursor")

// afterCond is the condition of the rows after q's cursor: True when it has none.
func (q Query) afterCond() (Expr, error) {
	if q.After == nil {
		return True, nil
	}
	return afterKey(q.Order, q.After)
}

// afterKey is the condition "the row sorts after key" for the ordering. SQLite sorts
// NULL before every value, so in a descending term the NULLs come last. When every
// term is a non-null column in one direction it is one row-value comparison, which
// SQLite answers by seeking in an index on those columns.
func afterKey(order []Order, key []any) (Expr, error) {
	terms := keyTerms(order)
	if len(key) != len(terms) {
		return Expr{}, fmt.Errorf("%w: %d values for %d ordering terms", ErrBadCursor, len(key), len(terms))
	}
	if _, ok := key[len(key)-1].(int64); !ok {
		return Expr{}, fmt.Errorf("%w: the last value is not an id", ErrBadCursor)
	}
	simple := true
	for i, o := range terms {
		simple = simple && o.NotNull && key[i] != nil && o.Desc == terms[0].Desc
	}
	if simple {
		var cols []string
		for _, o := range terms {
			cols = append(cols, o.SQL)
		}
		op := ">"
		if terms[0].Desc {
			op = "<"
		}
		return Expr{SQL: "(" + strings.Join(cols, ", ") + ") " + op + " (" + placeholders(len(cols)) + ")", Args: slices.Clone(key)}, nil
	}
	// (t1 after v1) OR (t1 IS v1 AND t2 after v2) OR …
	var ors []Expr
	for i, o := range terms {
		var ands []Expr
		for j := range i {
			ands = append(ands, Expr{SQL: terms[j].SQL + " IS ?", Args: []any{key[j]}})
		}
		ands = append(ands, after(o, key[i]))
		ors = append(ors, And(ands...))
	}
	return Or(ors...), nil
}

// after is "term sorts strictly after v".
func after(o Order, v any) Expr {
	switch {
	case v == nil && o.Desc:
		return False
	case v == nil:
		return Expr{SQL: o.SQL + " IS NOT NULL"}
	case o.Desc && !o.NotNull:
		return Expr{SQL: "(" + o.SQL + " < ? OR " + o.SQL + " IS NULL)", Args: []any{v}}
	case o.Desc:
		return Expr{SQL: o.SQL + " < ?", Args: []any{v}}
	}
	return Expr{SQL: o.SQL + " > ?", Args: []any{v}}
}

// Exists reports whether a row with this id matches every condition.
func (db *DB) Exists(ctx context.Context, model string, id int64, where ...Expr) (bool, error) {
	m := models[model]
	if m == nil {
		return false, fmt.Errorf("store: exists: unknown model %q", model)
	}
	key := fmt.Sprintf("exists\x00%s\x00%d\x00%#v", m.Table, id, where)
	if uncounted(key) {
		return exists(ctx, db.reader(ctx), model, id, where...)
	}
	return cached(ctx, db, key, func() (bool, error) { return exists(ctx, db.reader(ctx), model, id, where...) })
}

// rowQueryer is what *sql.DB and *sql.Tx share, so checks can run inside a write.
type rowQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func exists(ctx context.Context, q rowQueryer, model string, id int64, where ...Expr) (bool, error) {
	m := models[model]
	if m == nil {
		return false, fmt.Errorf("store: exists: unknown model %q", model)
	}
	e := And(append([]Expr{{SQL: "t.id = ?", Args: []any{id}}}, where...)...)
	var n int
	err := q.QueryRowContext(ctx, "SELECT count(*) FROM "+m.Table+" t WHERE "+e.SQL, e.Args...).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: exists %s %d: %w", m.Table, id, err)
	}
	return n > 0, nil
}

// ResolveRef finds the one row of model whose fields equal attrs (a nested reference
// given as a dict of unique fields, as NetBox accepts).
func (db *DB) ResolveRef(ctx context.Context, model string, attrs map[string]any) (int64, error) {
	m := models[model]
	if m == nil || len(attrs) == 0 {
		return 0, fmt.Errorf("%w: empty reference", ErrNotFound)
	}
	var where []Expr
	for k, v := range attrs {
		path, lookup := ParseLookup(k)
		e, err := m.Compile(Cond{Path: path, Lookup: lookup, Values: []any{v}})
		if err != nil {
			return 0, err
		}
		where = append(where, e)
	}
	ids, total, err := db.ListIDs(ctx, Query{Model: model, Where: where, Limit: 2})
	if err != nil {
		return 0, err
	}
	if total != 1 {
		return 0, fmt.Errorf("%w: %d matches", ErrNotFound, total)
	}
	return ids[0], nil
}

// KindOf is the kind of the field a path ends at ("device__site__slug" → string).
func (m *Model) KindOf(path []string) (Kind, error) {
	cur := m
	for i, name := range path {
		f, ok := cur.comparable(name)
		if !ok {
			return 0, fmt.Errorf("%w: %s has no field %q", ErrUnknownField, cur.Type, name)
		}
		if i == len(path)-1 {
			return f.Kind, nil
		}
		if cur = models[f.Rel]; cur == nil {
			return 0, fmt.Errorf("%w: %s is not a relation", ErrUnknownField, name)
		}
	}
	return 0, fmt.Errorf("%w: empty path", ErrUnknownField)
}

// comparable is the field a filter or constraint path names, when it can be compared in
// SQL: a column (not JSON) or a many-to-many relation.
func (m *Model) comparable(name string) (*Field, bool) {
	f, ok := m.Field(name)
	if !ok || (f.Join == nil && !f.stored()) || f.Kind == KindJSON || f.Kind == KindStrings {
		return nil, false
	}
	return f, true
}

// IsRelation reports whether a filter or constraint path ends at a relation (a
// reference's or a many-to-many relation's ids) rather than a value.
func (m *Model) IsRelation(path []string) bool {
	cur := m
	for i, name := range path {
		f, ok := cur.comparable(name)
		if !ok {
			return false
		}
		if i == len(path)-1 {
			return f.Rel != ""
		}
		if cur = models[f.Rel]; cur == nil {
			return false
		}
	}
	return false
}
