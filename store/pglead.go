package store

import (
	"context"
	"database/sql/driver"
	"time"
)

// LockSchedules is the advisory lock of the hub process that runs the schedules, among
// those sharing one PostgreSQL schema (pgMigrateLock is the migrations').
const LockSchedules = 404_0002

// Leading runs f while this process holds the PostgreSQL advisory lock key, on a
// connection of its own, so that of the hub processes sharing one database one at a
// time runs f (a schedule fires once, not once per process). While another holds the
// lock it tries again every check; when the lock's connection breaks (PostgreSQL
// restarted, the network) f's context ends and it tries again; a process that dies
// frees the lock with its connection. The lock is the schema's (key and the schema's
// hash), so that stores in other schemas of the database lead on their own. Between a
// cut and the ping that sees it (at most check), the old holder's f may still run
// beside the new one's. It returns when ctx ends and f has returned. On SQLite, one
// process to a file, f simply runs.
func (db *DB) Leading(ctx context.Context, key int64, check time.Duration, f func(ctx context.Context)) {
	if !db.pg {
		f(ctx)
		return
	}
	for ctx.Err() == nil {
		if !db.lead(ctx, key, check, f) {
			select {
			case <-ctx.Done():
			case <-time.After(check):
			}
		}
	}
}

// lead takes the lock once and, when it gets it, runs f until ctx ends, f returns or
// the connection fails a ping; false when the lock was not taken.
func (db *DB) lead(ctx context.Context, key int64, check time.Duration, f func(ctx context.Context)) bool {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return false
	}
	// The connection is never handed back to the pool: closed, it frees the lock
	// whatever state it is in.
	defer func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
	}()
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?, hashtext(current_schema()))`, key).Scan(&got); err != nil || !got {
		return false
	}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); f(fctx) }()
	tick := time.NewTicker(check)
	defer tick.Stop()
	for held := true; held; {
		select {
		case <-ctx.Done():
			held = false
		case <-done:
			held = false
		case <-tick.C:
			held = conn.PingContext(ctx) == nil
		}
	}
	cancel()
	<-done
	return true
}
