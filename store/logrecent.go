package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// recentLogs holds the newest logs along the created index, each one's id and device
// key, as read at one data version (Changes). Until the next write, the near pages of
// every viewer confined to some devices are picked from it in memory (logPageByWalk)
// instead of each page walking the index again: at a million logs that walk was a
// quarter of such a page's server time, the same walk for every viewer and page.
//
// It is read only once the walks at one version have read twice as many logs as it
// holds (recentReadAfter): reading it costs about what walking 1.4 times as many does
// (BenchmarkRecentLogsRead), so a site that writes between every few pages, where the
// window would not live to be used, spends on reading it less than its walks spend.
type recentLogs struct {
	mu      sync.Mutex
	version int64 // the version the walks counted in walked were at
	walked  int   // logs walked at version without the window
	reading bool  // one read at a time; the other pages walk meanwhile
	win     *recentWindow
	// used counts the pages picked from the window (for tests).
	used atomic.Int64
}

// recentWindow is what recentLogs holds: the newest logs, in the order of the created
// index (created, then id, both descending), as read at version.
type recentWindow struct {
	version int64
	ids     []int64 // the newest recentLogsCap logs, or every log when there are fewer
	keys    []int64 // each one's device key: its device id, 0 for a deleted device's
	// sets holds the sets of keys its pages were asked with (keySet), at most
	// recentSetsCap of them.
	sets  sync.Map
	nsets atomic.Int32
}

// recentSetsCap bounds the key sets a window holds: the viewers' sets between two
// writes.
const recentSetsCap = 256

// set is keys (deviceKeys' JSON array) as a set, kept with the window.
func (w *recentWindow) set(keys string) (map[int64]bool, error) {
	if set, ok := w.sets.Load(keys); ok {
		return set.(map[int64]bool), nil
	}
	set, err := keySet(keys)
	if err == nil && w.nsets.Add(1) <= recentSetsCap {
		w.sets.Store(keys, set)
	}
	return set, err
}

// recentLogsCap is how many logs the window holds: as many as the longest walk reads;
// recentReadAfter is how many the walks at one version read before it is read.
const (
	recentLogsCap   = logWalkRows
	recentReadAfter = 2 * recentLogsCap
)

// window is the window read at version, reading it once the walks at version have read
// recentReadAfter logs (walk is what the caller's walk would read); nil when there is
// none at version yet.
func (r *recentLogs) window(ctx context.Context, db *DB, version int64, walk int) *recentWindow {
	r.mu.Lock()
	if r.win != nil && r.win.version == version {
		defer r.mu.Unlock()
		return r.win
	}
	switch {
	case version > r.version:
		r.version, r.walked = version, 0
	case version < r.version:
		// a page that read its version before a later one's: it walks, and leaves
		// the count of the newer version's walks as it is
		r.mu.Unlock()
		return nil
	}
	r.walked += walk
	if r.walked < recentReadAfter || r.reading {
		r.mu.Unlock()
		return nil
	}
	r.reading = true
	r.mu.Unlock()
	w, err := readRecentLogs(ctx, db, version)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reading = false
	if err != nil {
		return nil // the page walks; the next one tries again
	}
	if r.win == nil || r.win.version <= version {
		r.win = w
	}
	return w
}

// readRecentLogs reads the window, filed under version: read before it, so the window
// is at least as new as the version it is filed under.
func readRecentLogs(ctx context.Context, db *DB, version int64) (*recentWindow, error) {
	w := &recentWindow{version: version}
	w.ids, w.keys = make([]int64, 0, recentLogsCap), make([]int64, 0, recentLogsCap)
	rows, err := db.r.QueryContext(ctx, `SELECT id, coalesce(device_id, 0) FROM command_logs
		ORDER BY created DESC, id DESC LIMIT ?`, recentLogsCap)
	if err != nil {
		return nil, fmt.Errorf("store: recent logs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, key int64
		if err := rows.Scan(&id, &key); err != nil {
			return nil, fmt.Errorf("store: recent logs: %w", err)
		}
		w.ids, w.keys = append(w.ids, id), append(w.keys, key)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: recent logs: %w", err)
	}
	return w, nil
}

// recentPage is a near page of every log, newest first, from the window once the pages
// at this version have read recentReadAfter logs; false when there is none yet or the
// page lies past it.
func (db *DB) recentPage(ctx context.Context, q Query) ([]int64, bool) {
	version, ok := db.version(ctx)
	if !ok {
		return nil, false
	}
	win := db.recent.window(ctx, db, version, q.Offset+q.Limit)
	if win == nil || (q.Offset+q.Limit > len(win.ids) && len(win.ids) == recentLogsCap) {
		return nil, false
	}
	db.recent.used.Add(1)
	from := min(q.Offset, len(win.ids))
	return slices.Clone(win.ids[from:min(from+q.Limit, len(win.ids))]), true
}

// page is what walkLogs gives for the newest n logs (descending) and a condition that
// holds for the logs whose device key is in keys: the page of q among them.
func (w *recentWindow) page(keys map[int64]bool, n int, q Query) []int64 {
	ids := make([]int64, 0, q.Limit)
	skip := q.Offset
	for i := range min(n, len(w.ids)) {
		if !keys[w.keys[i]] {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if ids = append(ids, w.ids[i]); len(ids) == q.Limit {
			break
		}
	}
	return ids
}

// keySet is a set of device keys (deviceKeys' JSON array) as a map.
func keySet(keys string) (map[int64]bool, error) {
	var list []int64
	if err := json.Unmarshal([]byte(keys), &list); err != nil {
		return nil, fmt.Errorf("store: device keys: %w", err)
	}
	set := make(map[int64]bool, len(list))
	for _, k := range list {
		set[k] = true
	}
	return set, nil
}

type versionKey struct{}

// carried is the data version a context carries, and the DB it was read from.
type carried struct {
	db *DB
	v  int64
}

// WithVersion returns ctx carrying v, a data version (Changes) the caller read before
// anything it reads with the returned context: what the store keeps under the data
// version for that context's reads is filed and looked up under v, rather than under a
// version read again.
func (db *DB) WithVersion(ctx context.Context, v int64) context.Context {
	return context.WithValue(ctx, versionKey{}, carried{db, v})
}

// version is the data version for what ctx's reads keep: the one ctx carries, else one
// read now; false inside a Batch (it sees its own uncommitted rows), or when it cannot
// be read.
func (db *DB) version(ctx context.Context) (int64, bool) {
	if db.batchTx(ctx) != nil {
		return 0, false
	}
	if c, ok := ctx.Value(versionKey{}).(carried); ok && c.db == db {
		return c.v, true
	}
	v, err := db.Changes(ctx)
	return v, err == nil
}
