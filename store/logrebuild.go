package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// goMigrations are the migrations written in Go, by version. migrate runs them in
// order with the SQL files; each records itself in schema_migrations when it is done.
var goMigrations = map[string]func(context.Context, *DB, openOptions) error{
	"0063_log_outputs_last": skipLogOutputsLast,
	"0130_log_store":        migrateLogStore,
}

// skipLogOutputsLast is migration 0063, which rewrote command_logs with its outputs
// last: 0130 rewrites the table that way too (with the columns it has then), so a file
// that reaches 0063 now only records it, rather than copying every log twice.
func skipLogOutputsLast(ctx context.Context, db *DB, _ openOptions) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		if done, err := applied(ctx, tx, "0063_log_outputs_last"); err != nil || done {
			return err
		}
		return db.record(ctx, tx, "0063_log_outputs_last")
	})
}

// logStore0130 is the command logs' store from migration 0130 on: what is made after
// the old machinery goes and the table is rewritten (migrateLogStore). The counters
// are filled from the logs here; from then on the store keeps them (logcounts.go).
var logStore0130 = []string{
	`CREATE INDEX command_logs_created ON command_logs (created, id, device_id, success)`,
	`CREATE INDEX command_logs_device ON command_logs (device_id, created)`,
	`CREATE INDEX command_logs_username ON command_logs (username, created, id, device_id)`,
	`CREATE INDEX command_logs_success ON command_logs (success, created, id, device_id)`,
	`CREATE INDEX command_logs_duration ON command_logs (execution_duration, created, id, device_id)`,
	`CREATE INDEX command_logs_command_name ON command_logs (command_name, created)`,
	`CREATE INDEX command_logs_device_name ON command_logs (device_name, created)`,

	`CREATE TABLE command_log_counts (
		device_key INTEGER NOT NULL,
		user_key   INTEGER NOT NULL,
		username   TEXT    NOT NULL,
		outcome    INTEGER NOT NULL,
		n          INTEGER NOT NULL,
		PRIMARY KEY (device_key, user_key, username, outcome)
	) WITHOUT ROWID`,
	`CREATE TABLE command_log_hours (
		hour       TEXT    NOT NULL,
		device_key INTEGER NOT NULL,
		outcome    INTEGER NOT NULL,
		n          INTEGER NOT NULL,
		PRIMARY KEY (hour, device_key, outcome)
	) WITHOUT ROWID`,
	`CREATE TABLE command_log_commands (
		command_key  INTEGER NOT NULL,
		command_name TEXT    NOT NULL,
		device_key   INTEGER NOT NULL,
		n            INTEGER NOT NULL,
		PRIMARY KEY (command_key, command_name, device_key)
	) WITHOUT ROWID`,
	`CREATE TABLE command_log_errors (
		device_key INTEGER NOT NULL,
		error      TEXT    NOT NULL,
		n          INTEGER NOT NULL,
		PRIMARY KEY (device_key, error)
	) WITHOUT ROWID`,
	`CREATE TABLE command_log_names (
		kind INTEGER NOT NULL,
		name TEXT    NOT NULL,
		PRIMARY KEY (kind, name)
	) WITHOUT ROWID`,
	`INSERT INTO command_log_counts (device_key, user_key, username, outcome, n)
		SELECT coalesce(device_id, 0), coalesce(user_id, 0), username, ` + outcome0130 + `, count(*)
		FROM command_logs GROUP BY 1, 2, 3, 4`,
	`INSERT INTO command_log_hours (hour, device_key, outcome, n)
		SELECT substr(created, 1, 13), coalesce(device_id, 0), ` + outcome0130 + `, count(*) FROM command_logs GROUP BY 1, 2, 3`,
	`INSERT INTO command_log_commands (command_key, command_name, device_key, n)
		SELECT coalesce(command_id, 0), command_name, coalesce(device_id, 0), count(*) FROM command_logs GROUP BY 1, 2, 3`,
	`INSERT INTO command_log_errors (device_key, error, n)
		SELECT coalesce(device_id, 0), substr(error_message, 1, 100), count(*) FROM command_logs
		WHERE ` + outcome0130 + ` = 0 GROUP BY 1, 2`,
	`INSERT INTO command_log_names (kind, name)
		SELECT 0, command_name FROM command_logs UNION SELECT 1, device_name FROM command_logs
		UNION SELECT 2, username FROM command_logs`,

	// ?q='s words: output, error message and notes, by word (logsearch.go).
	`CREATE VIRTUAL TABLE command_log_words USING fts5(output, error_message, notes,
		content = 'command_logs', content_rowid = 'id', tokenize = 'unicode61', columnsize = 0)`,
	`INSERT INTO command_log_words (command_log_words) VALUES ('rebuild')`,
	`CREATE TRIGGER command_logs_words_ai AFTER INSERT ON command_logs BEGIN
		INSERT INTO command_log_words (rowid, output, error_message, notes) VALUES (NEW.id, NEW.output, NEW.error_message, NEW.notes);
	END`,
	`CREATE TRIGGER command_logs_words_ad AFTER DELETE ON command_logs BEGIN
		INSERT INTO command_log_words (command_log_words, rowid, output, error_message, notes)
			VALUES ('delete', OLD.id, OLD.output, OLD.error_message, OLD.notes);
	END`,
	`CREATE TRIGGER command_logs_words_au AFTER UPDATE OF output, error_message, notes ON command_logs BEGIN
		INSERT INTO command_log_words (command_log_words, rowid, output, error_message, notes)
			VALUES ('delete', OLD.id, OLD.output, OLD.error_message, OLD.notes);
		INSERT INTO command_log_words (rowid, output, error_message, notes) VALUES (NEW.id, NEW.output, NEW.error_message, NEW.notes);
	END`,
	// A log changed or deleted moves the generation, which a kept search count goes by
	// (logsearch.go); a log written does not.
	`CREATE TRIGGER command_logs_gen_au AFTER UPDATE ON command_logs BEGIN UPDATE generation SET n = n + 1; END`,
	`CREATE TRIGGER command_logs_gen_ad AFTER DELETE ON command_logs BEGIN UPDATE generation SET n = n + 1; END`,
}

// logStoreBefore0130 are the tables of the log store before 0130, all made again or
// gone. A trigger on command_logs that names one of them is the old store's and goes
// too; any other (a log's event, its hub outbox record) is kept.
var logStoreBefore0130 = []string{"command_log_totals", "command_log_counts", "command_log_errors",
	"command_log_device_totals", "command_log_device_counts", "command_log_device_errors", "command_log_device_hours",
	"command_log_user_counts", "command_log_search_counts", "command_log_search_epoch", "command_log_moves",
	"command_log_order", "command_log_names_fts", "command_log_names", "command_logs_text"}

// outcome0130 is a log's outcome (logcounts.go) in SQL, for filling the counters once:
// the store computes it in Go from then on.
const outcome0130 = `(CASE WHEN success THEN 1
	WHEN json_valid(failure) AND json_extract(failure, '$.reason') = 'cancelled' THEN 2 ELSE 0 END)`

// migrateLogStore is migration 0130, in one transaction: the log store's triggers,
// indexes and tables of before go; command_logs gains notes and is rewritten with its
// outputs last, each log copied as it is (ids too, so that what refers to a log, like
// command_log_schedules, still does); then logStore0130, and the triggers on
// command_logs that are not the log store's made again as they were. It needs about the
// database's size again in free disk while it runs. A full disk, or any error, leaves
// the file as it was, and the server does not start until it is done.
func migrateLogStore(ctx context.Context, db *DB, o openOptions) error {
	var others []string
	err := db.rewriteLogs(ctx, o.logger, "0130_log_store", func(tx *sql.Tx) error {
		var err error
		if others, err = otherLogTriggers(ctx, tx); err != nil {
			return err
		}
		drops, err := scalars[string](ctx, tx, `SELECT 'DROP ' || upper(type) || ' ' || name FROM sqlite_master
			WHERE tbl_name IN ('command_logs', 'command_log_names') AND type IN ('index', 'trigger') AND sql IS NOT NULL`)
		if err != nil {
			return err
		}
		for _, t := range logStoreBefore0130 {
			drops = append(drops, `DROP TABLE IF EXISTS `+t)
		}
		return execAll(ctx, tx, append(drops, `ALTER TABLE command_logs ADD COLUMN notes TEXT NOT NULL DEFAULT ''`), nil)
	}, func(tx *sql.Tx, progress func(args ...any)) error {
		if err := execAll(ctx, tx, append(slices.Clone(logStore0130), others...), progress); err != nil {
			return err
		}
		return referencesHold(ctx, tx)
	})
	if sqliteCode(err, sqlite3.SQLITE_FULL) {
		return fmt.Errorf("the disk is full: rewriting the command logs needs about the database's size free beside it; "+
			"nothing was changed: %w", err)
	}
	return err
}

// otherLogTriggers are the statements that made the triggers on command_logs which are
// not the old log store's (they name none of logStoreBefore0130), in the order they were
// made: what other features hang on a log being written.
func otherLogTriggers(ctx context.Context, tx *sql.Tx) ([]string, error) {
	stmts, err := scalars[string](ctx, tx, `SELECT sql FROM sqlite_master
		WHERE type = 'trigger' AND tbl_name = 'command_logs' AND sql IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	store := regexp.MustCompile(`(?i)\b(` + strings.Join(logStoreBefore0130, "|") + `)\b`)
	return slices.DeleteFunc(stmts, store.MatchString), nil
}

// referencesHold checks, after the rewrite, the foreign keys of every table that refers
// to command_logs (the rewrite runs with them off): the ids are copied, so none may
// break. The logs' own references are copied as they were.
func referencesHold(ctx context.Context, tx *sql.Tx) error {
	tables, err := scalars[string](ctx, tx, `SELECT m.name FROM sqlite_master m, pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' AND f."table" = 'command_logs' GROUP BY m.name`)
	if err != nil {
		return err
	}
	for _, t := range tables {
		var broken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check(?)`, t).Scan(&broken); err != nil {
			return err
		}
		if broken > 0 {
			return fmt.Errorf("%s: %d references broken by the rewrite", t, broken)
		}
	}
	return nil
}

// execAll runs statements in tx, in order, saying how far it got to progress (when set).
func execAll(ctx context.Context, tx *sql.Tx, stmts []string, progress func(args ...any)) error {
	for i, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.60s: %w", strings.Join(strings.Fields(s), " "), err)
		}
		if progress != nil {
			progress("step", i+1, "of", len(stmts))
		}
	}
	return nil
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

// logRebuildBatch is how many logs each statement of a rewrite's copy moves; between
// two, the copy can be cancelled and its progress reported. Tests lower it.
var logRebuildBatch = 20_000

// rewriteLogs runs a migration that rewrites command_logs, in one transaction: before
// changes the table and what hangs on it, then a new table with the outputs last
// (logTableOutputsLast) takes every log, by columns, and replaces the old one; then
// after makes what the new table needs. Ids do not change. The version is recorded in
// the same transaction; one that another process recorded meanwhile is not done again.
// A cancelled ctx or any error leaves the file as it was.
func (db *DB) rewriteLogs(ctx context.Context, logger *slog.Logger, version string, before func(tx *sql.Tx) error,
	after func(tx *sql.Tx, progress func(args ...any)) error) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Off for the rewrite: the copy moves references that hold already, and with them
	// on, dropping the old table would first delete its rows one by one. It cannot be
	// changed inside a transaction.
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	// The sorts that build the indexes spill to files rather than memory.
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
	start, shown := time.Now(), time.Now()
	progress := func(args ...any) {
		if time.Since(shown) >= 5*time.Second {
			shown = time.Now()
			logger.Info("rewriting the command logs", args...)
		}
	}
	if total > 0 {
		logger.Info("rewriting the command logs once for a new version; the server starts when it is done", "logs", total)
	}
	if err := before(tx); err != nil {
		return err
	}
	if err := copyLogs(ctx, tx, total, progress); err != nil {
		return err
	}
	if total > 0 {
		logger.Info("rewriting the command logs: copied; building the indexes and counters")
	}
	if err := after(tx, progress); err != nil {
		return err
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

// copyLogs copies command_logs into a new table with its outputs last, in batches of
// logRebuildBatch, and puts it in the old one's place.
func copyLogs(ctx context.Context, tx *sql.Tx, total int64, progress func(args ...any)) error {
	create, columns, err := logTableOutputsLast(ctx, tx)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return err
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
	return execAll(ctx, tx, []string{`DROP TABLE command_logs`, `ALTER TABLE command_logs_new RENAME TO command_logs`}, nil)
}
