package store

import (
	"context"
	"database/sql"
	"runtime"
	"sync/atomic"
)

// helpers are read connections of their own, one per core past the first, each of
// which counts the upper half of a long count, or picks the upper half of a search's
// matches, while the connection that asked takes the lower (countHalves, pickHalves): a
// search's first count or pick at millions of logs is a walk through the word index
// that one core takes tens of milliseconds over. They are a pool apart from the
// readers, so a count never waits for a reader that another count holds; when every
// helper is busy, a count or pick runs whole where it is.
type helpers struct {
	db    *sql.DB
	slots chan struct{}
	// split counts the counts taken in halves, picksSplit the picks, and stale those
	// whose helper saw other logs below their end than the asking snapshot, and which
	// were taken whole (for tests). before, when set, runs in the helper before it
	// reads (tests).
	split, picksSplit, stale atomic.Int64
	before                   func()
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

// take takes a free helper's slot, given back with <-h.slots; false when every
// helper is busy.
func (h *helpers) take() bool {
	select {
	case h.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (h *helpers) close() error {
	if h == nil {
		return nil
	}
	return h.db.Close()
}

// rangeRun is a count or pick over the logs whose ids are in (lo, hi], in rq's
// snapshot; false when it cannot be taken so.
type rangeRun[T any] func(ctx context.Context, rq rowQueryer, lo, hi int64) (T, bool, error)

// rangeCount counts something of the logs in the range by counter key
// (heldDevices.counts).
type rangeCount = rangeRun[map[int64]int64]

// countHalves is count over (lo, hi] in tx's snapshot, in halves (inHalves).
func (db *DB) countHalves(ctx context.Context, tx *sql.Tx, lo, hi int64, count rangeCount) (map[int64]int64, bool, error) {
	counts, ok, split, err := inHalves(ctx, db, tx, lo, hi, count, func(lower, upper map[int64]int64) map[int64]int64 {
		if lower == nil {
			lower = map[int64]int64{}
		}
		for k, n := range upper {
			lower[k] += n
		}
		return lower
	})
	if split {
		db.help.split.Add(1)
	}
	return counts, ok, err
}

// pickHalves is pick over (lo, hi] in tx's snapshot, in halves (inHalves): the ids of
// both, the lower half's first.
func (db *DB) pickHalves(ctx context.Context, tx *sql.Tx, lo, hi int64, pick rangeRun[[]int64]) ([]int64, bool, error) {
	ids, ok, split, err := inHalves(ctx, db, tx, lo, hi, pick, func(lower, upper []int64) []int64 { return append(lower, upper...) })
	if split {
		db.help.picksSplit.Add(1)
	}
	return ids, ok, err
}

// inHalves is run over (lo, hi] in tx's snapshot. When the span holds at least
// halvesMin ids and a helper is free, the helper runs it over (mid, hi] meanwhile, in a
// snapshot of its own that is used only when it holds the same logs up to hi: no log
// was deleted or changed (the search epoch) and none was inserted below the newest or
// moved (command_log_moves) in between; else tx runs that half too. join puts the
// halves' results together, the lower's first. split says whether a helper ran one.
func inHalves[T any](ctx context.Context, db *DB, tx *sql.Tx, lo, hi int64, run rangeRun[T], join func(lower, upper T) T) (_ T, ok, split bool, _ error) {
	h := db.help
	if h == nil || hi-lo < db.search.halvesMin || !h.take() {
		got, ok, err := run(ctx, tx, lo, hi)
		return got, ok, false, err
	}
	var none T
	want, err := readLogEpochs(ctx, tx)
	if err != nil {
		<-h.slots
		return none, false, false, err
	}
	mid := lo + (hi-lo)/2
	type half struct {
		got       T
		ok, stale bool
		err       error
	}
	upper := make(chan half, 1)
	go func() {
		defer func() { <-h.slots }()
		var r half
		r.stale, r.err = h.runAt(ctx, want, hi, func(rq rowQueryer) error {
			var err error
			r.got, r.ok, err = run(ctx, rq, mid, hi)
			return err
		})
		upper <- r
	}()
	got, ok, err := run(ctx, tx, lo, mid)
	up := <-upper
	if err != nil {
		return none, false, false, err
	}
	if up.err == nil && up.stale {
		h.stale.Add(1)
		up.got, up.ok, up.err = run(ctx, tx, mid, hi)
	}
	if up.err != nil {
		return none, false, false, up.err
	}
	return join(got, up.got), ok && up.ok, true, nil
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

// runAt runs run in a read transaction of a helper, when its snapshot holds the logs
// up to hi that want's did; stale, without running it, when it does not.
func (h *helpers) runAt(ctx context.Context, want logEpochs, hi int64, run func(rowQueryer) error) (stale bool, err error) {
	if h.before != nil {
		h.before()
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	got, err := readLogEpochs(ctx, tx)
	if err != nil {
		return false, err
	}
	if got.search != want.search || got.moves != want.moves || got.newest < hi {
		return true, nil
	}
	return false, run(tx)
}
