package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// LogStats is the statistics/ answer over the logs a viewer may see.
type LogStats struct {
	Total, Successful int64
	SuccessRate       float64 // percent, two decimals; 0 with no logs
	Last24h           Window
	TopCommands       []NameCount // at most 10, by count then name
	CommonErrors      []NameCount // at most 10 failed-log messages (first 100 chars), by count then text
}

// Window counts the logs created in a time window.
type Window struct {
	Total, Successful, Failed int64
}

// NameCount is one row of a top-N list.
type NameCount struct {
	Name  string
	Count int64
}

// statsTop is how many commands and errors the statistics list.
const statsTop = 10

// logDevices is the set of counter keys (deviceKeys) whose logs all match where, and
// false if where depends on more than the log's device.
func (db *DB) logDevices(ctx context.Context, q rowQueryer, where Expr) (string, bool) {
	if notByDevice.has(where.SQL) {
		return "", false
	}
	keys, err := db.deviceKeys(ctx, q, where)
	if err != nil {
		if ctx.Err() == nil {
			notByDevice.add(where.SQL)
		}
		return "", false
	}
	return keys, true
}

// countByDevice counts the logs matching where from the per-device counters, with the
// set of device keys (deviceKeys) they were summed over, and false if where depends on
// more than the log's device.
//
// The sum is kept until the next write committed to the file (keptCount): each page of
// a viewer's logs, and of every viewer of the same devices, asks for the same sum, and
// reading a hundred devices' counters is a fifth of such a page's work.
func (db *DB) countByDevice(ctx context.Context, q rowQueryer, where Expr) (int, string, bool) {
	keys, ok := db.logDevices(ctx, q, where)
	if !ok {
		return 0, "", false
	}
	n, err := db.keptCount(ctx, keys, func() (int, error) { return logCount(ctx, q, keys) })
	if err != nil {
		return 0, "", false
	}
	return n, keys, true
}

// countByUser counts the logs matching where from the per-device, per-user counters
// (command_log_user_counts, migration 0067), and false if where reads more of a log
// than its device_id, user_id, username and success: a user's logs, a viewer's failed
// ones. The sum is kept as the device sums are (keptCount).
func (db *DB) countByUser(ctx context.Context, q rowQueryer, where Expr) (int, bool) {
	if notByUser.has(where.SQL) {
		return 0, false
	}
	n, err := db.keptCount(ctx, fmt.Sprintf("users\x00%s\x00%#v", where.SQL, where.Args), func() (int, error) {
		var n int
		err := q.QueryRowContext(ctx, `SELECT coalesce(sum(t.total), 0) FROM command_log_user_counts t WHERE `+where.SQL,
			where.Args...).Scan(&n)
		return n, err
	})
	if err != nil {
		if ctx.Err() == nil {
			notByUser.add(where.SQL)
		}
		return 0, false
	}
	return n, true
}

// allLogs is the number of every log, kept as the device sums are (keptCount).
func (db *DB) allLogs(ctx context.Context) (int, error) {
	return db.keptCount(ctx, "", func() (int, error) { return logCount(ctx, db.reader(ctx), "") })
}

// keptCount is count's answer, kept in DB.sums under key until the next write committed
// to the file: filed under the data version read before it (DB.version), so it is never
// older than its version. Errors are not kept.
func (db *DB) keptCount(ctx context.Context, key string, count func() (int, error)) (int, error) {
	version, keep := db.version(ctx)
	if keep {
		if n, ok := db.sums.get(version, key); ok {
			return n.(int), nil
		}
	}
	n, err := count()
	if err == nil && keep {
		db.sums.put(version, key, n)
	}
	return n, err
}

// deviceKeys is the set of counter keys, a JSON array, whose logs all match where, a
// condition on the log's device alone: the devices that match (0 for the logs of
// deleted devices, when it matches them). It is taken over every device rather than
// over the counters' keys, so that it depends only on tables that move the generation
// (a device's first log adds a counter, not a device), and is kept in the check cache:
// a viewer's every page would otherwise test its condition against each device again.
// An error means where reads more than the device.
func (db *DB) deviceKeys(ctx context.Context, q rowQueryer, where Expr) (string, error) {
	query := `SELECT coalesce(json_group_array(k.device_id), '[]')
		FROM (SELECT id AS device_id FROM devices UNION ALL SELECT 0) k
		WHERE EXISTS (SELECT 1 FROM (SELECT nullif(k.device_id, 0) AS device_id) t WHERE ` + where.SQL + `)`
	return db.cachedSet(ctx, q, "devicekeys", query, where)
}

// cachedSet is the one value query reads, with where's arguments: kept in the check
// cache under kind and where, unless where reads a table that moves no generation.
func (db *DB) cachedSet(ctx context.Context, q rowQueryer, kind, query string, where Expr) (string, error) {
	load := func() (string, error) {
		var set string
		err := q.QueryRowContext(ctx, query, where.Args...).Scan(&set)
		return set, err
	}
	if uncounted(where.SQL) {
		return load()
	}
	return cached(ctx, db, fmt.Sprintf("%s\x00%s\x00%#v", kind, where.SQL, where.Args), load)
}

// logPairs is the set of (device counter key, outcome) pairs whose logs all match where,
// a condition on the log's device and outcome alone, as deviceKeys is for the device
// alone; false if where depends on more. It is kept in the check cache as the device
// keys are.
func (db *DB) logPairs(ctx context.Context, q rowQueryer, where Expr) ([]logPair, bool) {
	if notByPair.has(where.SQL) {
		return nil, false
	}
	query := `SELECT coalesce(json_group_array(json_array(k.device_id, k.success)), '[]')
		FROM (SELECT d.device_id, s.success FROM (SELECT id AS device_id FROM devices UNION ALL SELECT 0) d,
			(SELECT 0 AS success UNION ALL SELECT 1) s) k
		WHERE EXISTS (SELECT 1 FROM (SELECT nullif(k.device_id, 0) AS device_id, k.success AS success) t WHERE ` + where.SQL + `)`
	list, err := db.cachedSet(ctx, q, "devicepairs", query, where)
	rows, ok := decodeSet[[][2]int64](ctx, &notByPair, where.SQL, list, err)
	if !ok {
		return nil, false
	}
	pairs := make([]logPair, len(rows))
	for i, r := range rows {
		pairs[i] = logPair{key: r[0], ok: r[1] != 0}
	}
	return pairs, true
}

// outcomeDevices is, for a condition on the log's device and one outcome (a viewer's
// failed logs), the set of counter keys whose logs of that outcome it keeps, and the
// counters' column that counts them; false for a condition on more, or on both
// outcomes of some device and one of another.
func (db *DB) outcomeDevices(ctx context.Context, q rowQueryer, where Expr) (string, hourCount, bool) {
	pairs, ok := db.logPairs(ctx, q, where)
	if !ok {
		return "", "", false
	}
	keys := make([]int64, 0, len(pairs))
	for _, p := range pairs {
		if p.ok != pairs[0].ok {
			return "", "", false
		}
		keys = append(keys, p.key)
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return "", "", false
	}
	if len(pairs) > 0 && pairs[0].ok {
		return string(list), hourSuccessful, true
	}
	return string(list), hourFailed, true
}

// decodeSet is the JSON list a condition's set query read (err, its error), or false
// when the query or the decoding failed: the condition reads more than the query's
// row, and is remembered in not, unless the request ended meanwhile.
func decodeSet[T any](ctx context.Context, not *sqlSet, cond, list string, err error) (T, bool) {
	var v T
	if err == nil {
		err = json.Unmarshal([]byte(list), &v)
	}
	if err != nil {
		if ctx.Err() == nil {
			not.add(cond)
		}
		return v, false
	}
	return v, true
}

// notByDevice remembers the conditions that read more than the log's device, so that
// they are not tried against the counters again. The text of a condition has its
// values as parameters, so the set stays as small as the kinds of filters used; past
// a bound it is emptied.
var notByDevice = sqlSet{m: map[string]bool{}}

// notByUser is notByDevice for the per-user counters (countByUser).
var notByUser = sqlSet{m: map[string]bool{}}

// notByPair is notByDevice for a log's device and outcome (logPairs).
var notByPair = sqlSet{m: map[string]bool{}}

type sqlSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *sqlSet) has(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[k]
}

func (s *sqlSet) add(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= 1000 {
		clear(s.m)
	}
	s.m[k] = true
}

// deviceStats sums the per-device counters over devices, a JSON array of their keys.
func deviceStats(ctx context.Context, tx *sql.Tx, devices string, st *LogStats) error {
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(total), 0), coalesce(sum(successful), 0)
		FROM command_log_device_totals WHERE device_id IN (SELECT value FROM json_each(?))`, devices).
		Scan(&st.Total, &st.Successful); err != nil {
		return err
	}
	var err error
	st.TopCommands, err = nameCounts(ctx, tx, `SELECT command_name, sum(total) AS n FROM command_log_device_counts
		WHERE device_id IN (SELECT value FROM json_each(?)) GROUP BY command_name HAVING n > 0
		ORDER BY n DESC, command_name LIMIT ?`, devices, statsTop)
	if err != nil {
		return err
	}
	st.CommonErrors, err = nameCounts(ctx, tx, `SELECT error, sum(total) AS n FROM command_log_device_errors
		WHERE device_id IN (SELECT value FROM json_each(?)) GROUP BY error HAVING n > 0
		ORDER BY n DESC, error LIMIT ?`, devices, statsTop)
	return err
}

// LogStatistics computes the statistics of the logs matching where (a viewer's scope),
// with last_24h counted back from now. An unconstrained viewer (where is True) reads the
// counters the insert/delete triggers keep, so the cost does not grow with the number of
// logs; anyone else gets queries on that condition.
func (db *DB) LogStatistics(ctx context.Context, where Expr, now time.Time) (LogStats, error) {
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return LogStats{}, fmt.Errorf("store: log statistics: %w", err)
	}
	// One read transaction: every number comes from the same snapshot.
	defer tx.Rollback()
	var st LogStats
	since := now.Add(-24 * time.Hour)
	if where.SQL == True.SQL {
		if err = countersStats(ctx, tx, &st); err == nil {
			st.Last24h, err = windowByHours(ctx, tx, "", where, since)
		}
	} else if devices, ok := db.logDevices(ctx, tx, where); ok {
		if err = deviceStats(ctx, tx, devices, &st); err == nil {
			st.Last24h, err = windowByHours(ctx, tx, devices, where, since)
		}
	} else if err = scopedStats(ctx, tx, where, &st); err == nil {
		st.Last24h, err = windowByLogs(ctx, tx, where, since)
	}
	if err != nil {
		return LogStats{}, fmt.Errorf("store: log statistics: %w", err)
	}
	if st.Total > 0 {
		st.SuccessRate = math.Round(float64(st.Successful)*10000/float64(st.Total)) / 100
	}
	return st, nil
}

// windowByLogs counts the logs matching where created at or after since from the logs.
func windowByLogs(ctx context.Context, tx *sql.Tx, where Expr, since time.Time) (Window, error) {
	// Two counts rather than count plus sum(success): each is answered from an index alone
	// ((device_id, created) or (created) for all; (device_id, success, created) or
	// (success, created) for the successful), where the sum would fetch every table row.
	after := Expr{SQL: "t.created >= ?", Args: []any{Stamp(since)}}
	all, succeeded := And(after, where), And(Expr{SQL: "t.success = 1"}, after, where)
	var w Window
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE `+all.SQL, all.Args...).Scan(&w.Total); err != nil {
		return Window{}, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE `+succeeded.SQL, succeeded.Args...).Scan(&w.Successful); err != nil {
		return Window{}, err
	}
	w.Failed = w.Total - w.Successful
	return w, nil
}

func countersStats(ctx context.Context, tx *sql.Tx, st *LogStats) error {
	if err := tx.QueryRowContext(ctx, `SELECT total, successful FROM command_log_totals WHERE id = 1`).
		Scan(&st.Total, &st.Successful); err != nil {
		return err
	}
	var err error
	st.TopCommands, err = nameCounts(ctx, tx, `SELECT command_name, total FROM command_log_counts
		WHERE total > 0 ORDER BY total DESC, command_name LIMIT ?`, statsTop)
	if err != nil {
		return err
	}
	st.CommonErrors, err = nameCounts(ctx, tx, `SELECT error, total FROM command_log_errors
		WHERE total > 0 ORDER BY total DESC, error LIMIT ?`, statsTop)
	return err
}

func scopedStats(ctx context.Context, tx *sql.Tx, where Expr, st *LogStats) error {
	// One pass gives the totals and the per-command counts: the rows are read once,
	// and the per-command groups are as few as the commands.
	rows, err := tx.QueryContext(ctx, `SELECT t.command_name, count(*), sum(t.success) FROM command_logs t
		WHERE `+where.SQL+` GROUP BY t.command_name`, where.Args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var all []NameCount
	for rows.Next() {
		var nc NameCount
		var ok int64
		if err := rows.Scan(&nc.Name, &nc.Count, &ok); err != nil {
			return err
		}
		st.Total += nc.Count
		st.Successful += ok
		all = append(all, nc)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// Go's string order is SQLite's BINARY collation, the counters' order.
	slices.SortFunc(all, func(a, b NameCount) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return strings.Compare(a.Name, b.Name)
	})
	st.TopCommands = append([]NameCount{}, all[:min(statsTop, len(all))]...)
	// substr(…, 1, 100) is exactly what the error counter trigger keys on, so both paths
	// group the same messages together.
	failed := And(Expr{SQL: "t.success = 0"}, where)
	st.CommonErrors, err = nameCounts(ctx, tx, `SELECT substr(t.error_message, 1, 100) AS e, count(*) AS n
		FROM command_logs t WHERE `+failed.SQL+` GROUP BY e ORDER BY n DESC, e LIMIT ?`, slices.Concat(failed.Args, []any{statsTop})...)
	return err
}

func nameCounts(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]NameCount, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []NameCount{}
	for rows.Next() {
		var nc NameCount
		if err := rows.Scan(&nc.Name, &nc.Count); err != nil {
			return nil, err
		}
		out = append(out, nc)
	}
	return out, rows.Err()
}
