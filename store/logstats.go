package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
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
	if where.SQL == True.SQL {
		err = countersStats(ctx, tx, &st)
	} else {
		err = scopedStats(ctx, tx, where, &st)
	}
	if err != nil {
		return LogStats{}, fmt.Errorf("store: log statistics: %w", err)
	}
	// Two counts rather than count plus sum(success): each is answered from an index alone
	// ((device_id, created) or (created) for all; (device_id, success, created) or
	// (success, created) for the successful), where the sum would fetch every table row.
	since := Expr{SQL: "t.created >= ?", Args: []any{Stamp(now.Add(-24 * time.Hour))}}
	all, succeeded := And(since, where), And(Expr{SQL: "t.success = 1"}, since, where)
	var ok int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE `+all.SQL, all.Args...).Scan(&st.Last24h.Total); err != nil {
		return LogStats{}, fmt.Errorf("store: log statistics: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE `+succeeded.SQL, succeeded.Args...).Scan(&ok); err != nil {
		return LogStats{}, fmt.Errorf("store: log statistics: %w", err)
	}
	st.Last24h.Successful, st.Last24h.Failed = ok, st.Last24h.Total-ok
	if st.Total > 0 {
		st.SuccessRate = math.Round(float64(st.Successful)*10000/float64(st.Total)) / 100
	}
	return st, nil
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
