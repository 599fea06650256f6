package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
)

// heldDevices holds the counter key of every log's device (0 for a deleted device's) and
// its outcome by id, so that a search's matches are counted per device, and per device
// and outcome, without reading each match's row: counting a word a million logs hold for
// a viewer confined to some devices, or for their failed logs, reads the word index
// alone. It is read whole by ReadLogDevices (the search_counts job, at start-up and
// after) and follows the logs added since on each use; it is given up, until read
// again, when command_log_moves says a log's id, device or outcome changed.
type heldDevices struct {
	mu  sync.Mutex // one catch-up at a time
	cur atomic.Pointer[heldKeys]
	// used counts the counts taken from the held devices, picked the sets of matches
	// picked by them, paged the pages found in the held columns (heldPage) and refused
	// those found there that the table did not confirm, and spans the spans counted in
	// them (heldSpanCount) (for tests).
	used, picked, paged, refused, spans atomic.Int64
}

// heldKeys are the keys of the logs base..upto as read at moves: keys[id-base] is the
// key shifted left once, its low bit set for a failed log; -1 for an id no log had. A
// catch-up appends past len(keys) only, which no reader of this value reads.
type heldKeys struct {
	moves, base, upto int64
	maxKey            int32
	keys              []int32
	heldCols
}

// deviceKeysCap bounds the counter keys heldDevices holds: a device with a greater id
// leaves its logs to the plain count.
const deviceKeysCap = 1 << 22

// ReadLogDevices reads the device and outcome of every log, to be held in memory for the
// counts of a confined viewer's searches (heldDevices), with the held columns
// (readHeldCols). At 5,000,000 logs the devices take about 1.1 s of one core and hold
// 20 MB, the columns 6 s more and 80 MB; each is read along an index that holds it and
// the id, without the table.
func (db *DB) ReadLogDevices(ctx context.Context) error {
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: read log devices: %w", err)
	}
	defer tx.Rollback()
	moves, lo, hi, err := logSpan(ctx, tx)
	if err != nil {
		return fmt.Errorf("store: read log devices: %w", err)
	}
	next := &heldKeys{moves: moves, base: lo, upto: lo - 1}
	if hi >= lo {
		next.keys = make([]int32, hi-lo+1, heldRoom(int(hi-lo+1)))
		for i := range next.keys {
			next.keys[i] = -1
		}
		next.upto = hi
	}
	// Each row goes to the aggregate fieldkit_log_devices_read rather than through
	// database/sql: a fifth of the time at millions of logs.
	v := &deviceView{keys: next}
	h := deviceViews.add(v)
	defer deviceViews.drop(h)
	var n sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT fieldkit_log_devices_read(?, id, coalesce(device_id, 0), success)
		FROM command_logs INDEXED BY command_logs_success`, h).Scan(&n); err != nil {
		return fmt.Errorf("store: read log devices: %w", err)
	}
	if !n.Valid {
		return nil // a device id past deviceKeysCap: nothing held
	}
	if err := readHeldCols(ctx, tx, next); err != nil {
		return fmt.Errorf("store: read log devices: %w", err)
	}
	// Catch-ups go on while this reads; what they hold is kept if it is newer.
	db.devices.mu.Lock()
	defer db.devices.mu.Unlock()
	if cur := db.devices.cur.Load(); cur == nil || cur.moves < next.moves || cur.moves == next.moves && cur.upto <= next.upto {
		db.devices.cur.Store(next)
	}
	return nil
}

// followLogDevices brings the devices held up to the newest log: it reads only the logs
// added since, unless nothing is held or logs moved since (then it reads every log).
func (db *DB) followLogDevices(ctx context.Context) error {
	if db.devices.cur.Load() != nil {
		tx, err := db.r.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("store: read log devices: %w", err)
		}
		keys, err := db.devices.at(ctx, tx, math.MaxInt64)
		tx.Rollback()
		if err != nil {
			return fmt.Errorf("store: read log devices: %w", err)
		}
		if keys != nil {
			return nil
		}
	}
	return db.ReadLogDevices(ctx)
}

// logSpan is, in tx's snapshot, the epoch of command_log_moves and the oldest and newest
// log ids (1 and 0 when there is none).
func logSpan(ctx context.Context, tx *sql.Tx) (moves, lo, hi int64, err error) {
	err = tx.QueryRowContext(ctx, `SELECT (SELECT epoch FROM command_log_moves WHERE id = 1),
		(SELECT coalesce(min(id), 1) FROM command_logs), (SELECT coalesce(max(id), 0) FROM command_logs)`).Scan(&moves, &lo, &hi)
	return moves, lo, hi, err
}

// set records log id's key and outcome, false when the key is past deviceKeysCap.
func (k *heldKeys) set(id, key int64, ok bool) bool {
	if key < 0 || key >= deviceKeysCap {
		return false
	}
	k.keys[id-k.base] = int32(key) << 1
	if !ok {
		k.keys[id-k.base] |= 1
	}
	k.maxKey = max(k.maxKey, int32(key))
	return true
}

// at is the logs' keys as tx sees them: those held, with the logs after them read from
// tx when they are at most most; nil when none are held, when they were read at other
// moves than tx's, or when the logs to read are more.
func (d *heldDevices) at(ctx context.Context, tx *sql.Tx, most int64) (*heldKeys, error) {
	keys, _, err := d.atOldest(ctx, tx, most)
	return keys, err
}

// atOldest is at, with the oldest log's id in tx: the held logs before it are those a
// prune deleted since, which a catch-up keeps until they are many.
func (d *heldDevices) atOldest(ctx context.Context, tx *sql.Tx, most int64) (*heldKeys, int64, error) {
	cur := d.cur.Load()
	if cur == nil || most < 0 {
		return nil, 0, nil
	}
	moves, lo, hi, err := logSpan(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	if moves != cur.moves {
		return nil, 0, nil
	}
	if hi <= cur.upto {
		return cur, lo, nil
	}
	if hi-cur.upto > most {
		return nil, 0, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cur = d.cur.Load()
	if cur == nil || moves != cur.moves {
		return nil, 0, nil
	}
	if hi <= cur.upto {
		return cur, lo, nil
	}
	next := *cur
	if n := int64(len(cur.keys)); lo-cur.base > n/4 && lo <= cur.upto {
		// A prune deleted the front: keep the rest only.
		next.keys = append(make([]int32, 0, heldRoom(int(hi-lo+1))), cur.keys[lo-cur.base:]...)
		next.heldCols = cur.heldCols.from(lo-cur.base, int(hi-cur.upto))
		next.base = lo
	} else if lo > cur.upto {
		next.keys, next.base = nil, cur.upto+1
		next.heldCols = cur.heldCols.from(int64(len(cur.keys)), int(hi-cur.upto))
	}
	for range hi - next.upto {
		next.keys = append(next.keys, -1)
	}
	next.heldCols.grow(len(next.keys))
	next.upto = hi
	cols := ", 0.0, 0, 0, ''"
	if next.held() {
		cols = ", execution_duration, coalesce(command_id, 0), coalesce(user_id, 0), username"
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, coalesce(device_id, 0), success`+cols+` FROM command_logs WHERE id > ?`, cur.upto)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	own := false // next.classes are a clone of cur's
	for rows.Next() {
		var id, key, command, user int64
		var ok bool
		var dur float64
		var name string
		if err := rows.Scan(&id, &key, &ok, &dur, &command, &user, &name); err != nil {
			return nil, 0, err
		}
		if !next.set(id, key, ok) {
			return nil, 0, nil
		}
		if next.held() && !next.setCols(id-next.base, dur, command, user, name, &own) {
			next.heldCols = heldCols{} // past the held columns' bounds: the devices alone
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if own && next.held() {
		next.classes.seal()
	}
	d.cur.Store(&next)
	return &next, lo, nil
}

// counts counts by device key the logs whose ids the query ids selects (one
// column of ids; with repeats, each id is counted once), and the failed ones among them
// under failedKey, from keys; false when an id is not among them (a log tx sees that was
// deleted before keys were read), to be counted plainly.
func (d *heldDevices) counts(ctx context.Context, tx rowQueryer, keys *heldKeys, ids string, args []any, repeats bool) (map[int64]int64, bool, error) {
	v := &deviceView{keys: keys, counts: make([]int64, 2*(int(keys.maxKey)+1))}
	if repeats {
		// One bit a held log: 625 KB at five million logs, against SQLite sorting every
		// id into a temporary index to drop the repeats.
		v.seen = make([]uint64, (keys.upto-keys.base)/64+1)
	}
	if ok, err := v.run(ctx, tx, ids, args); err != nil || !ok {
		return nil, false, err
	}
	d.used.Add(1)
	// v.counts holds each key's successful logs, then its failed ones.
	out := map[int64]int64{}
	for k := 0; k < len(v.counts); k += 2 {
		if ok, failed := v.counts[k], v.counts[k+1]; ok+failed > 0 {
			out[int64(k/2)] = ok + failed
			if failed > 0 {
				out[failedKey(int64(k/2))] = failed
			}
		}
	}
	return out, true, nil
}

// pick is the ids the query ids selects (one column of ids, with repeats) whose logs are
// of the devices keys (counter keys), each once, from held; false when an id is not
// among them, as counts.
func (d *heldDevices) pick(ctx context.Context, tx rowQueryer, held *heldKeys, ids string, args []any, keys []int64) ([]int64, bool, error) {
	v := &deviceView{keys: held, counts: make([]int64, 2*(int(held.maxKey)+1)), seen: make([]uint64, (held.upto-held.base)/64+1),
		visible: held.keySet(keys)}
	if ok, err := v.run(ctx, tx, ids, args); err != nil || !ok {
		return nil, false, err
	}
	d.picked.Add(1)
	return v.picked, true, nil
}

// keySet is the set of the counter keys keys, by key up to the greatest k holds: a
// key past it has no log held.
func (k *heldKeys) keySet(keys []int64) []bool {
	set := make([]bool, int(k.maxKey)+1)
	for _, key := range keys {
		if key >= 0 && key < int64(len(set)) {
			set[key] = true
		}
	}
	return set
}

// run counts the ids the query ids selects into v (fieldkit_log_devices); false when an
// id was not held.
func (v *deviceView) run(ctx context.Context, tx rowQueryer, ids string, args []any) (bool, error) {
	h := deviceViews.add(v)
	defer deviceViews.drop(h)
	var n sql.NullInt64
	if err := tx.QueryRowContext(ctx, `WITH m(i) AS (`+ids+`) SELECT fieldkit_log_devices(?, i) FROM m`,
		append(slices.Clip(args), h)...).Scan(&n); err != nil {
		return false, err
	}
	return n.Valid, nil
}

// deviceView is one count's keys and its counts by held key (a device key and outcome);
// missing says an id was not among the keys. seen, when set, holds a bit for each id
// counted, by its offset from the keys' base. visible, when set, says which device keys
// to pick: the ids counted under them are appended to picked.
type deviceView struct {
	keys    *heldKeys
	counts  []int64
	missing bool
	seen    []uint64
	visible []bool
	picked  []int64
	// cols and users are the held columns being read (readHeldCols), and the users
	// read so far to pair with their names.
	cols  *heldCols
	users []int32
}

// deviceViews hands each count's view to the SQL functions.
var deviceViews handles[deviceView]

// deviceCounter is the aggregate fieldkit_log_devices(view, id): it counts each id
// under its log's key in the view, and is the number of ids, or NULL when one was not
// held.
type deviceCounter struct {
	v *deviceView
	n int64
}

// view finds the view of handle args[0] on the first row.
func (c *deviceCounter) view(args []driver.Value) error {
	if c.v != nil {
		return nil
	}
	h, _ := args[0].(int64)
	if c.v = deviceViews.get(h); c.v == nil {
		return fmt.Errorf("fieldkit_log_devices: no view %d", h)
	}
	return nil
}

func (c *deviceCounter) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if err := c.view(args); err != nil {
		return err
	}
	id, _ := args[1].(int64)
	k := c.v.keys
	if id < k.base || id > k.upto || k.keys[id-k.base] < 0 {
		c.v.missing = true
		return nil
	}
	if seen := c.v.seen; seen != nil {
		i := id - k.base
		if seen[i/64]&(1<<(i%64)) != 0 {
			return nil
		}
		seen[i/64] |= 1 << (i % 64)
	}
	held := k.keys[id-k.base]
	c.v.counts[held]++ // the key's successful logs, then its failed ones
	c.n++
	if vis := c.v.visible; vis != nil && int(held>>1) < len(vis) && vis[held>>1] {
		c.v.picked = append(c.v.picked, id)
	}
	return nil
}

func (c *deviceCounter) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("fieldkit_log_devices: not a window function")
}

func (c *deviceCounter) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if c.v != nil && c.v.missing {
		return nil, nil
	}
	return c.n, nil
}

func (c *deviceCounter) Final(*sqlite.FunctionContext) {}

// deviceReader is the aggregate fieldkit_log_devices_read(view, id, key, success): it
// sets each log's key and outcome in the view's keys, and is the number of logs, or
// NULL when a key was past deviceKeysCap.
type deviceReader struct{ deviceCounter }

func (c *deviceReader) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if err := c.view(args); err != nil {
		return err
	}
	id, _ := args[1].(int64)
	key, _ := args[2].(int64)
	ok, _ := args[3].(int64)
	k := c.v.keys
	if id < k.base || id > k.upto || !k.set(id, key, ok != 0) {
		c.v.missing = true
		return nil
	}
	c.n++
	return nil
}

func init() {
	sqlite.MustRegisterFunction("fieldkit_log_devices", &sqlite.FunctionImpl{
		NArgs: 2,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &deviceCounter{}, nil
		},
	})
	sqlite.MustRegisterFunction("fieldkit_log_cols_read", &sqlite.FunctionImpl{
		NArgs: 4,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &colReader{}, nil
		},
	})
	sqlite.MustRegisterFunction("fieldkit_log_devices_read", &sqlite.FunctionImpl{
		NArgs: 4,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &deviceReader{}, nil
		},
	})
}

// handles hands Go values to SQL functions by a number, which SQLite passes where it
// could not pass a Go value: a function's first argument names the value its calls
// work on.
type handles[T any] struct {
	m    sync.Map // handle → *T
	next atomic.Int64
}

func (h *handles[T]) add(v *T) int64 {
	n := h.next.Add(1)
	h.m.Store(n, v)
	return n
}

// get is the value of handle n, or nil.
func (h *handles[T]) get(n int64) *T {
	v, _ := h.m.Load(n)
	p, _ := v.(*T)
	return p
}

func (h *handles[T]) drop(n int64) { h.m.Delete(n) }
