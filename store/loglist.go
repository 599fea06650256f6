package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The command logs' list: its count and its pages, called from ListKeyed through the
// model's List hook. It is plain SQL over the table, its indexes, the counters kept
// beside it (logcounts.go) and the word index (logsearch.go):
//
//   - The count is exact. A condition that reads no more of a log than the counters
//     hold (its device, user, user name and outcome; its device and command) is
//     answered from them, evaluated on their rows as on a log's; a range of created
//     besides a condition on the device and outcome, from the hourly counters and the
//     logs of the two hours at its ends; anything else by SQLite from the indexes.
//   - A page walks the index of its ordering (Order.Index) when the count says the page
//     lies near the walk's start: the walk then reads about (offset + limit) × every
//     log / count entries, and is taken while that is at most walkOver times the logs
//     the condition keeps, which SQLite would otherwise read and sort (for a search, at
//     most searchWalkMost entries, each tested in the word index). Else SQLite reads
//     the condition's logs through the index it picks and sorts them.
//   - A filter on a command or a user also names the commands' (users') names, which
//     the counters hold, so that the name's index finds their logs.

// walkOver is how many index entries a walk may read for each log the condition keeps;
// searchWalkMost is how many a search's walk may read in all, each sought in the word
// index (about 0.1 ms a log).
const (
	walkOver       = 4
	searchWalkMost = 500
)

// logList is one list of command logs: a Query and the reader that answers it.
type logList struct {
	db     *DB
	rq     querier
	q      Query
	search string // ?q=, "" when none
	// pgSearch is the search's condition on PostgreSQL (logSearchPG), whose one form
	// serves the count and the page.
	pgSearch Expr
}

// listLogs is ListKeyed for the command logs.
func (db *DB) listLogs(ctx context.Context, q Query) ([]int64, int, []any, error) {
	l := logList{db: db, rq: db.reader(ctx), q: q, search: strings.TrimSpace(q.Search)}
	if db.pg && l.search != "" {
		var err error
		if l.pgSearch, err = logSearchPG(ctx, l.rq, l.search); err != nil {
			return nil, 0, nil, err
		}
	}
	total, err := l.count(ctx)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("store: count command logs: %w", err)
	}
	if total == 0 || (q.After == nil && q.Offset >= total) {
		return nil, total, nil, nil
	}
	ids, next, err := l.page(ctx, total)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("store: list command logs: %w", err)
	}
	return ids, total, next, nil
}

// count is the number of logs the list holds.
func (l *logList) count(ctx context.Context) (int, error) {
	switch {
	case l.search != "" && l.db.pg:
		return countLogs(ctx, l.rq, append(slices.Clip(l.q.Where), l.pgSearch))
	case l.search != "":
		return l.db.searchCount(ctx, l.rq, l.search, And(l.q.Where...))
	}
	return countLogs(ctx, l.rq, l.q.Where)
}

// countLogs counts the logs that match every condition of where.
func countLogs(ctx context.Context, rq querier, where []Expr) (int, error) {
	rest, spans := splitCreated(where)
	cond := And(rest...)
	switch {
	case len(spans) == 0 && readsOnly(cond, countColumns):
		return sumCounters(ctx, rq, countsView, cond)
	case len(spans) == 0 && readsOnly(cond, commandColumns):
		return sumCounters(ctx, rq, commandsView, cond)
	case len(spans) > 0 && readsOnly(cond, hourColumns):
		return countSpan(ctx, rq, cond, spans)
	}
	e := And(where...)
	var n int
	err := rq.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE `+e.SQL, e.Args...).Scan(&n)
	return n, err
}

// page is the list's page: its ids, and the sort key of its last log when q.Keyed and
// more follow.
func (l *logList) page(ctx context.Context, total int) ([]int64, []any, error) {
	q := l.q
	where := withNames(ctx, l.rq, q.Where)
	if l.search != "" && q.After == nil && !q.Keyed {
		if ids, ok, err := l.byWordIndex(ctx, where); ok || err != nil {
			return ids, nil, err
		}
	}
	walk, err := l.walks(ctx, total)
	if err != nil {
		return nil, nil, err
	}
	if l.search != "" {
		switch {
		case l.db.pg:
			where = append(where, l.pgSearch)
		case walk:
			where = append(where, logSearchRow(l.search))
		case And(where...).SQL == True.SQL:
			where = append(where, logSearchAny(l.search))
		default:
			where = append(where, logSearchSet(l.search))
		}
	}
	if q.After != nil {
		after, err := afterKey(q.Order, q.After)
		if err != nil {
			return nil, nil, err
		}
		where, q.Offset = append(where, after), 0
	}
	if walk {
		q.from = Expr{SQL: "command_logs t INDEXED BY " + q.Order[0].Index}
		if q.Order[0].Index == ByRowid {
			q.from = Expr{SQL: "command_logs t NOT INDEXED"}
		}
	}
	e := And(where...)
	return l.db.pageIDs(ctx, l.rq, models[TypeCommandLog], e.SQL, e.Args, q)
}

// walked are the columns of a log each ordering's index holds: a walk along it tests
// a condition on them without reading the log. The table itself (ByRowid) holds them
// all, at the cost of reading each log.
var walked = map[string][]string{
	"command_logs_created":  {"created", "id", "device_id", "success"},
	"command_logs_username": {"username", "created", "id", "device_id"},
	"command_logs_success":  {"success", "created", "id", "device_id"},
	"command_logs_duration": {"execution_duration", "created", "id", "device_id"},
}

// walks reports whether the page is read along its ordering's index: when the index
// holds what the list's conditions read, and the walk to the page's end reads at most
// walkOver entries for each of the total logs the list keeps, which reading them all and
// sorting would read (along the table, one). A search is tested in the word index for
// each entry: its walk reads searchWalkMost entries at most. Otherwise SQLite reads the
// logs through the index it picks (the device's, a name's), and sorts them if it must.
func (l *logList) walks(ctx context.Context, total int) (bool, error) {
	q := l.q
	if len(q.Order) == 0 || q.Order[0].Index == "" || l.db.pg {
		// PostgreSQL's planner picks the index itself (pgdriver.go drops the hints), from
		// its statistics: summing every counter to choose for it would be time spent for
		// nothing.
		return false, nil
	}
	over := float64(walkOver)
	if cols, ok := walked[q.Order[0].Index]; ok {
		if !readsOnly(And(q.Where...), cols) {
			return false, nil
		}
	} else if _, spans := splitCreated(q.Where); len(spans) > 0 {
		// Along the table, logs of a span of created lie together, not spread.
		return false, nil
	} else {
		over = 1
	}
	all, err := sumCounters(ctx, l.rq, countsView, True)
	if err != nil {
		return false, err
	}
	reach := q.Offset + q.Limit
	if q.After != nil {
		reach = q.Limit // from the cursor, where the index is sought
	}
	entries := float64(reach) * float64(all) / float64(total)
	if l.search != "" && entries > searchWalkMost {
		return false, nil
	}
	return entries <= over*float64(total), nil
}

// byWordIndex is a search's page ordered by created or by id (either way), read from
// the word index's matches in the order of their ids, which it gives at no cost, as far
// as the page's end: false, having read nothing, when a name holds the search or the
// ordering is another. Ordered by id that is the page. Ordered by created it is when the
// logs read are in created order among themselves and no other match comes between
// them: no log below the lowest id read is newer than the oldest read (the mirror for
// an ascending order), which holds for logs written as they run. When it does not hold,
// false.
func (l *logList) byWordIndex(ctx context.Context, where []Expr) ([]int64, bool, error) {
	q := l.q
	words, ok := logWords(l.search)
	if !ok || l.db.pg || len(q.Order) != 1 || (q.Order[0].SQL != "t.created" && q.Order[0].SQL != "t.id") || namesHold(ctx, l.rq, l.search) {
		return nil, false, nil
	}
	desc, byID := q.Order[0].Desc, q.Order[0].SQL == "t.id"
	e := And(where...)
	// CROSS JOIN keeps the word index the outer loop, read in the order of its ids.
	rows, err := l.rq.QueryContext(ctx, `SELECT t.id, t.created FROM command_log_words w CROSS JOIN command_logs t
		WHERE w.command_log_words MATCH ? AND t.id = w.rowid AND (`+e.SQL+`) ORDER BY w.rowid `+map[bool]string{true: "DESC", false: "ASC"}[desc]+
		` LIMIT ?`, append(append([]any{words}, e.Args...), q.Offset+q.Limit)...)
	if err != nil {
		return nil, false, err
	}
	type entry struct {
		id      int64
		created string
	}
	var read []entry
	for rows.Next() {
		var x entry
		if err := rows.Scan(&x.id, &x.created); err != nil {
			rows.Close()
			return nil, false, err
		}
		read = append(read, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(read) <= q.Offset {
		return nil, err == nil && len(read) <= q.Offset && len(read) < q.Offset+q.Limit, err
	}
	if !byID && len(read) == q.Offset+q.Limit {
		// The last log read by id bounds what another match may be.
		last := read[len(read)-1]
		edge := last
		for _, x := range read {
			if (desc && x.created < edge.created) || (!desc && x.created > edge.created) {
				edge = x
			}
		}
		check := `SELECT count(*) FROM (SELECT 1 FROM command_logs INDEXED BY command_logs_created WHERE created > ? AND id < ? LIMIT 1)`
		if !desc {
			check = `SELECT count(*) FROM (SELECT 1 FROM command_logs INDEXED BY command_logs_created WHERE created < ? AND id > ? LIMIT 1)`
		}
		var other int
		if err := l.rq.QueryRowContext(ctx, check, edge.created, last.id).Scan(&other); err != nil || other > 0 {
			return nil, false, err
		}
	}
	if !byID {
		slices.SortStableFunc(read, func(a, b entry) int {
			c := strings.Compare(a.created, b.created)
			if c == 0 {
				c = cmp.Compare(a.id, b.id)
			}
			if desc {
				return -c
			}
			return c
		})
	}
	ids := make([]int64, 0, q.Limit)
	for _, x := range read[q.Offset:] {
		ids = append(ids, x.id)
	}
	return ids, true, nil
}

// The counters' rows, with the columns of a log they count named as the log's, so that
// a condition on those columns of a log is the same condition on them (aliased t). A
// flag is 0 or 1, as the log's column is (in PostgreSQL too).
const (
	countsView = `(SELECT nullif(device_key, 0) AS device_id, nullif(user_key, 0) AS user_id, username,
		outcome, CASE WHEN outcome = 1 THEN 1 ELSE 0 END AS success, n FROM command_log_counts) t`
	commandsView = `(SELECT command_key, nullif(command_key, 0) AS command_id, command_name, nullif(device_key, 0) AS device_id,
		n FROM command_log_commands) t`
)

// The columns of a log each counter holds.
var (
	countColumns   = []string{"device_id", "user_id", "username", "success"}
	commandColumns = []string{"device_id", "command_id"}
	hourColumns    = []string{"device_id", "success"}
)

// readsOnly reports whether the condition is known to read no column of the log but
// cols.
func readsOnly(e Expr, cols []string) bool {
	if e.Reads == nil {
		return false
	}
	for _, c := range e.Reads {
		if !slices.Contains(cols, c) {
			return false
		}
	}
	return true
}

// sumCounters is the sum of the counters' n over the rows of view that match cond.
func sumCounters(ctx context.Context, rq querier, view string, cond Expr) (int, error) {
	var n int
	err := rq.QueryRowContext(ctx, `SELECT coalesce(sum(t.n), 0) FROM `+view+` WHERE `+cond.SQL, cond.Args...).Scan(&n)
	return n, err
}

// withNames adds to where, for each condition on the log's command (user) alone, the
// names the commands (users) it keeps ran under, as the counters hold them: the same
// logs, found through the name's index. Logs keep the name they ran with, and the
// counters each pair of a command and a name that some log has.
func withNames(ctx context.Context, rq querier, where []Expr) []Expr {
	out := slices.Clip(where)
	for _, e := range where {
		var query string
		switch {
		case len(e.Reads) == 1 && e.Reads[0] == "command_id":
			query = `SELECT DISTINCT t.command_name FROM ` + commandsView + ` WHERE ` + e.SQL
		case len(e.Reads) == 1 && e.Reads[0] == "user_id":
			query = `SELECT DISTINCT t.username AS command_name FROM ` + countsView + ` WHERE ` + e.SQL
		default:
			continue
		}
		names, err := scalars[string](ctx, rq, query, e.Args...)
		if err != nil {
			continue // the condition alone still holds the list
		}
		col := "t.command_name"
		if e.Reads[0] == "user_id" {
			col = "t.username"
		}
		args := make([]any, len(names))
		for i, n := range names {
			args[i] = n
		}
		out = append(out, compareInNames(col, args))
	}
	return out
}

// compareInNames is col IN (names), false for no name.
func compareInNames(col string, names []any) Expr {
	if len(names) == 0 {
		return False
	}
	return Expr{SQL: col + " IN (" + placeholders(len(names)) + ")", Args: names}
}

// splitCreated separates the bounds on created (a Range on it) from the other
// conditions.
func splitCreated(where []Expr) (rest, spans []Expr) {
	for _, e := range where {
		if e.Range != nil && len(e.Reads) == 1 && e.Reads[0] == "created" {
			spans = append(spans, e)
		} else {
			rest = append(rest, e)
		}
	}
	return rest, spans
}

// hourLayout is the hour counters' key: the first 13 characters of a stamp
// (TimeFormat), so that a log's hour is at or after hour H exactly when its stamp is at
// or after the stamp of H's first instant.
const hourLayout = "2006-01-02T15"

// countSpan counts the logs cond (a condition on the device and outcome) keeps within
// spans (bounds on created): the whole hours inside the bounds from the hourly counters,
// the logs of the hours the bounds fall in from the created index.
func countSpan(ctx context.Context, rq querier, cond Expr, spans []Expr) (int, error) {
	var lo, hi string // the tightest bounds, as stamps
	var lower, upper []Expr
	for _, e := range spans {
		v, _ := e.Range.Value.(string)
		switch e.Range.Op {
		case ">", ">=":
			lo, lower = max(lo, v), append(lower, e)
		default:
			if hi == "" || v < hi {
				hi = v
			}
			upper = append(upper, e)
		}
	}
	// The whole hours are from the hour after lo's to the hour before hi's.
	first, last := "", ""
	if lo != "" {
		first = ParseStamp(lo).Truncate(time.Hour).Add(time.Hour).Format(hourLayout)
	}
	if hi != "" {
		last = ParseStamp(hi).Truncate(time.Hour).Format(hourLayout)
	}
	all := And(append([]Expr{cond}, spans...)...)
	if last != "" && first >= last {
		// Within an hour or two: the logs themselves.
		var n int
		err := rq.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE `+all.SQL, all.Args...).Scan(&n)
		return n, err
	}
	// Each edge is the logs between a bound and the whole hours, with the bounds of its
	// side alone: the bounds of the other side hold for all of them, and PostgreSQL,
	// taking each bound as narrowing the rows, expected none and read them one by one.
	hours := []Expr{cond}
	var edges []Expr
	if first != "" {
		hours = append(hours, Expr{SQL: "t.hour >= ?", Args: []any{first}})
		edges = append(edges, And(append([]Expr{cond, {SQL: "t.created < ?", Args: []any{first + ":00:00.000000Z"}}}, lower...)...))
	}
	if last != "" {
		hours = append(hours, Expr{SQL: "t.hour < ?", Args: []any{last}})
		edges = append(edges, And(append([]Expr{cond, {SQL: "t.created >= ?", Args: []any{last + ":00:00.000000Z"}}}, upper...)...))
	}
	n, err := sumCounters(ctx, rq, hoursView, And(hours...))
	for _, e := range edges {
		if err != nil {
			break
		}
		var part int
		err = rq.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE `+e.SQL, e.Args...).Scan(&part)
		n += part
	}
	return n, err
}
