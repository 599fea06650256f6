package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// logQueue commits the logs of concurrent executions together. The database has one
// writer: fifty executions finishing at once used to queue for it one by one, each
// paying a transaction and its commit, so the last one answered only after the other
// forty-nine had committed. Here the first caller leads: it writes every log waiting
// at that moment in one transaction, hands the lead to a caller that arrived while it
// wrote, and then returns. Each caller still returns only once its own log is
// committed, so nothing is answered before it is recorded.
type logQueue struct {
	mu      sync.Mutex
	pending []*logWrite
	leading bool // a caller is writing a batch; the others wait for it
	// last is the newest stamp the queue gave a log (stamp).
	last time.Time
}

// stampSlack is how far back of the newest stamp the queue gave the clock may read and
// the log still take that newest stamp instead (stamp).
const stampSlack = time.Second

// stamp is the created stamp of a log the store's clock stamps, taken under q.mu as the
// log joins the queue, so that the logs go in in the order of their stamps. Stamped
// before they queued, executions finishing at once wrote logs out of created order, a
// microsecond apart, and one such log leaves every list that relies on that order (the
// held pages, a search's tail, a span's ids) to the slow plans until it is pruned. A
// clock that reads up to stampSlack before the last stamp (two cores' clocks, a small
// correction) gives the last stamp again; one set back further gives its own reading,
// and the logs after it are then out of order.
func (q *logQueue) stamp(now time.Time) time.Time {
	if now.Before(q.last) && q.last.Sub(now) <= stampSlack {
		return q.last
	}
	q.last = now
	return now
}

// logWrite is one log waiting for its batch.
type logWrite struct {
	args []any
	id   int64
	err  error
	// done receives one signal: the log is written (id, err set), or, when lead is
	// set, its caller is to write the next batch, this log in it.
	done chan struct{}
	lead bool
}

// insertLog records one log's column values through the queue, stamping those at
// stampAt (logArgs) as it joins.
func (db *DB) insertLog(ctx context.Context, args []any, stampAt []int) (int64, error) {
	q := &db.logs
	w := &logWrite{args: args, done: make(chan struct{}, 1)}
	q.mu.Lock()
	if stampAt != nil {
		at := Stamp(q.stamp(db.now()))
		for _, i := range stampAt {
			args[i] = at
		}
	}
	q.pending = append(q.pending, w)
	if q.leading {
		q.mu.Unlock()
		<-w.done
		if !w.lead {
			return w.id, w.err
		}
	} else {
		q.leading = true
		q.mu.Unlock()
	}
	db.writeLogs(context.WithoutCancel(ctx))
	return w.id, w.err
}

// writeLogs writes the waiting logs, then passes the lead on (or gives it up when no
// log arrived meanwhile) and wakes the callers of the logs written.
func (db *DB) writeLogs(ctx context.Context) {
	q := &db.logs
	q.mu.Lock()
	batch := q.pending
	q.pending = nil
	q.mu.Unlock()

	db.insertLogBatch(ctx, batch)
	db.ckpt.committed(len(batch))

	q.mu.Lock()
	if len(q.pending) > 0 {
		next := q.pending[0]
		next.lead = true
		next.done <- struct{}{}
	} else {
		q.leading = false
	}
	q.mu.Unlock()
	for _, w := range batch {
		w.done <- struct{}{}
	}
}

// insertLogBatch writes the logs and counts them in one transaction: one alone with its
// own statement, several with one statement. A row the database refuses (a
// constraint) fails alone; a failed commit fails them all.
func (db *DB) insertLogBatch(ctx context.Context, batch []*logWrite) {
	fail := func(err error) {
		for _, w := range batch {
			if w.err == nil {
				w.id, w.err = 0, err
			}
		}
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		fail(err)
		return
	}
	defer tx.Rollback()
	if len(batch) == 1 {
		w := batch[0]
		w.err = db.txQueryRow(ctx, tx, insertLogSQL+` RETURNING id`, w.args...).Scan(&w.id)
	} else {
		for chunk := range slices.Chunk(batch, maxLogRows) {
			if err := insertLogsAtOnce(ctx, tx, chunk); err != nil {
				// SQLite undid that statement alone and the transaction goes on: each log
				// of the chunk again as a statement of its own tells which ones it refuses.
				for _, w := range chunk {
					w.err = db.txQueryRow(ctx, tx, insertLogSQL+` RETURNING id`, w.args...).Scan(&w.id)
				}
			}
		}
	}
	c := newCounterRows()
	for _, w := range batch {
		if w.err == nil {
			c.add(tallyOf(w.args), 1)
		}
	}
	if err := c.write(ctx, db, tx); err != nil {
		fail(err)
		return
	}
	if err := tx.Commit(); err != nil {
		fail(err)
	}
}

// maxLogRows is the most logs one INSERT takes, within SQLite's limit of 32,766
// parameters per statement.
const maxLogRows = 500

// insertLogsAtOnce inserts the logs with one statement. Every statement inside a
// transaction opens a savepoint, where the full-text index writes out the entries it
// holds in memory and the pages the statement changes are journalled again: one
// statement for the batch pays that once instead of once per log. The rows get their
// ids in the order they are inserted, each above every id in the table, so the ids
// returned, sorted, are the logs' ids in the batch's order.
func insertLogsAtOnce(ctx context.Context, tx *sql.Tx, batch []*logWrite) error {
	var q strings.Builder
	q.WriteString(insertLogSQL)
	args := make([]any, 0, len(batch)*len(logColumns))
	for i, w := range batch {
		if i > 0 {
			q.WriteString(", (" + placeholders(len(logColumns)) + ")")
		}
		args = append(args, w.args...)
	}
	q.WriteString(" RETURNING id")
	rows, err := tx.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	ids := make([]int64, 0, len(batch))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	slices.Sort(ids)
	for i, w := range batch {
		if len(ids) != len(batch) {
			// Never seen: the rows are in, but which is whose is not known.
			w.id, w.err = 0, fmt.Errorf("store: %d ids returned for %d logs", len(ids), len(batch))
			continue
		}
		w.id, w.err = ids[i], nil
	}
	return nil
}
