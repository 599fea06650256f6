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
	// logQ is the text of a ?q= on logs that this condition is, so that a list can
	// count it from the indexes and choose how to read its page (planLogSearch).
	logQ string
	// fromOffset says this condition holds the logs of a page from its offset on, in
	// its order (tailPage): the page is read from the first of them.
	fromOffset bool
	// picked, when set, is the ids this condition holds (pickSearch's), for heldPage.
	picked []int64
}

// True and False are the trivial conditions.
var (
	True  = Expr{SQL: "1"}
	False = Expr{SQL: "0"}
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
	for i, e := range es {
		parts[i] = "(" + e.SQL + ")"
		args = append(args, e.Args...)
	}
	return Expr{SQL: strings.Join(parts, sep), Args: args}
}

// Not negates a condition; a NULL (unknown) comparison counts as false before negation,
// so that "not in" keeps rows whose column is empty, as Django's exclude does.
func Not(e Expr) Expr { return Expr{SQL: "NOT COALESCE((" + e.SQL + "), 0)", Args: e.Args} }

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

// Compile turns the condition into SQL on the model's row aliased "t".
func (m *Model) Compile(c Cond) (Expr, error) {
	return m.compile("t", 0, c.Path, c.Lookup, c.Values)
}

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
		op := map[string]string{"lt": "<", "lte": "<=", "gt": ">", "gte": ">="}[lookup]
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
	// whole ordering's order (Field.SortIndex). A page whose condition keeps many rows
	// is read along it (pageAlong).
	Index string
	// Values is the first term's Field.SortValues: the few values along Index, whose
	// runs a page bounded on the ordering's second term seeks (pageByValues).
	Values string
}

// Query selects a page of one model's rows.
type Query struct {
	Model  string
	Where  []Expr
	Order  []Order
	Limit  int
	Offset int
	// Keyed asks for the page's sort key (see ListKeyed); After, when set, is the sort
	// key of the row the page starts after (keyset pagination).
	Keyed bool
	After []any

	from Expr // what a page reads in place of its table, aliased t (pageAlong); its args come first
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
// skipped or seen twice when rows are added or deleted meanwhile.
func (db *DB) ListKeyed(ctx context.Context, q Query) ([]int64, int, []any, error) {
	m := models[q.Model]
	if m == nil {
		return nil, 0, nil, fmt.Errorf("store: list: unknown model %q", q.Model)
	}
	after, err := q.afterCond()
	if err != nil {
		return nil, 0, nil, err
	}
	if m.Table == "command_logs" && !q.Keyed && len(q.Order) == 1 && q.Order[0].Index == ByRowid {
		// Logs written in created order are in id order too: ordered by id, the page is
		// the one ordered by created, whose walks, hours and counters serve it.
		if inOrder, err := db.logsInOrder(ctx); err != nil {
			return nil, 0, nil, err
		} else if inOrder {
			q.Order = []Order{{SQL: "t.created", Desc: q.Order[0].Desc, NotNull: true}}
		}
	}
	if m.Table == "command_logs" && !q.Keyed && len(q.Order) == 2 && q.Order[0].SQL == "t.success" && q.Order[1].SQL == "t.created" {
		// Every log of a list of one outcome has the same success: ordered by it, then
		// created, the page is the one ordered by created, whose hours serve it.
		rest := slices.DeleteFunc(slices.Clone(q.Where), func(e Expr) bool { return e.logQ != "" })
		if r := And(rest...); r.SQL != True.SQL {
			if _, _, one := db.outcomeDevices(ctx, db.reader(ctx), r); one {
				q.Order = []Order{{SQL: "t.created", Desc: q.Order[0].Desc, NotNull: true}}
			}
		}
	}
	var total int
	counted := false
	searched := q.Where // before a search is planned
	if m.Table == "command_logs" {
		var err error
		if q.Where, total, counted, err = db.planLogSearch(ctx, q); err != nil {
			return nil, 0, nil, err
		}
	}
	where, args := q.where()
	byDevice, bySpan, keys := false, false, ""
	if m.Table == "command_logs" && counted && where != True.SQL {
		// A search that every log of the list matches leaves the list's own condition
		// (planLogSearch): on the device alone, its pages take the device's ways.
		keys, byDevice = db.logDevices(ctx, db.reader(ctx), Expr{SQL: where, Args: args})
	}
	if m.Table == "command_logs" && !counted {
		if where == True.SQL {
			// Counting a million logs walks a whole index; the insert/delete triggers
			// already keep the number.
			var err error
			if total, err = db.allLogs(ctx); err != nil {
				return nil, 0, nil, fmt.Errorf("store: count %s: %w", m.Table, err)
			}
			counted = true
		} else {
			// A condition on the device alone (a viewer's site, a device filter) is a sum
			// of the per-device counters.
			total, keys, counted = db.countByDevice(ctx, db.reader(ctx), Expr{SQL: where, Args: args})
			byDevice = counted
			if !counted {
				// A condition on the user or the outcome too: the per-user counters.
				total, counted = db.countByUser(ctx, db.reader(ctx), Expr{SQL: where, Args: args})
			}
			if !counted {
				// A condition on the device and bounds on created: the hourly counters.
				total, counted = db.countBySpan(ctx, db.reader(ctx), q.Where)
				bySpan = counted
			}
		}
	}
	if !counted {
		if err := db.reader(ctx).QueryRowContext(ctx, "SELECT count(*) FROM "+m.Table+" t WHERE "+where, args...).Scan(&total); err != nil {
			return nil, 0, nil, fmt.Errorf("store: count %s: %w", m.Table, err)
		}
	}
	if total == 0 || q.Offset >= total {
		return nil, total, nil, nil
	}
	// The search's newest (or oldest) matches read from the word index to the page's
	// end (tailPage) are the page's own logs, from its offset on: not looked for again
	// in the held columns, whose pick of every match cost a phrase's page 25 ms more.
	fromOffset := len(q.Where) == 1 && q.Where[0].fromOffset
	if m.Table == "command_logs" && q.After == nil && !q.Keyed && !fromOffset {
		// Ordered by the duration, user name or outcome (or deep by created), under
		// conditions on what the server holds of every log: found in memory.
		if ids, ok, err := db.heldPage(ctx, q, searched, total, byDevice || bySpan); ok || err != nil {
			return ids, total, nil, err
		}
	}
	if fromOffset {
		q.Offset = 0
	}
	if q.After != nil {
		// The count is of the whole list; the page is what follows the cursor.
		e := And(append(slices.Clip(q.Where), after)...)
		where, args = e.SQL, e.Args
	}
	if m.Table == "command_logs" && q.After == nil && q.Offset >= hourWalkFrom {
		if desc, ok := byCreated(q.Order); ok {
			ids, next, done, err := db.logPageByHours(ctx, m, Expr{SQL: where, Args: args}, desc, q)
			if done || err != nil {
				return ids, total, next, err
			}
		}
	}
	if m.Table == "command_logs" && where == True.SQL && !q.Keyed {
		if desc, ok := byCreated(q.Order); ok && desc {
			if ids, ok := db.recentPage(ctx, q); ok {
				return ids, total, nil, nil
			}
		}
	}
	if byDevice && !q.Keyed {
		if desc, ok := byCreated(q.Order); ok {
			ids, found, err := db.logPageByWalk(ctx, where, args, keys, desc, total, q)
			if found || err != nil {
				return ids, total, nil, err
			}
		}
	}
	if byDevice && q.After == nil {
		if device, ok := oneDevice(keys); ok {
			// The condition holds for one device's logs alone (a device's page, within
			// a viewer's permission): its index range, rather than testing the whole
			// condition on each log, which builds the viewer's devices anew each time.
			where, args = "t.device_id = ?", []any{device}
		}
	}
	if len(q.Order) > 0 && q.Order[0].Values != "" && q.Order[0].NotNull && bySpan && !q.Keyed {
		ids, err := db.pageByValues(ctx, m, where, args, q)
		return ids, total, nil, err
	}
	if len(q.Order) > 0 && q.Order[0].Index != "" && where != True.SQL && m.Table == "command_logs" {
		// A condition on the device and created (bySpan) is tested within the index, as
		// one on the device alone is.
		ids, next, found, err := db.pageAlong(ctx, m, where, args, after, q, total, byDevice || bySpan)
		if found || err != nil {
			return ids, total, next, err
		}
	}
	ids, next, err := db.pageIDs(ctx, db.reader(ctx), m, where, args, q)
	return ids, total, next, err
}

// ByRowid is the SortIndex of the id: the table itself holds its rows in the id's order.
const ByRowid = "rowid"

// alongLeast and alongMost bound how many logs a page walks along its ordering's index
// (pageAlong): about 1.5 µs each at a million logs, looking each one up. Tests lower them.
var (
	alongLeast = 1000
	alongMost  = 20000
)

// pageAlong is a page of logs ordered by a field with an index of its own (Order.Index)
// for a condition that keeps total of them. Given a condition with an index of its own
// (a user, a viewer's devices), SQLite reads every log it keeps and sorts them all for
// each page: for a viewer of a fifth of a million logs ordered by user name, a second.
// Were the condition's logs spread evenly along the ordering's index, the page would
// end within (offset + limit) × every log / total of its start. The walk reads twice
// that, at least alongLeast, then eight times as many, and stops at alongMost; when
// twice that is more than the condition keeps, they are sorted instead. A page
// the walk holds whole is the page: every log it passed over sorts before the rest. It
// reports false when the walk did not hold the page (the condition's logs lie elsewhere
// along the index, as a day's do ordered by user name, then created), and the page is
// sorted. A page beyond alongMost is read along the index to its end, unbounded: when
// the condition reads no more than the index holds (inIndex: the device, created), and
// the walk would pass no more than eight entries for each log the condition keeps;
// otherwise when the condition keeps an eighth of the logs or more and the walk would
// read no more logs than it keeps. Else sorted. Along the ids (the table itself) a walk
// reads whole logs, and takes the second rule.
func (db *DB) pageAlong(ctx context.Context, m *Model, where string, args []any, after Expr, q Query, total int, inIndex bool) ([]int64, []any, bool, error) {
	all, err := db.allLogs(ctx)
	if err != nil || total <= 0 {
		return nil, nil, false, err
	}
	reach := q.Offset + q.Limit
	if q.After != nil {
		reach = q.Limit // from the cursor, which the index seeks to
	}
	if clustered := q.Order[0].Values != "" || q.Order[0].Index == ByRowid; clustered && mentions(And(q.Where...).SQL, "t.created") {
		// A condition on created keeps logs that lie together along the index: in a run
		// for each of the field's few values, or, along the ids, where they were
		// written. Not spread over it, as a week's logs are along the durations.
		return nil, nil, false, nil
	}
	along := m.Table + " t INDEXED BY " + q.Order[0].Index
	if q.Order[0].Index == ByRowid {
		along = m.Table + " t NOT INDEXED"
	}
	first := 2 * float64(reach) * float64(all) / float64(total)
	if first > float64(alongMost) || first > 2*float64(total) {
		if inIndex && q.Order[0].Index != ByRowid {
			if float64(reach)*float64(all) > 8*float64(total)*float64(total) {
				// The walk would pass more than eight index entries for each log the
				// sort reads: each of those is looked up for its column.
				return nil, nil, false, nil
			}
		} else if 8*total < all || first > 2*float64(total) {
			// Few logs, sorted at less cost than the walk; or a walk longer than the
			// logs the condition keeps, each looked up where the index leads (along the
			// duration's, at random).
			return nil, nil, false, nil
		}
		// A page deep in a list that keeps many logs: walking the index to it reads
		// fewer logs than sorting them all, which reads and sorts every one (a
		// superuser's page 10,000 in of one user's million logs ordered by user name:
		// 4.5 s sorted). A condition on the device alone is tested within the index,
		// which holds each log's device (migration 0068), so the walk reads no row
		// however far it goes: a viewer's page 100,000 in ordered by user name.
		q.from = Expr{SQL: along}
		ids, next, err := db.pageIDs(ctx, db.reader(ctx), m, where, args, q)
		return ids, next, err == nil, err
	}
	for _, n := range []int{max(int(first), alongLeast), max(int(first), alongLeast) * 8} {
		if n > alongMost {
			break
		}
		inner, iargs := "SELECT t.id FROM "+along, []any(nil)
		if q.After != nil {
			inner, iargs = inner+" WHERE "+after.SQL, slices.Clip(after.Args)
		}
		inner += " ORDER BY " + orderBy(keyTerms(q.Order)) + " LIMIT ?"
		// CROSS JOIN keeps the walk the outer loop: SQLite would rather start from the
		// condition's own index and look each log up in the walk.
		q.from = Expr{SQL: "(" + inner + ") w CROSS JOIN " + m.Table + " t ON t.id = w.id", Args: append(iargs, n)}
		ids, next, err := db.pageIDs(ctx, db.reader(ctx), m, where, args, q)
		if err != nil {
			return nil, nil, false, err
		}
		held := len(ids) == q.Limit && (!q.Keyed || next != nil) // a keyed page holds the next one's first log too
		if held || (q.After == nil && n >= all) {
			return ids, next, true, nil
		}
		if n >= all {
			break
		}
	}
	return nil, nil, false, nil
}

// mentions reports whether the SQL of a condition names a column ("t.created", not
// "t.created_by").
func mentions(sql, col string) bool {
	for rest := sql; ; {
		i := strings.Index(rest, col)
		if i < 0 {
			return false
		}
		rest = rest[i+len(col):]
		if rest == "" || !strings.ContainsRune("_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", rune(rest[0])) {
			return true
		}
	}
}

// oneDevice is the device of a set of device keys (deviceKeys) that holds one device,
// not a deleted one's key.
func oneDevice(keys string) (int64, bool) {
	inner, open := strings.CutPrefix(keys, "[")
	inner, closed := strings.CutSuffix(inner, "]")
	if !open || !closed {
		return 0, false
	}
	n, err := strconv.ParseInt(inner, 10, 64)
	return n, err == nil && n > 0
}

// logWalkRows is how many of the newest (or oldest) logs a page of a condition on the
// device alone may read along the created index before it falls back to the device's
// own indexes; logWalkLeast is the fewest a walk reads.
const (
	logWalkRows  = 2000
	logWalkLeast = 200
)

// logPageByWalk is a near page of logs ordered by created for a condition on the
// log's device alone that holds for many logs (total of them, those of the device keys
// in keys): it reads the first logs of every device along the created index, which
// holds each log's id and device, and keeps those that match. It reads twice as many as
// would hold the page were the condition's logs spread evenly among them, and when
// those do not hold it, logWalkRows. Every matching log before the page's end sorts
// before the walk's last one when the walk found the whole page, or the list's end;
// otherwise it reports false and the page is read through the device indexes, which
// cost a seek per device however many logs the condition keeps.
//
// Newest first, between two writes, the walk is through the window of recent logs held
// in memory (recentLogs) once it is read.
func (db *DB) logPageByWalk(ctx context.Context, where string, args []any, keys string, desc bool, total int, q Query) ([]int64, bool, error) {
	// all is at least total: the page alone past the walk's bound says no before the
	// product below could overflow.
	if total == 0 || 2*(q.Offset+q.Limit) > logWalkRows {
		return nil, false, nil
	}
	all, err := db.allLogs(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("store: list command_logs: %w", err)
	}
	reach := 2 * (q.Offset + q.Limit) * all / total
	if reach > logWalkRows {
		return nil, false, nil
	}
	first := max(reach, logWalkLeast)
	var win *recentWindow
	if version, ok := db.version(ctx); ok && desc {
		win = db.recent.window(ctx, db, version, first)
	}
	var set map[int64]bool
	if win != nil {
		if set, err = win.set(keys); err != nil {
			return nil, false, err
		}
	}
	for _, n := range []int{first, logWalkRows} {
		var ids []int64
		if win != nil {
			ids = win.page(set, n, q)
			db.recent.used.Add(1)
		} else if ids, err = db.walkLogs(ctx, where, args, desc, n, q); err != nil {
			return nil, false, err
		}
		if len(ids) == q.Limit || q.Offset+len(ids) >= total {
			return ids, true, nil
		}
		if n >= logWalkRows || n >= all {
			break // the longer walk would read the same logs
		}
	}
	return nil, false, nil
}

// walkLogs is the page of q among the logs that match where within the first n logs
// along the created index.
func (db *DB) walkLogs(ctx context.Context, where string, args []any, desc bool, n int, q Query) ([]int64, error) {
	dir := orderDir(desc)
	rows, err := db.reader(ctx).QueryContext(ctx, `SELECT t.id FROM (SELECT x.id, x.created, x.device_id FROM command_logs x
		ORDER BY x.created `+dir+`, x.id `+dir+` LIMIT ?) t WHERE `+where+`
		ORDER BY t.created `+dir+`, t.id `+dir+` LIMIT ? OFFSET ?`, append([]any{n}, append(slices.Clip(args), q.Limit, q.Offset)...)...)
	if err != nil {
		return nil, fmt.Errorf("store: list command_logs: %w", err)
	}
	defer rows.Close()
	ids := make([]int64, 0, q.Limit)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: list command_logs: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list command_logs: %w", err)
	}
	return ids, nil
}

// logPageByHours is a page of logs ordered by created, deep in the list, for a
// condition on the log's device alone, on the device and one outcome (a viewer's failed
// logs), or on the device and bounds on created (a span): the hourly counters say which
// hour the page starts in, so SQLite skips only inside that hour instead of every row
// before it. The counters and the page are read in one snapshot. It reports false,
// having done nothing, for a condition on more.
func (db *DB) logPageByHours(ctx context.Context, m *Model, where Expr, desc bool, q Query) ([]int64, []any, bool, error) {
	rq, done, err := db.snapshot(ctx)
	if err != nil {
		return nil, nil, false, fmt.Errorf("store: list %s: %w", m.Table, err)
	}
	defer done()
	// where is r, on the device, within s.
	devices, r, s, counted := "", where, span{}, hourTotal
	if where.SQL != True.SQL {
		set, ok := db.logDevices(ctx, rq, where)
		if !ok {
			set, counted, ok = db.outcomeDevices(ctx, rq, where)
		}
		if !ok {
			counted = hourTotal
			var rest []Expr
			if rest, s, ok = splitSpan(q.Where); !ok {
				return nil, nil, false, nil
			}
			if r = And(rest...); r.SQL != True.SQL {
				if set, ok = db.logDevices(ctx, rq, r); !ok {
					return nil, nil, false, nil
				}
			}
		}
		devices = set
	}
	var total int
	if s == (span{}) {
		total, err = logCountOf(ctx, rq, devices, counted)
	} else {
		total, err = db.countSpan(ctx, rq, devices, r, s)
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("store: list %s: %w", m.Table, err)
	}
	if q.Offset >= total {
		return nil, nil, true, nil
	}
	if !q.Keyed && q.Offset > total/2 {
		// Nearer the far end: the same page read backwards from that end, so that no
		// walk sums more than half the hours.
		first := max(0, total-q.Offset-q.Limit)
		q.Limit, q.Order = total-q.Offset-first, []Order{{SQL: "t.created", Desc: !desc, NotNull: true}}
		q.Offset, desc = first, !desc
		ids, _, found, err := db.logPageFrom(ctx, rq, m, r, devices, counted, s, desc, q)
		slices.Reverse(ids)
		return ids, nil, found, err
	}
	return db.logPageFrom(ctx, rq, m, r, devices, counted, s, desc, q)
}

// logPageFrom is the page of q through the hourly counters of devices (the counted
// column's sums), those r keeps, within s.
func (db *DB) logPageFrom(ctx context.Context, rq snapshotReader, m *Model, r Expr, devices string, counted hourCount, s span, desc bool, q Query) ([]int64, []any, bool, error) {
	from, skip, found, err := hourStart(ctx, rq, devices, counted, r, s, desc, q.Offset)
	if err != nil {
		return nil, nil, false, fmt.Errorf("store: list %s: %w", m.Table, err)
	}
	if !found {
		return nil, nil, true, nil
	}
	e := And(append([]Expr{r}, from.conds()...)...)
	q.Offset = skip
	ids, next, err := db.pageIDs(ctx, rq, m, e.SQL, e.Args, q)
	return ids, next, true, err
}

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

// orderDir is the SQL direction of an ordering, descending when desc.
func orderDir(desc bool) string {
	if desc {
		return "DESC"
	}
	return "ASC"
}

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
