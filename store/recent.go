package store

import (
	"context"
	"fmt"
	"time"
)

// RecentSuccesses returns, per device, the times of successful executions since a time:
// what the rate limiter needs at start-up so that a restart does not reset it.
func (db *DB) RecentSuccesses(ctx context.Context, since time.Time) (map[int64][]time.Time, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT device_id, created FROM command_logs
		WHERE success = 1 AND created >= ? AND device_id IS NOT NULL ORDER BY created`, Stamp(since))
	if err != nil {
		return nil, fmt.Errorf("store: recent successes: %w", err)
	}
	defer rows.Close()
	out := map[int64][]time.Time{}
	for rows.Next() {
		var id int64
		var created string
		if err := rows.Scan(&id, &created); err != nil {
			return nil, err
		}
		out[id] = append(out[id], ParseStamp(created))
	}
	return out, rows.Err()
}
