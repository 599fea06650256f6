package store

import (
	"context"
	"database/sql"
	"runtime"
	"sync/atomic"
)

// helpers are read connections of their own, one per core past the first, each of
// which counts the upper half of a long count while the connection that asked counts
// the lower (countHalves): a search's first count at millions of logs is a walk
// through the word index that one core takes tens of milliseconds over. They are a
// pool apart from the readers, so a count never waits for a reader that another count
// holds; when every helper is busy, a count runs whole where it is.
type helpers struct {
	db    *sql.DB
	slots chan struct{}
	// split counts the counts taken in halves, and stale those whose helper saw other
	// logs below the count's end than the asking snapshot and were counted whole (for
	// tests). before, when set, runs in the helper before it reads (tests).
	split, stale atomic.Int64
	before       func()
}

// openHelpers opens the helpers of the database file at abs: none on one core.
func openHelpers(abs string) (*helpers, error) {
	n := runtime.NumCPU() - 1
	db, err := sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(max(n, 1))
	db.SetMaxIdleConns(max(n, 1))
	return &helpers{db: db, slots: make(chan struct{}, n)}, nil
}

func (h *helpers) close() error {
	if h == nil {
		return nil
	}
	return h.db.Close()
}

// rangeCount counts something of the logs whose ids are in (lo, hi], by counter key,
// in rq's snapshot; false when it cannot be counted so (heldDevices.counts).
type rangeCount func(ctx context.Context, rq rowQueryer, lo, hi int64) (map[int64]int64, bool, error)

// countHalves is count over (lo, hi] in tx's snapshot. When the span holds at least
// halvesMin ids and a helper is free, the helper counts (mid, hi] meanwhile, in a
// snapshot of its own that is used only when it holds the same logs up to hi: no log
// was deleted or changed (the search epoch) and none was inserted below the newest or
// moved (command_log_moves) in between; else tx counts that half too.
func (db *DB) countHalves(ctx context.Context, tx *sql.Tx, lo, hi int64, count rangeCount) (map[int64]int64, bool, error) {
	h := db.help
	if h == nil || hi-lo < db.search.halvesMin {
		return count(ctx, tx, lo, hi)
	}
	select {
	case h.slots <- struct{}{}:
	default:
		return count(ctx, tx, lo, hi)
	}
	want, err := readLogEpochs(ctx, tx)
	if err != nil {
		<-h.slots
		return nil, false, err
	}
	mid := lo + (hi-lo)/2
	type half struct {
		counts    map[int64]int64
		ok, stale bool
		err       error
	}
	upper := make(chan half, 1)
	go func() {
		defer func() { <-h.slots }()
		var r half
		r.counts, r.ok, r.stale, r.err = h.countAt(ctx, want, hi, func(rq rowQueryer) (map[int64]int64, bool, error) {
			return count(ctx, rq, mid, hi)
		})
		upper <- r
	}()
	counts, ok, err := count(ctx, tx, lo, mid)
	up := <-upper
	if err != nil {
		return nil, false, err
	}
	if up.err == nil && up.stale {
		h.stale.Add(1)
		up.counts, up.ok, up.err = count(ctx, tx, mid, hi)
	}
	if up.err != nil {
		return nil, false, up.err
	}
	h.split.Add(1)
	for k, n := range up.counts {
		counts[k] += n
	}
	return counts, ok && up.ok, nil
}

// logEpochs are, in one snapshot, the search epoch (a log deleted or changed), the
// epoch of command_log_moves (a log inserted below the newest, or its id or device
// changed) and the newest log's id.
type logEpochs struct{ search, moves, newest int64 }

func readLogEpochs(ctx context.Context, rq rowQueryer) (logEpochs, error) {
	var e logEpochs
	err := rq.QueryRowContext(ctx, `SELECT (SELECT epoch FROM command_log_search_epoch WHERE id = 1),
		(SELECT epoch FROM command_log_moves WHERE id = 1), (SELECT coalesce(max(id), 0) FROM command_logs)`).Scan(&e.search, &e.moves, &e.newest)
	return e, err
}

// countAt runs count in a read transaction of a helper, when its snapshot holds the
// logs up to hi that want's did; stale when it does not.
func (h *helpers) countAt(ctx context.Context, want logEpochs, hi int64, count func(rowQueryer) (map[int64]int64, bool, error)) (map[int64]int64, bool, bool, error) {
	if h.before != nil {
		h.before()
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, false, err
	}
	defer tx.Rollback()
	got, err := readLogEpochs(ctx, tx)
	if err != nil {
		return nil, false, false, err
	}
	if got.search != want.search || got.moves != want.moves || got.newest < hi {
		return nil, false, true, nil
	}
	counts, ok, err := count(tx)
	return counts, ok, false, err
}
