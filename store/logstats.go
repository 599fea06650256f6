package store

import (
	"context"
	"fmt"
	"math"
	"time"
)

// LogStats is the statistics/ answer over the logs a viewer may see. A cancelled
// execution is a log (Total, its command in TopCommands) but neither a success nor a
// failure: it counts in no failure, error or success rate.
type LogStats struct {
	Total, Successful int64
	SuccessRate       float64 // percent of the logs that succeeded or failed, two decimals; 0 with none
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

// The counters' rows with a log's columns, as countsView is (loglist.go).
const (
	hoursView = `(SELECT hour, nullif(device_key, 0) AS device_id, outcome, CASE WHEN outcome = 1 THEN 1 ELSE 0 END AS success, n
		FROM command_log_hours) t`
	errorsView = `(SELECT nullif(device_key, 0) AS device_id, error, n FROM command_log_errors) t`
)

// LogStatistics computes the statistics of the logs matching where (a viewer's scope),
// with last_24h counted back from now. A scope on what the counters hold of a log is
// answered from them; any other from the logs it keeps.
func (db *DB) LogStatistics(ctx context.Context, where Expr, now time.Time) (LogStats, error) {
	rq := db.reader(ctx)
	var st LogStats
	var cancelled int64
	var err error
	if readsOnly(where, countColumns) {
		err = rq.QueryRowContext(ctx, `SELECT `+outcomeSums+` FROM `+countsView+` WHERE `+where.SQL, where.Args...).
			Scan(&st.Total, &st.Successful, &cancelled)
	} else {
		err = rq.QueryRowContext(ctx, `SELECT `+outcomeSums+` FROM `+logOutcomes+` WHERE `+where.SQL, where.Args...).
			Scan(&st.Total, &st.Successful, &cancelled)
	}
	if err == nil {
		st.Last24h, err = window(ctx, rq, where, now.Add(-24*time.Hour))
	}
	if err == nil {
		st.TopCommands, st.CommonErrors, err = tops(ctx, rq, where)
	}
	if err != nil {
		return LogStats{}, fmt.Errorf("store: log statistics: %w", err)
	}
	if decided := st.Total - cancelled; decided > 0 {
		st.SuccessRate = math.Round(float64(st.Successful)*10000/float64(decided)) / 100
	}
	return st, nil
}

// outcomeSums are every log, the successful ones and the cancelled ones, over rows with
// an outcome and a count n (aliased t).
const outcomeSums = `coalesce(sum(t.n), 0), coalesce(sum(CASE WHEN t.outcome = 1 THEN t.n END), 0),
	coalesce(sum(CASE WHEN t.outcome = 2 THEN t.n END), 0)`

// cancelledSQL tells a cancelled execution's log (t) by its failure's reason.
const cancelledSQL = `(t.success = 0 AND json_valid(t.failure) AND json_extract(t.failure, '$.reason') = 'cancelled')`

// logOutcomes is the logs, each with its outcome and a count of one, as the counters'
// rows are (aliased t).
const logOutcomes = `(SELECT t.*, CASE WHEN t.success <> 0 THEN 1 WHEN ` + cancelledSQL + ` THEN 2 ELSE 0 END AS outcome,
	1 AS n FROM command_logs t) t`

// window counts the logs matching where created at or after since: under a condition
// on the device and outcome, the whole hours from the hourly counters and the part of
// since's hour from the logs.
func window(ctx context.Context, rq querier, where Expr, since time.Time) (Window, error) {
	logs := And(where, Expr{SQL: "t.created >= ?", Args: []any{Stamp(since)}})
	var total, ok, cancelled int64
	if readsOnly(where, hourColumns) {
		edge := since.UTC().Truncate(time.Hour).Add(time.Hour)
		hours := And(where, Expr{SQL: "t.hour >= ?", Args: []any{edge.Format(hourLayout)}})
		if err := rq.QueryRowContext(ctx, `SELECT `+outcomeSums+` FROM `+hoursView+` WHERE `+hours.SQL, hours.Args...).
			Scan(&total, &ok, &cancelled); err != nil {
			return Window{}, err
		}
		logs = And(logs, Expr{SQL: "t.created < ?", Args: []any{Stamp(edge)}})
	}
	var partTotal, partOK, partCancelled int64
	if err := rq.QueryRowContext(ctx, `SELECT `+outcomeSums+` FROM `+logOutcomes+` WHERE `+logs.SQL, logs.Args...).
		Scan(&partTotal, &partOK, &partCancelled); err != nil {
		return Window{}, err
	}
	total, ok, cancelled = total+partTotal, ok+partOK, cancelled+partCancelled
	return Window{Total: total, Successful: ok, Failed: total - ok - cancelled}, nil
}

// tops are the most run commands and the most common errors of the logs matching
// where.
func tops(ctx context.Context, rq querier, where Expr) ([]NameCount, []NameCount, error) {
	// Summed by command first, in the counters' own order, then by name (a deleted
	// command's logs keep its name under key 0).
	commands, errors := `SELECT command_name, sum(c) AS c FROM (SELECT t.command_key, t.command_name, sum(t.n) AS c FROM `+
		commandsView+` WHERE `+where.SQL+` GROUP BY t.command_key, t.command_name) s GROUP BY command_name`,
		`SELECT t.error, sum(t.n) AS c FROM `+errorsView+` WHERE `+where.SQL+` GROUP BY t.error`
	if !readsOnly(where, []string{"device_id"}) {
		failed := And(where, Expr{SQL: "t.success = 0 AND NOT coalesce(" + cancelledSQL + ", FALSE)"})
		commands = `SELECT t.command_name, count(*) AS c FROM command_logs t WHERE ` + where.SQL + ` GROUP BY t.command_name`
		errors = `SELECT substr(t.error_message, 1, 100), count(*) AS c FROM command_logs t WHERE ` + failed.SQL + ` GROUP BY 1`
		top, err := nameCounts(ctx, rq, `SELECT * FROM (`+commands+`) s ORDER BY c DESC, 1 LIMIT ?`, append(where.Args, statsTop)...)
		if err != nil {
			return nil, nil, err
		}
		errs, err := nameCounts(ctx, rq, `SELECT * FROM (`+errors+`) s ORDER BY c DESC, 1 LIMIT ?`, append(failed.Args, statsTop)...)
		return top, errs, err
	}
	top, err := nameCounts(ctx, rq, `SELECT * FROM (`+commands+`) s WHERE c > 0 ORDER BY c DESC, 1 LIMIT ?`, append(where.Args, statsTop)...)
	if err != nil {
		return nil, nil, err
	}
	errs, err := nameCounts(ctx, rq, `SELECT * FROM (`+errors+`) s WHERE c > 0 ORDER BY c DESC, 1 LIMIT ?`, append(where.Args, statsTop)...)
	return top, errs, err
}

func nameCounts(ctx context.Context, rq querier, query string, args ...any) ([]NameCount, error) {
	rows, err := rq.QueryContext(ctx, query, args...)
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
