package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// span is the range of created stamps a list's conditions bound its logs to
// (created__gte and friends): from and to, each "" where there is no bound, and
// inclusive unless fromOpen or toOpen.
type span struct {
	from, to         string
	fromOpen, toOpen bool
}

// spanOps are the conditions on created that a span reads: those the filters compile
// a single lt, lte, gt or gte to.
var spanOps = map[string]string{"t.created >= ?": ">=", "t.created > ?": ">", "t.created <= ?": "<=", "t.created < ?": "<"}

// splitSpan parts where into its bounds on created and the other conditions, and
// reports false unless it holds at least one bound and no more than one on each side.
// A bound's value must be a stamp (Stamp) of a year from 0 to 9999, which sorts with
// every log's as time does and whose first 13 characters are its hour key.
func splitSpan(where []Expr) ([]Expr, span, bool) {
	var s span
	rest := make([]Expr, 0, len(where))
	for _, e := range where {
		op, ok := spanOps[e.SQL]
		if !ok || len(e.Args) != 1 {
			rest = append(rest, e)
			continue
		}
		stamp, ok := e.Args[0].(string)
		if !ok || !isStamp(stamp) {
			return nil, span{}, false
		}
		switch op {
		case ">=", ">":
			if s.from != "" {
				return nil, span{}, false
			}
			s.from, s.fromOpen = stamp, op == ">"
		default:
			if s.to != "" {
				return nil, span{}, false
			}
			s.to, s.toOpen = stamp, op == "<"
		}
	}
	return rest, s, s.from != "" || s.to != ""
}

// isStamp reports whether s is a stamp as Stamp writes it.
func isStamp(s string) bool {
	t, err := time.Parse(TimeFormat, s)
	return err == nil && len(s) == len(TimeFormat) && Stamp(t) == s
}

// hourOf is the hour key of a stamp (isStamp) and the stamp of that hour's first instant.
func hourOf(stamp string) (string, string) {
	key := stamp[:len(hourLayout)]
	return key, hourStamp(key)
}

// hourStamp is the stamp of the first instant of the hour of key (hourKey).
func hourStamp(key string) string { return key + ":00:00.000000Z" }

// conds are the span's bounds as conditions on created: one on each side at most.
func (s span) conds() []Expr {
	var es []Expr
	if s.from != "" {
		es = append(es, s.fromCond())
	}
	if s.to != "" {
		es = append(es, s.toCond())
	}
	return es
}

// within narrows s to leave out the hours before the one starting at start (a stamp)
// in a list ordered by created, descending when desc: the hours after it, or those
// before it when ascending.
func (s span) within(start string, desc bool) span {
	if !desc {
		if s.from == "" || start > s.from {
			s.from, s.fromOpen = start, false
		}
		return s
	}
	t, _ := time.Parse(TimeFormat, start) // an hour's first instant is a stamp
	next := Stamp(t.Add(time.Hour))
	if s.to == "" || next < s.to || next == s.to && !s.toOpen {
		s.to, s.toOpen = next, true
	}
	return s
}

// fromCond and toCond are the span's bounds as conditions on created.
func (s span) fromCond() Expr {
	if s.fromOpen {
		return Expr{SQL: "t.created > ?", Args: []any{s.from}}
	}
	return Expr{SQL: "t.created >= ?", Args: []any{s.from}}
}

func (s span) toCond() Expr {
	if s.toOpen {
		return Expr{SQL: "t.created < ?", Args: []any{s.to}}
	}
	return Expr{SQL: "t.created <= ?", Args: []any{s.to}}
}

// countBySpan counts the logs matching where, a condition on the log's device and
// bounds on created (a viewer's logs of a week), from the hourly counters: the hours
// wholly inside the span from the counters, and the logs of the hours its ends fall in
// through the created index, which holds each log's device. False when where reads
// more than the device and created. The count is kept as the device sums are
// (keptCount).
func (db *DB) countBySpan(ctx context.Context, q rowQueryer, where []Expr) (int, bool) {
	rest, s, ok := splitSpan(where)
	if !ok {
		return 0, false
	}
	r := And(rest...)
	devices := ""
	if r.SQL != True.SQL {
		if devices, ok = db.logDevices(ctx, q, r); !ok {
			return 0, false
		}
	}
	all := And(where...)
	n, err := db.keptCount(ctx, fmt.Sprintf("span\x00%s\x00%#v", all.SQL, all.Args), func() (int, error) {
		return db.countSpan(ctx, q, devices, r, s)
	})
	return n, err == nil
}

// spanRowCost is how many logs SQLite counts through an index in the time it sums one
// row of the hourly counters (0.12 µs each at a million logs); spanDeviceCost, how many
// more when the row's device is tested against the list's devices (0.3-0.6 µs a row).
var spanRowCost, spanDeviceCost = 1, 3

// spanCount counts the logs within s of devices (see deviceSetSQL), which are those r
// keeps: from the hourly counters (spanCountSQL), or from the logs through the device
// or created index, whichever reads less. The counters' rows within s are those of every
// device, whatever the list; the logs, only the list's. At a million logs over 30 days
// of 500 devices, a confined viewer's first ten days are 73,000 logs, counted in 8-11
// ms, against 124,000 counter rows whose devices are tested in 11-30 ms; at 5M, 367,000
// logs in 38-52 ms against 132,000 rows in 53-79 ms. A superuser's are 367,000 logs at
// 1M, 44-71 ms, against the same rows summed in 20-24 ms. The rows are estimated as
// every device with logs in every hour from the first to the last, the logs as the
// list's share of the span's hours.
func spanCount(ctx context.Context, q rowQueryer, devices string, r Expr, s span) (int, error) {
	visible, err := logCount(ctx, q, devices)
	if err != nil {
		return 0, err
	}
	var keyed int
	var first, last sql.NullString
	if err := q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM command_log_device_totals),
		(SELECT min(hour) FROM command_log_device_hours), (SELECT max(hour) FROM command_log_device_hours)`).Scan(&keyed, &first, &last); err != nil {
		return 0, err
	}
	query, args := spanCountSQL(devices, r, s)
	if a, errA := time.Parse(hourLayout, first.String); errA == nil {
		if b, errB := time.Parse(hourLayout, last.String); errB == nil {
			hours := int(b.Sub(a)/time.Hour) + 1
			cost := spanRowCost
			if devices != "" {
				cost += spanDeviceCost
			}
			if cost*keyed*hours >= visible {
				e := And(append([]Expr{r}, s.conds()...)...)
				query, args = "SELECT count(*) FROM command_logs t WHERE "+e.SQL, e.Args
			}
		}
	}
	var n int
	return n, q.QueryRowContext(ctx, query, args...).Scan(&n)
}

// countSpan is spanCount, taken from the held keys when they can say it exactly
// (heldSpanCount): at five million logs, a confined viewer's logs before a date were
// counted in 25 ms from the hourly counters, and in half a millisecond from the keys.
func (db *DB) countSpan(ctx context.Context, q rowQueryer, devices string, r Expr, s span) (int, error) {
	if n, ok, err := db.heldSpanCount(ctx, q, devices, s); ok || err != nil {
		return n, err
	}
	return spanCount(ctx, q, devices, r, s)
}

// heldSpanCount counts the logs within s of devices (a JSON array of counter keys, ""
// for every device) in q's snapshot from the held keys: while every log is in created
// order, s is a range of ids (spanIDs), and the logs in it are the held keys in it that
// are of those devices. The keys still hold a log deleted since they were read, unless
// a prune took it off the front, so the count is theirs only when the keys hold as many
// logs, from the oldest to the newest, as the table has (its counter): then they hold
// exactly its logs. False, having counted nothing, otherwise, and inside a Batch, whose
// uncommitted logs are never held.
func (db *DB) heldSpanCount(ctx context.Context, q rowQueryer, devices string, s span) (int, bool, error) {
	if db.batchTx(ctx) != nil || db.devices.cur.Load() == nil {
		return 0, false, nil
	}
	tx, ok := q.(*sql.Tx)
	if !ok {
		var err error
		if tx, err = db.r.BeginTx(ctx, nil); err != nil {
			return 0, false, err
		}
		defer tx.Rollback()
	}
	var inOrder bool
	var total, newest int64
	if err := tx.QueryRowContext(ctx, `SELECT `+inOrderSQL+`,
		(SELECT total FROM command_log_totals WHERE id = 1), (SELECT coalesce(max(id), 0) FROM command_logs)`).
		Scan(&inOrder, &total, &newest); err != nil || !inOrder {
		return 0, false, err
	}
	keys, oldest, err := db.devices.atOldest(ctx, tx, int64(alongMost))
	if err != nil || keys == nil {
		return 0, false, err
	}
	var want []bool // by device key; nil for every device
	if devices != "" {
		var set []int64
		if err := json.Unmarshal([]byte(devices), &set); err != nil {
			return 0, false, nil
		}
		want = keys.keySet(set)
	}
	lo, hi, err := spanIDs(ctx, tx, s)
	if err != nil {
		return 0, false, err
	}
	// Offsets into the keys: from..to of every log of the snapshot, lo..hi of the span's.
	from, to := max(oldest, keys.base), min(newest, keys.upto)
	if from > to {
		return 0, total == 0, nil
	}
	lo, hi = max(lo, from), min(hi, to)
	if lo > hi {
		lo, hi = 1, 0 // no log within s (spanIDs gives the ends of int64 for none)
	} else {
		lo, hi = lo-keys.base, hi-keys.base
	}
	from, to = from-keys.base, to-keys.base
	parts := heldParts(from, to)
	held, in := make([]int64, len(parts)), make([]int64, len(parts))
	inParts(parts, func(p int, a, b int64) {
		var h, n int64
		for i := a; i <= b; i++ {
			if k := keys.keys[i]; k >= 0 {
				h++
				if i >= lo && i <= hi && (want == nil || want[k>>1]) {
					n++
				}
			}
		}
		held[p], in[p] = h, n
	})
	var h, n int64
	for p := range parts {
		h, n = h+held[p], n+in[p]
	}
	if h != total {
		return 0, false, nil
	}
	db.devices.spans.Add(1)
	return int(n), true, nil
}

// spanCountSQL is one statement, so one snapshot, that counts the logs within s of
// devices (see deviceSetSQL), which are those r keeps.
func spanCountSQL(devices string, r Expr, s span) (string, []any) {
	logs := func(within span) (string, []any) {
		e := And(append([]Expr{r}, within.conds()...)...)
		return "(SELECT count(*) FROM command_logs t WHERE " + e.SQL + ")", e.Args
	}
	var fromKey, fromStart, toKey, toStart string
	if s.from != "" {
		fromKey, fromStart = hourOf(s.from)
	}
	if s.to != "" {
		toKey, toStart = hourOf(s.to)
	}
	if s.from != "" && s.to != "" && fromKey >= toKey {
		// Both ends in one hour, or to before from: the logs between them, no more.
		sql, args := logs(s)
		return "SELECT " + sql, args
	}
	// The hours wholly inside the span, from the counters.
	query, args := "SELECT (SELECT coalesce(sum(total), 0) FROM command_log_device_hours WHERE 1", []any(nil)
	if s.from != "" {
		query, args = query+" AND hour > ?", append(args, fromKey)
	}
	if s.to != "" {
		query, args = query+" AND hour < ?", append(args, toKey)
	}
	cond, dargs := deviceSetSQL(devices)
	query, args = query+cond+")", append(args, dargs...)
	// The logs of the hours the ends fall in: s narrowed to each of those hours.
	if s.from != "" {
		sql, a := logs(s.within(fromStart, true))
		query, args = query+" + "+sql, append(args, a...)
	}
	if s.to != "" {
		sql, a := logs(s.within(toStart, false))
		query, args = query+" + "+sql, append(args, a...)
	}
	return query, args
}

// inOrderSQL is true while every log was written in created order (command_log_order,
// migration 0065): the order's tail at or below the lowest id. A subquery, so that a
// statement reads it in the same snapshot as what depends on it.
const inOrderSQL = `(SELECT tail <= coalesce((SELECT min(id) FROM command_logs), tail) FROM command_log_order WHERE id = 1)`

// logsInOrder reports whether every log was written in created order
// (command_log_order, migration 0065): then the logs in id order are in the order of
// their created stamps, ties by id, and a list ordered by id is the list ordered so.
func (db *DB) logsInOrder(ctx context.Context) (bool, error) {
	var in bool
	if err := db.reader(ctx).QueryRowContext(ctx, `SELECT `+inOrderSQL).Scan(&in); err != nil {
		return false, fmt.Errorf("store: list command_logs: %w", err)
	}
	return in, nil
}

// pageByValues is a page of logs ordered by a field of few values (Order.Values: a
// user name, the outcome) for a condition on the device and bounds on created, which
// the field's index holds after the value (migration 0068). Sorting the logs of a week
// reads them all; along the index they lie in one run per value, in created order. The
// runs are sought one value after another: the offset is counted off run by run, each
// count reading no further than what is left of it, and the page read from the run it
// starts in and those after. In one snapshot.
func (db *DB) pageByValues(ctx context.Context, m *Model, where string, args []any, q Query) ([]int64, error) {
	rq, done, err := db.snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", m.Table, err)
	}
	defer done()
	o := q.Order[0]
	rows, err := rq.QueryContext(ctx, o.Values+" ORDER BY 1 "+orderDir(o.Desc))
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", m.Table, err)
	}
	var vals []any
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: list %s: %w", m.Table, err)
		}
		vals = append(vals, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list %s: %w", m.Table, err)
	}
	along := m.Table + " t INDEXED BY " + o.Index
	skip, ids := q.Offset, make([]int64, 0, q.Limit)
	for _, v := range vals {
		run, rargs := where+" AND "+o.SQL+" = ?", append(slices.Clip(args), v)
		if skip > 0 {
			var n int
			if err := rq.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM "+along+" WHERE "+run+" LIMIT ?)",
				append(slices.Clip(rargs), skip)...).Scan(&n); err != nil {
				return nil, fmt.Errorf("store: list %s: %w", m.Table, err)
			}
			if n < skip {
				skip -= n
				continue
			}
		}
		page := q
		page.from, page.Offset, page.Limit, page.Keyed = Expr{SQL: along}, skip, q.Limit-len(ids), false
		got, _, err := db.pageIDs(ctx, rq, m, run, rargs, page)
		if err != nil {
			return nil, err
		}
		ids, skip = append(ids, got...), 0
		if len(ids) == q.Limit {
			break
		}
	}
	return ids, nil
}

// snapshotReader reads rows and single rows.
type snapshotReader interface {
	querier
	rowQueryer
}

// snapshot is a reader that sees one state of the file for several statements: the
// batch's transaction when there is one (batchTx), else a read transaction that done
// ends.
func (db *DB) snapshot(ctx context.Context) (snapshotReader, func(), error) {
	if tx := db.batchTx(ctx); tx != nil {
		return tx, func() {}, nil
	}
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	return tx, func() { tx.Rollback() }, nil
}
