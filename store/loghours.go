package store

import (
	"context"
	"database/sql"
	"time"
)

// The per-device hourly counters (command_log_device_hours) bucket every log by the
// first 13 characters of its created stamp, its UTC hour. Stamps have one fixed width,
// so a log's hour is at or after hour H exactly when its stamp is at or after the
// stamp of H's first instant: a bound on created through its index and a range of
// whole hours in the counters always split the logs in the same place.

// hourLayout is the hour key's layout: the first 13 characters of TimeFormat.
const hourLayout = "2006-01-02T15"

// hourKey is the counters' key of the hour t falls in.
func hourKey(t time.Time) string { return t.UTC().Format(hourLayout) }

// hourWalkFrom is the offset from which a page of logs ordered by created is found
// through the hourly counters rather than by skipping rows: below it, skipping costs
// less than reading the counters.
const hourWalkFrom = 500

// deviceSetSQL is the condition on a counter table's device_id for devices, a JSON
// array of counter keys, or no condition for every device (devices empty).
func deviceSetSQL(devices string) (string, []any) {
	if devices == "" {
		return "", nil
	}
	return ` AND device_id IN (SELECT value FROM json_each(?))`, []any{devices}
}

// windowByHours counts the logs of devices (see deviceSetSQL) that match where (a
// condition on the log's device alone) created at or after since: the whole hours from
// the counters, the part of since's hour after since through the created index.
func windowByHours(ctx context.Context, tx *sql.Tx, devices string, where Expr, since time.Time) (Window, error) {
	var w Window
	edge := since.UTC().Truncate(time.Hour).Add(time.Hour)
	cond, args := deviceSetSQL(devices)
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(total), 0), coalesce(sum(successful), 0)
		FROM command_log_device_hours WHERE hour >= ?`+cond, append([]any{hourKey(edge)}, args...)...).
		Scan(&w.Total, &w.Successful); err != nil {
		return Window{}, err
	}
	part, err := windowByLogs(ctx, tx, And(Expr{SQL: "t.created < ?", Args: []any{Stamp(edge)}}, where), since)
	if err != nil {
		return Window{}, err
	}
	w.Total += part.Total
	w.Successful += part.Successful
	w.Failed = w.Total - w.Successful
	return w, nil
}

// hourStart finds where a page at offset starts in a list of logs ordered by created
// (descending when desc), those of devices (see deviceSetSQL) that r keeps within s:
// the hourly counters of devices (their counted column: every log, or the one outcome
// r keeps) are summed from that end until the hour holding the offset's log. It
// returns s narrowed to leave out the hours before that one, and the offset within
// what remains; false when the offset is past every log. The hours s's
// bounds fall in hold logs outside s: the one at the start is counted from its logs,
// the one at the far end is where the page starts once every whole hour is passed.
// Conditions carry one bound on each side (span.conds): given two, SQLite reads the
// created index between one pair and tests the other on every log there.
func hourStart(ctx context.Context, q snapshotReader, devices string, counted hourCount, r Expr, s span, desc bool, offset int) (span, int, bool, error) {
	near, far := s.from, s.to
	if desc {
		near, far = s.to, s.from
	}
	cond, args := deviceSetSQL(devices)
	var nearKey, farKey string
	if near != "" {
		var start string
		nearKey, start = hourOf(near)
		// The logs of near's hour within s (the hours beyond it are wholly outside).
		e := And(append([]Expr{r}, s.within(start, !desc).conds()...)...)
		var n int
		if err := q.QueryRowContext(ctx, "SELECT count(*) FROM command_logs t WHERE "+e.SQL, e.Args...).Scan(&n); err != nil {
			return span{}, 0, false, err
		}
		if offset < n {
			return s, offset, true, nil
		}
		offset -= n
		cond, args = cond+" AND hour "+map[bool]string{true: "<", false: ">"}[desc]+" ?", append(args, nearKey)
	}
	if far != "" {
		farKey, _ = hourOf(far)
		if near != "" && (nearKey == farKey || (nearKey < farKey) == desc) {
			return span{}, 0, false, nil // one hour, counted above
		}
		cond, args = cond+" AND hour "+map[bool]string{true: ">", false: "<"}[desc]+" ?", append(args, farKey)
	}
	dir := orderDir(desc)
	rows, err := q.QueryContext(ctx, `SELECT hour, sum(`+string(counted)+`) FROM command_log_device_hours WHERE 1`+cond+`
		GROUP BY hour ORDER BY hour `+dir, args...)
	if err != nil {
		return span{}, 0, false, err
	}
	defer rows.Close()
	skipped := 0
	for rows.Next() {
		var hour string
		var n int
		if err := rows.Scan(&hour, &n); err != nil {
			return span{}, 0, false, err
		}
		if skipped+n <= offset {
			skipped += n
			continue
		}
		return s.within(hourStamp(hour), desc), offset - skipped, true, nil
	}
	if err := rows.Err(); err != nil {
		return span{}, 0, false, err
	}
	if far != "" {
		// Past every whole hour: the page starts in far's hour, if at all.
		return s.within(hourStamp(farKey), desc), offset - skipped, true, nil
	}
	return span{}, 0, false, nil
}

// hourCount is what a walk of the hourly counters sums: every log, or one outcome's
// (the per-device totals have the same columns).
type hourCount string

const (
	hourTotal      hourCount = "total"
	hourSuccessful hourCount = "successful"
	hourFailed     hourCount = "total - successful"
)

// logCountOf is the number of logs of devices (see deviceSetSQL) counted, from the
// counters; one outcome's are counted for a set of devices (outcomeDevices), never for
// every log.
func logCountOf(ctx context.Context, q rowQueryer, devices string, counted hourCount) (int, error) {
	if counted == hourTotal {
		return logCount(ctx, q, devices)
	}
	var n int
	return n, q.QueryRowContext(ctx, `SELECT coalesce(sum(`+string(counted)+`), 0) FROM command_log_device_totals
		WHERE device_id IN (SELECT value FROM json_each(?))`, devices).Scan(&n)
}

// logCount is the number of logs of devices (see deviceSetSQL), from the counters.
func logCount(ctx context.Context, q rowQueryer, devices string) (int, error) {
	var n int
	if devices == "" {
		return n, q.QueryRowContext(ctx, `SELECT total FROM command_log_totals WHERE id = 1`).Scan(&n)
	}
	return n, q.QueryRowContext(ctx, `SELECT coalesce(sum(total), 0) FROM command_log_device_totals
		WHERE device_id IN (SELECT value FROM json_each(?))`, devices).Scan(&n)
}

// byCreated reports whether a list is ordered by created alone, and in which direction.
func byCreated(order []Order) (desc, ok bool) {
	if len(order) != 1 || order[0].SQL != "t.created" {
		return false, false
	}
	return order[0].Desc, true
}
