// Package store keeps FieldKit's data in one SQLite file: users, tokens, permissions,
// the embedded inventory, commands, credential sets and command logs. It knows nothing of
// HTTP or SSH; callers pass plain structs in and get plain structs back.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// ErrNotFound is returned (wrapped with what was looked for) when a row does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned (wrapped) when a write breaks a uniqueness rule.
var ErrConflict = errors.New("conflict")

// ErrInUse is returned (wrapped) when a delete is refused because other rows refer to the row.
var ErrInUse = errors.New("in use")

// TimeFormat is how every time is stored: fixed width, UTC, microseconds, so that
// string order is time order.
const TimeFormat = "2006-01-02T15:04:05.000000Z"

// DB is the store: one writer connection (SQLite allows one writer at a time, and a
// single connection turns lock contention into a queue) and a pool of readers.
type DB struct {
	w    *pool
	r    *pool
	path string
	pg   bool // the store is in PostgreSQL (postgres.go)
	now  func() time.Time
	gen  atomic.Uint64 // bumped by every committed Write
	logs logQueue      // CreateLog's group commit
	ckpt *checkpointer // checkpoints after log commits (checkpoint.go)

	// watch is a read-only connection of its own, kept for the DB's life, on which
	// Changes reads SQLite's data_version.
	watchMu sync.Mutex
	watchDB *sql.DB
	watch   *sql.Conn
	// checks caches the lookups of a request's checks (cache.go); stamps holds the
	// last_used stamps this process wrote.
	checks checkCache
	stamps sync.Map
	// counts keeps the counts of log searches (logsearch.go).
	counts searchCounts
}

// Open opens (creating if needed) the database file at path and applies migrations. The
// file is made private (0600) before SQLite opens it.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	return open(ctx, path, o, "")
}

// Option changes how Open opens a database.
type Option func(*openOptions)

type openOptions struct {
	logger *slog.Logger
	// writerPragmas are added to the writer's connection string (tests).
	writerPragmas []string
}

// Logger is where Open reports a long migration's progress; without it, nowhere.
func Logger(l *slog.Logger) Option { return func(o *openOptions) { o.logger = l } }

// open is Open, applying migrations up to upTo when it is set (tests).
func open(ctx context.Context, path string, o openOptions, upTo string) (*DB, error) {
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// SQLite makes the write-ahead log and shared-memory files with the database's mode.
	created, err := makePrivate(abs)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// A new file is written from a copy of one migrated before, when the process holds
	// one (fresh.go); not one beside a write-ahead log left over, which SQLite would
	// apply to it.
	isNew, copied := created && upTo == "" && !fileExists(abs+"-wal"), false
	if isNew {
		if copied, err = writeFreshImage(abs); err != nil {
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
	}
	for _, f := range []string{abs + "-wal", abs + "-shm"} {
		if err := tighten(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
	}
	w, err := sql.Open("sqlite", dsn(abs, true, o.writerPragmas...))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	db := &DB{w: newPool(w), path: abs, now: func() time.Time { return time.Now().UTC() }}
	if err := db.migrateWaiting(ctx, o, upTo); err != nil {
		w.Close()
		return nil, err
	}
	if isNew && !copied {
		db.keepFreshImage(ctx)
	}
	if err := db.rotateIfCopied(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db.prepareLogWrites(ctx)
	r, err := sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	n := readerConns()
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db.r = newPool(r)
	if db.watchDB, err = sql.Open("sqlite", dsn(abs, false)); err == nil {
		db.watch, err = db.watchDB.Conn(ctx)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	c, err := sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db.ckpt = startCheckpointer(c)
	return db, nil
}

// WarmReaders opens every connection of the readers' pool, each reading the schema, and
// keeps them idle, so that the first requests after a start do not each open one. The
// server calls it once, five seconds after its start (serve.go).
func (db *DB) WarmReaders(ctx context.Context) error {
	if db.pg {
		return nil // PostgreSQL's connections read no schema of a file at their start
	}
	conns := make([]*sql.Conn, 0, db.r.Stats().MaxOpenConnections)
	defer func() {
		for _, c := range conns {
			c.Close() // back to the pool, which keeps as many idle as it opens
		}
	}()
	for range cap(conns) {
		c, err := db.r.Conn(ctx)
		if err != nil {
			return fmt.Errorf("store: open the readers: %w", err)
		}
		conns = append(conns, c)
		var n int
		if err := c.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
			return fmt.Errorf("store: open the readers: %w", err)
		}
	}
	return nil
}

// readerConns is how many connections the readers' pool keeps.
func readerConns() int { return max(4, 2*runtime.NumCPU()) }

// Changes is a number that differs from the one it last returned once any write was
// committed to the database file, by this process or another (SQLite's data_version,
// read on a connection of its own that never writes and is never replaced). A cache
// of what was read stays valid while Changes returns the number it was read under,
// taken before those reads.
func (db *DB) Changes(ctx context.Context) (int64, error) {
	if db.pg {
		// PostgreSQL has no such number, and a hub's replicas write beside each other:
		// nothing is cached by it.
		return 0, errors.New("store: no data version on PostgreSQL")
	}
	db.watchMu.Lock()
	defer db.watchMu.Unlock()
	var v int64
	if err := db.watch.QueryRowContext(context.WithoutCancel(ctx), "PRAGMA data_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("store: data version: %w", err)
	}
	return v, nil
}

// dsn builds the connection string; pragmas go in the DSN so that every connection the
// pool opens gets them, not only the first.
func dsn(path string, writer bool, pragmas ...string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "cache_size(-32000)")
	q.Add("_time_format", "sqlite")
	if writer {
		q.Add("_txlock", "immediate")
		// A statement that fires triggers keeps, for its own undo, the pages it changes
		// in a statement journal, and by default that is a temporary file: with the
		// search index and counter triggers, writing it was a third of a log insert's
		// CPU. In memory it costs what the statement changes (a retention batch at most);
		// it is never part of what makes a commit durable. Sorts for an index still
		// spill to temporary files.
		q.Add("_pragma", "temp_store(MEMORY)")
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstop))
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	// A pragma given replaces the one of the same name: the driver runs busy_timeout
	// first and sorts the rest, so two of one name would not run in a known order.
	for _, p := range pragmas {
		name, _, _ := strings.Cut(p, "(")
		q["_pragma"] = slices.DeleteFunc(q["_pragma"], func(v string) bool { return strings.HasPrefix(v, name+"(") })
		q.Add("_pragma", p)
	}
	return "file:" + filepath.ToSlash(path) + "?" + q.Encode()
}

// Close closes both pools; the WAL is checkpointed by SQLite on the last close.
func (db *DB) Close() error {
	errs := []error{db.ckpt.close()}
	if db.watch != nil {
		errs = append(errs, db.watch.Close())
	}
	if db.watchDB != nil {
		errs = append(errs, db.watchDB.Close())
	}
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	errs = append(errs, db.w.Close())
	return errors.Join(errs...)
}

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Reader is the read-only pool, for queries built outside this package's methods.
func (db *DB) Reader() *sql.DB { return db.r.DB }

// Now is the store's clock, in UTC.
func (db *DB) Now() time.Time { return db.now() }

// SetClock replaces the clock; tests use it to write logs at chosen times.
func (db *DB) SetClock(now func() time.Time) { db.now = now }

// migrate applies every migration not yet recorded, in the order of their versions:
// the SQL files, and those written in Go (goMigrations). With upTo set (tests), it
// stops after that version.
func (db *DB) migrate(ctx context.Context, o openOptions, upTo string) error {
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version TEXT PRIMARY KEY, applied TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	for version := range goMigrations {
		names = append(names, version)
	}
	versionOf := func(name string) string { return strings.TrimSuffix(filepath.Base(name), ".sql") }
	// A file that already holds a schema is being upgraded: each step is said, as one
	// may take seconds on millions of logs. A new file's are not.
	var had int
	if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&had); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	sort.Slice(names, func(i, j int) bool { return versionOf(names[i]) < versionOf(names[j]) })
	for _, name := range names {
		version := versionOf(name)
		if upTo != "" && version > upTo {
			break
		}
		// Once applied, a read settles it, without the write lock: a command opening the
		// database while the server writes need not wait for it. Each migration checks
		// again under the lock.
		if done, err := applied(ctx, db.w, version); err != nil || done {
			if err != nil {
				return fmt.Errorf("store: migrate %s: %w", version, err)
			}
			continue
		}
		if run, ok := goMigrations[version]; ok {
			if err := run(ctx, db, o); err != nil {
				return fmt.Errorf("store: migrate %s: %w", version, err)
			}
			continue
		}
		start := time.Now()
		if had > 0 {
			o.logger.Info("store: upgrading the database", "migration", version)
		}
		if err := db.apply(ctx, version, name); err != nil {
			return err
		}
		if had > 0 {
			o.logger.Info("store: upgraded the database", "migration", version, "seconds", time.Since(start).Round(time.Millisecond).Seconds())
		}
	}
	return nil
}

// migrateWaitMost is how long migrateWaiting waits for another process's write.
var migrateWaitMost = time.Hour

// migrateWaiting is migrate, waiting while another process holds the write lock past
// the busy timeout, up to migrateWaitMost: the server rewriting the logs at an upgrade
// (0063) holds it for minutes, and a command started beside it (fieldkit export) waits
// for it and says so every busy timeout, rather than failing "database is locked".
func (db *DB) migrateWaiting(ctx context.Context, o openOptions, upTo string) error {
	start := time.Now()
	for {
		err := db.migrate(ctx, o, upTo)
		if !isBusy(err) || ctx.Err() != nil || time.Since(start) >= migrateWaitMost {
			return err
		}
		o.logger.Warn("store: another process is writing to the database, as the server does while it upgrades it: waiting",
			"path", db.path, "waited", time.Since(start).Round(time.Second).String())
	}
}

// isBusy reports whether err is SQLite's "database is locked": another connection held
// the lock past the busy timeout.
func isBusy(err error) bool { return sqliteCode(err, sqlite3.SQLITE_BUSY) }

// sqliteCode reports whether err is SQLite's error of the primary result code code
// (extended codes included).
func sqliteCode(err error, code int) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == code
}

// applied reports whether the migration version was recorded.
func applied(ctx context.Context, q querier, version string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n)
	return n > 0, err
}

// record notes in tx that the migration version was applied.
func (db *DB) record(ctx context.Context, tx *sql.Tx, version string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied) VALUES (?, ?)`, version, Stamp(db.now()))
	return err
}

func (db *DB) apply(ctx context.Context, version, name string) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migrate %s: %w", version, err)
	}
	defer tx.Rollback()
	done, err := applied(ctx, tx, version)
	if err != nil {
		return fmt.Errorf("store: migrate %s: %w", version, err)
	}
	if done {
		return nil
	}
	body, err := migrations.ReadFile(name)
	if err != nil {
		return fmt.Errorf("store: migrate %s: %w", version, err)
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return fmt.Errorf("store: migrate %s: %w", version, err)
	}
	if err := db.record(ctx, tx, version); err != nil {
		return fmt.Errorf("store: migrate %s: %w", version, err)
	}
	return tx.Commit()
}

// Write runs fn in one write transaction on the writer connection. Inside a Batch it
// joins the batch's transaction instead, within a savepoint: a failing fn undoes only
// its own changes, and nothing is committed (nor Generation bumped) until the batch is.
func (db *DB) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if tx := db.batchTx(ctx); tx != nil {
		return savepoint(ctx, tx, fn)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	db.gen.Add(1)
	return nil
}

// batchKey is the context key of a Batch's transaction.
type batchKey struct{}

// batch is what a Batch puts in the context: the transaction, its connection (for
// what database/sql has no call for: PostgreSQL's COPY, copyRows), and whose it is (a
// context may pass through more than one DB, as in tests).
type batch struct {
	db   *DB
	conn *sql.Conn
	tx   *sql.Tx
}

// Batch runs fn with one write transaction in its context: every Write made with that
// context (the store's existing write methods) joins it, so they commit together when
// fn returns nil, or not at all. Generation is bumped once, at the commit.
//
// The declared objects' reads made with that context (Exists, ResolveRef, ListIDs,
// Rows: the lookups a handler makes while validating) go through the batch's
// transaction too, so a later write may refer to a row an earlier one made (an import
// of sites and their devices). A Batch inside a Batch joins the outer one.
func (db *DB) Batch(ctx context.Context, fn func(ctx context.Context) error) error {
	if db.batchTx(ctx) != nil {
		return fn(ctx)
	}
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(context.WithValue(ctx, batchKey{}, batch{db: db, conn: conn, tx: tx})); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	db.gen.Add(1)
	return nil
}

// reader is where the declared objects' reads go: the Batch's transaction when ctx runs
// in one (it sees the batch's own rows), else the reader pool.
func (db *DB) reader(ctx context.Context) querier {
	if tx := db.batchTx(ctx); tx != nil {
		return tx
	}
	return db.r
}

// batchTx is the transaction of the Batch ctx runs in on this DB, or nil.
func (db *DB) batchTx(ctx context.Context) *sql.Tx {
	if b, ok := ctx.Value(batchKey{}).(batch); ok && b.db == db {
		return b.tx
	}
	return nil
}

// savepoint runs fn on tx so that its changes are undone if it fails, leaving tx
// usable: a batch goes on to check its later elements.
func savepoint(ctx context.Context, tx *sql.Tx, fn func(tx *sql.Tx) error) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT write`); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO write`); rerr != nil {
			return errors.Join(err, rerr)
		}
		_, rerr := tx.ExecContext(ctx, `RELEASE write`)
		return errors.Join(err, rerr)
	}
	_, err := tx.ExecContext(ctx, `RELEASE write`)
	return err
}

// execer is where a single statement written outside Write goes: the Batch's
// transaction when ctx runs in one (the writer pool has one connection, which the batch
// holds: going to db.w would wait for it forever), else the writer pool.
func (db *DB) execer(ctx context.Context) interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
} {
	if tx := db.batchTx(ctx); tx != nil {
		return tx
	}
	return db.w
}

// Generation changes after every committed Write of this process. (Log inserts and
// last-used stamps write outside Write and do not change it.) A cache goes by Snapshot
// instead, which sees other processes' writes too.
func (db *DB) Generation() uint64 { return db.gen.Load() }

// constraintErr maps SQLite's constraint failures to the store's sentinels. It is the
// one place that reads SQLite's message text.
func constraintErr(err error, what string) error {
	if err == nil {
		return nil
	}
	if e, ok := pgConstraint(err, what); ok {
		return e
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "UNIQUE constraint failed"):
		// "UNIQUE constraint failed: devices.site_id, devices.name (2067)": name the last
		// column, the one a user typed.
		field := msg[strings.LastIndex(msg, "UNIQUE constraint failed")+len("UNIQUE constraint failed: "):]
		if i := strings.Index(field, " ("); i >= 0 {
			field = field[:i]
		}
		cols := strings.Split(field, ", ")
		field = cols[len(cols)-1]
		if i := strings.LastIndex(field, "."); i >= 0 {
			field = field[i+1:]
		}
		return &FieldError{Field: field, Err: fmt.Errorf("%s: %w", what, ErrConflict)}
	case strings.Contains(msg, "FOREIGN KEY constraint failed"):
		return fmt.Errorf("%s: %w", what, ErrInUse)
	}
	return err
}

// FieldError is a conflict or validation failure tied to one field of a write.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Problem is a message for the client in its own words (a sentence, as NetBox words
// its validation errors), returned as an error by checks and filters.
type Problem string

func (p Problem) Error() string { return string(p) }

// problemf formats a Problem.
func problemf(format string, args ...any) error { return Problem(fmt.Sprintf(format, args...)) }

// Counts is the number of rows of the main tables, for /api/status/.
func (db *DB) Counts(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, t := range []string{"devices", "platforms", "commands", "users"} {
		var n int64
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("store: count %s: %w", t, err)
		}
		out[t] = n
	}
	var n int64
	if err := db.r.QueryRowContext(ctx, `SELECT coalesce(sum(n), 0) FROM command_log_counts`).Scan(&n); err != nil {
		return nil, fmt.Errorf("store: count logs: %w", err)
	}
	out["command_logs"] = n
	return out, nil
}
