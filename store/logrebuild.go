package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// goMigrations are the migrations written in Go, by version. migrate runs them in
// order with the SQL files; each records itself in schema_migrations when it is done.
var goMigrations = map[string]func(context.Context, *DB, openOptions) error{
	"0063_log_outputs_last": moveLogOutputsLast,
}

// outputsLast are the columns a rebuild of command_logs moves to the end of each row, in
// this order. SQLite stores a row's columns in their order, and the part of a large
// value that does not fit its page in a chain of overflow pages; a read of any column
// after that value follows the whole chain. With the outputs in the middle, a page of
// logs without their output still read every output's pages.
var outputsLast = []string{"output", "parsed_output"}

// logTableOutputsLast is the statement that makes command_logs_new with the columns
// command_logs has now (whatever migration added them), in their order but with
// outputsLast at the end, and the list of those columns. It is read from the table
// rather than written out, so that a rebuild that runs after later migrations added
// columns (one that a full disk put off) keeps them.
func logTableOutputsLast(ctx context.Context, q querier) (create, columns string, err error) {
	type column struct {
		name, def string
	}
	refs := map[string]string{}
	rows, err := q.QueryContext(ctx, `SELECT "from", "table", "to", on_delete FROM pragma_foreign_key_list('command_logs')`)
	if err != nil {
		return "", "", err
	}
	for rows.Next() {
		var from, table, to, onDelete string
		if err := rows.Scan(&from, &table, &to, &onDelete); err != nil {
			rows.Close()
			return "", "", err
		}
		refs[from] = fmt.Sprintf(" REFERENCES %s (%s) ON DELETE %s", table, to, onDelete)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", "", err
	}
	var cols, last []column
	rows, err = q.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info('command_logs') ORDER BY cid`)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		var notNull, pk bool
		var dflt sql.NullString
		if err := rows.Scan(&name, &typ, &notNull, &dflt, &pk); err != nil {
			return "", "", err
		}
		def := name + " " + typ
		if pk {
			def += " PRIMARY KEY"
		}
		if notNull {
			def += " NOT NULL"
		}
		if dflt.Valid {
			def += " DEFAULT " + dflt.String
		}
		c := column{name, def + refs[name]}
		if slices.Contains(outputsLast, name) {
			last = append(last, c)
		} else {
			cols = append(cols, c)
		}
	}
	if err := rows.Err(); err != nil {
		return "", "", err
	}
	slices.SortFunc(last, func(a, b column) int { return slices.Index(outputsLast, a.name) - slices.Index(outputsLast, b.name) })
	var defs, names []string
	for _, c := range append(cols, last...) {
		defs, names = append(defs, c.def), append(names, c.name)
	}
	return "CREATE TABLE command_logs_new (\n    " + strings.Join(defs, ",\n    ") + "\n)", strings.Join(names, ", "), nil
}

// logRebuildBatch is how many logs each statement of a rebuild's copy moves; between
// two, the copy can be cancelled and its progress reported. Tests lower it.
var logRebuildBatch = 20_000

// moveLogOutputsLast is migration 0063: command_logs rewritten with its outputs last
// (logTableOutputsLast).
//
// It copies every log, so it needs about the table's size again in free disk while it
// runs (the write-ahead log holds the new table until it is checkpointed), and at
// five million logs it takes minutes. When the disk fills, nothing is changed: the
// logs keep their old order, which every query reads as well, only slower, and the
// next start tries again.
func moveLogOutputsLast(ctx context.Context, db *DB, o openOptions) error {
	const version = "0063_log_outputs_last"
	err := db.rebuildLogs(ctx, o.logger, version)
	if sqliteCode(err, sqlite3.SQLITE_FULL) {
		o.logger.Warn("command logs not rewritten with their outputs last: the disk is full. "+
			"Nothing was changed; pages of logs without output read more until it is done, at a later start "+
			"with about the database's size free", "err", err)
		return nil
	}
	return err
}

// rebuildLogs rewrites command_logs in one transaction: a new table with the outputs last
// (logTableOutputsLast), every log copied into it by columns, the old table dropped
// and the new one renamed in its place, and the old table's indexes and triggers made
// again. Ids do not change, so the word index, whose content is command_logs by id,
// stays right, as do the counters, which no trigger touched during the copy. The
// migration version is recorded in the same transaction; one that another process
// recorded meanwhile is not done again. A cancelled ctx or any error leaves the table as
// it was.
func (db *DB) rebuildLogs(ctx context.Context, logger *slog.Logger, version string) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Off for the rebuild: the copy moves references that hold already, and with them
	// on, dropping the old table would first delete its rows one by one. It cannot be
	// changed inside a transaction.
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	// The sorts that build the indexes spill to files rather than memory: at a million
	// logs the rebuild then peaked at 136 MB instead of 367 MB, and took 24 s, not 28.
	if _, err := conn.ExecContext(ctx, `PRAGMA temp_store = FILE`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA temp_store = MEMORY`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if done, err := applied(ctx, tx, version); err != nil || done {
		return err
	}

	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM command_logs`).Scan(&total); err != nil {
		return err
	}
	remake, err := logIndexesAndTriggers(ctx, tx)
	if err != nil {
		return err
	}
	create, columns, err := logTableOutputsLast(ctx, tx)
	if err != nil {
		return err
	}
	start := time.Now()
	if total > 0 {
		logger.Info("rewriting the command logs once, with their outputs last; the server starts when it is done",
			"logs", total)
	}
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return err
	}
	shown := start
	progress := func(args ...any) {
		if time.Since(shown) >= 5*time.Second {
			shown = time.Now()
			logger.Info("rewriting the command logs", args...)
		}
	}
	var copied, last int64
	for {
		res, err := tx.ExecContext(ctx, `INSERT INTO command_logs_new (`+columns+`)
			SELECT `+columns+` FROM command_logs WHERE id > ? ORDER BY id LIMIT ?`, last, logRebuildBatch)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		copied += n
		// The batch is inserted in id order: its last row has the highest id.
		if last, err = res.LastInsertId(); err != nil {
			return err
		}
		progress("copied", copied, "of", total, "percent", copied*100/max(total, 1))
	}
	if copied != total {
		return fmt.Errorf("copied %d logs of %d", copied, total)
	}
	if total > 0 {
		logger.Info("rewriting the command logs: copied; dropping the old table and building the indexes",
			"indexes_and_triggers", len(remake))
	}
	for i, stmt := range append([]string{`DROP TABLE command_logs`, `ALTER TABLE command_logs_new RENAME TO command_logs`}, remake...) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
		if i >= 2 {
			progress("indexes_and_triggers_made", i-1, "of", len(remake))
		}
	}
	if err := db.record(ctx, tx, version); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if total > 0 {
		// The new table is in the write-ahead log; copying it into the file now keeps
		// the first requests from paying for it, and returns the log's disk space.
		if _, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			logger.Warn("checkpoint after rewriting the command logs", "err", err)
		}
		logger.Info("command logs rewritten", "logs", total, "seconds", time.Since(start).Round(time.Second).Seconds())
	}
	return nil
}

// logIndexesAndTriggers are the statements that make command_logs' indexes and
// triggers, indexes first.
func logIndexesAndTriggers(ctx context.Context, tx *sql.Tx) ([]string, error) {
	return scalars[string](ctx, tx, `SELECT sql FROM sqlite_master
		WHERE tbl_name = 'command_logs' AND type IN ('index', 'trigger') AND sql IS NOT NULL
		ORDER BY type = 'trigger', rowid`)
}
