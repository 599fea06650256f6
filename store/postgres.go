package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// A hub's store may live in PostgreSQL (store.driver: postgres), which every team running
// NetBox already operates: one database that several hub processes share. It is the
// same DB, with the same SQL (pgdriver.go numbers its placeholders); only the schema is
// PostgreSQL's own (pgschema/), as its types and triggers are not SQLite's.

//go:embed pgschema/*.sql
var pgSchema embed.FS

// pgConns is how many connections each of a PostgreSQL store's pools keeps open at
// most: a hub applies four pushes at once and answers API calls beside them.
const pgConns = 16

// pgMigrateLock is the advisory lock hub processes take to migrate one at a time.
const pgMigrateLock = 404_0001

// OpenPostgres opens the store in the PostgreSQL database of dsn (a URL or key=value
// string, as libpq takes it) and brings its schema up to date. Several processes may
// open one database; they migrate it one at a time.
func OpenPostgres(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	open := func() *sql.DB {
		d := sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)})
		d.SetMaxOpenConns(pgConns)
		d.SetMaxIdleConns(pgConns)
		d.SetConnMaxIdleTime(5 * time.Minute)
		return d
	}
	db := &DB{w: newPool(open()), r: newPool(open()), pg: true, path: cfg.Host + "/" + cfg.Database,
		now: func() time.Time { return time.Now().UTC() }}
	if err := db.migratePostgres(ctx, o); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Postgres reports whether the store is in PostgreSQL.
func (db *DB) Postgres() bool { return db.pg }

// migratePostgres applies the PostgreSQL migrations not yet recorded, in version order,
// under an advisory lock: hub processes started together migrate one after the other.
func (db *DB) migratePostgres(ctx context.Context, o openOptions) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: postgres: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, pgMigrateLock); err != nil {
		return fmt.Errorf("store: postgres: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(?)`, pgMigrateLock)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version TEXT PRIMARY KEY, applied TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	names, err := fs.Glob(pgSchema, "pgschema/*.sql")
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		version := "pg" + strings.TrimSuffix(path.Base(name), ".sql")
		if done, err := applied(ctx, conn, version); err != nil || done {
			if err != nil {
				return fmt.Errorf("store: migrate %s: %w", version, err)
			}
			continue
		}
		o.logger.Info("store: migrating the PostgreSQL database", "migration", version)
		if err := db.applyPostgres(ctx, conn, version, name); err != nil {
			return fmt.Errorf("store: migrate %s: %w", version, err)
		}
	}
	return nil
}

func (db *DB) applyPostgres(ctx context.Context, conn *sql.Conn, version, name string) error {
	body, err := pgSchema.ReadFile(name)
	if err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if err := db.record(ctx, tx, version); err != nil {
		return err
	}
	return tx.Commit()
}

// pgConstraint maps PostgreSQL's constraint failures to the store's sentinels as
// constraintErr does SQLite's; false for another error.
func pgConstraint(err error, what string) (error, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil, false
	}
	switch pe.Code {
	case "23505": // unique_violation: "Key (site_id, name)=(2, sw1) already exists."
		field := pe.ColumnName
		if k, ok := strings.CutPrefix(pe.Detail, "Key ("); ok {
			cols, _, _ := strings.Cut(k, ")=")
			all := strings.Split(cols, ", ")
			field = all[len(all)-1]
		}
		return &FieldError{Field: field, Err: fmt.Errorf("%s: %w", what, ErrConflict)}, true
	case "23503": // foreign_key_violation
		return fmt.Errorf("%s: %w", what, ErrInUse), true
	}
	return nil, false
}
