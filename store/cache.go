package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The check cache: what a request's checks look up (a token's principal, a user's
// permissions compiled into scopes, whether a device or command is within a scope, a
// device's connection details, a command, a credential set and its decrypted secrets)
// is kept in memory for as long as the database's generation stays the same.
//
// The generation is one row (migration 0056) that triggers on every table those
// lookups read bump in the writing transaction, so it changes with every committed
// change, made by this process or another one on the same file (the CLI against the
// live data directory). A request reads it once (Fresh) and carries it in its context;
// a lookup made with that context is answered from the cache only when the cache holds
// an answer read at that same generation, and a newer generation empties the cache.
// Anything read after the generation was read is at least as new as it, so an entry is
// never older than the generation it is filed under. Writes this process commits also
// bypass the cache for requests that read the generation before them, the request
// that made the write included.
//
// What stays per request: a token's expiry against the clock, and whether the user is
// active, are checked on every request; last_used stamps are written at most once a
// minute per process (touched). Errors are never cached, nor is anything read inside
// a Batch (it sees the batch's uncommitted rows), nor anything read with a context
// that did not come from Fresh.
type checkCache struct {
	mu      sync.Mutex
	gen     int64
	entries map[string]any
}

// checkCacheMax bounds the entries of one generation; a full cache starts again empty.
const checkCacheMax = 20000

// snapshot is what Fresh puts in a request's context.
type snapshot struct {
	db    *DB
	gen   int64  // the generation row
	local uint64 // db.gen: this process's commits
}

type snapshotKey struct{}

// Fresh reads the database's generation and returns ctx carrying it: the checks' lookups
// made with the returned context may be answered from the cache.
func (db *DB) Fresh(ctx context.Context) (context.Context, error) {
	var n int64
	local := db.gen.Load()
	if err := db.r.QueryRowContext(ctx, `SELECT n FROM generation WHERE id = 1`).Scan(&n); err != nil {
		return ctx, fmt.Errorf("store: generation: %w", err)
	}
	return context.WithValue(ctx, snapshotKey{}, snapshot{db: db, gen: n, local: local}), nil
}

// Snapshot is the generation ctx carries (from Fresh): a cache of anything but the
// command logs filed under it is valid while it is. ok is false when ctx carries none,
// runs in a Batch, or this process has committed a write since it was read: then
// nothing may be cached.
func (db *DB) Snapshot(ctx context.Context) (gen int64, ok bool) {
	s, ok := ctx.Value(snapshotKey{}).(snapshot)
	if !ok || s.db != db || db.gen.Load() != s.local || db.batchTx(ctx) != nil {
		return 0, false
	}
	return s.gen, true
}

func (c *checkCache) get(gen int64, key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return nil, false
	}
	v, ok := c.entries[key]
	return v, ok
}

func (c *checkCache) put(gen int64, key string, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case gen < c.gen:
		return // read at an older generation: already stale
	case gen > c.gen || c.entries == nil || len(c.entries) >= checkCacheMax:
		c.gen, c.entries = gen, map[string]any{}
	}
	c.entries[key] = v
}

// cached answers key from the cache when ctx allows it, else calls load (and keeps its
// answer when it succeeded).
func cached[T any](ctx context.Context, db *DB, key string, load func() (T, error)) (T, error) {
	gen, ok := db.Snapshot(ctx)
	if !ok {
		return load()
	}
	if v, ok := db.checks.get(gen, key); ok {
		return v.(T), nil
	}
	v, err := load()
	if err == nil {
		db.checks.put(gen, key, v)
	}
	return v, err
}

// uncountedTables are the tables (by name prefix) whose writes leave the generation as
// it is (see migration 0056). Every other table must bump it: a new table gets its
// three triggers in its migration (TestEveryTableBumpsTheGeneration).
var uncountedTables = []string{"command_log", "sessions", "export_runs", "netbox_sync_", "generation", "hub_",
	"schema_migrations", "sqlite_", "schedule_state", "config_versions", "config_texts",
	"event_outbox", "event_states", "webhook_deliveries"}

// uncounted tells whether a query's text names a table the generation does not count:
// its answer may change without the generation, so it is never cached.
func uncounted(query string) bool {
	for _, t := range uncountedTables {
		if strings.Contains(query, t) {
			return true
		}
	}
	return false
}

// touched tells whether a last_used stamp (of a token or a credential set, by key) was
// written less than lastUsedEvery before now, by this process or as the row says;
// otherwise it records now as written and returns false, and the caller writes it.
func (db *DB) touched(key string, stored, now time.Time) bool {
	if now.Sub(stored) <= lastUsedEvery {
		return true
	}
	for {
		prev, loaded := db.stamps.LoadOrStore(key, now)
		if !loaded {
			return false
		}
		if now.Sub(prev.(time.Time)) <= lastUsedEvery {
			return true
		}
		if db.stamps.CompareAndSwap(key, prev, now) {
			return false
		}
	}
}
