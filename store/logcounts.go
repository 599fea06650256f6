package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The counters beside the command logs, kept in Go in the transaction that writes or
// deletes the logs they count (an insert, a retention prune), with upserts that add n:
//
//	command_log_counts    logs by device, user, user name and outcome
//	command_log_hours     logs by hour of created (UTC), device and outcome
//	command_log_commands  logs by command, command name and device
//	command_log_errors    failed logs (not cancelled) by device and error message
//	command_log_names     every command, device and user name some log has had
//
// A key is the id a log referred to when it was written, 0 for none; when a device,
// user or command is deleted (its logs' reference becomes NULL), its rows move to key 0
// in the same transaction (logKeyGone). The outcome is 1 for a success, 2 for a
// cancelled execution (its failure's reason), 0 for any other failure.

// The outcomes a log is counted under.
const (
	outcomeFailed    = 0
	outcomeSucceeded = 1
	outcomeCancelled = 2
)

// errorPrefix is how many characters of an error message the statistics group by.
const errorPrefix = 100

// logTally is what a log counts in.
type logTally struct {
	device, user, command             int64
	username, commandName, deviceName string
	outcome                           int
	created                           string // its stamp
	errorMessage                      string
}

// tallyColumns are the columns a tally is read from (scanTally), on the row aliased t.
const tallyColumns = `coalesce(t.device_id, 0), coalesce(t.user_id, 0), coalesce(t.command_id, 0), t.username,
	t.command_name, t.device_name, t.success, t.failure, t.created, t.error_message`

// scanTally reads a row of tallyColumns.
func scanTally(rows *sql.Rows) (logTally, error) {
	var t logTally
	var ok bool
	var failure sql.NullString
	err := rows.Scan(&t.device, &t.user, &t.command, &t.username, &t.commandName, &t.deviceName, &ok, &failure,
		&t.created, &t.errorMessage)
	t.outcome = outcomeOf(ok, failure.String)
	return t, err
}

// outcomeOf is the outcome of a log: succeeded, else cancelled when its failure (as
// stored: JSON) says so, else failed.
func outcomeOf(success bool, failure string) int {
	if success {
		return outcomeSucceeded
	}
	var f struct{ Reason string }
	if json.Unmarshal([]byte(failure), &f) == nil && f.Reason == "cancelled" {
		return outcomeCancelled
	}
	return outcomeFailed
}

// counterRows are the changes a batch of logs makes to the counters, n by row.
type counterRows struct {
	counts   map[[4]any]int64 // device, user, username, outcome
	hours    map[[3]any]int64 // hour, device, outcome
	commands map[[3]any]int64 // command, command name, device
	errors   map[[2]any]int64 // device, error
	names    map[[2]any]bool  // kind, name
}

func newCounterRows() *counterRows {
	return &counterRows{counts: map[[4]any]int64{}, hours: map[[3]any]int64{}, commands: map[[3]any]int64{},
		errors: map[[2]any]int64{}, names: map[[2]any]bool{}}
}

// add counts a log n times (1 written, -1 deleted).
func (c *counterRows) add(t logTally, n int64) {
	c.counts[[4]any{t.device, t.user, t.username, t.outcome}] += n
	c.hours[[3]any{t.created[:min(len(t.created), len(hourLayout))], t.device, t.outcome}] += n
	c.commands[[3]any{t.command, t.commandName, t.device}] += n
	if t.outcome == outcomeFailed {
		c.errors[[2]any{t.device, errorKey(t.errorMessage)}] += n
	}
	if n > 0 {
		for kind, name := range []string{t.commandName, t.deviceName, t.username} {
			c.names[[2]any{kind, name}] = true
		}
	}
}

// errorKey is the part of an error message the statistics group failures by.
func errorKey(msg string) string {
	r := []rune(msg)
	return string(r[:min(len(r), errorPrefix)])
}

// counterTables are the counter tables with their key columns, in the order of the keys
// of counterRows.
var counterTables = []struct{ table, keys string }{
	{"command_log_counts", "device_key, user_key, username, outcome"},
	{"command_log_hours", "hour, device_key, outcome"},
	{"command_log_commands", "command_key, command_name, device_key"},
	{"command_log_errors", "device_key, error"},
}

// write applies the changes in tx: each row's n added, rows at 0 deleted, new names
// added.
func (c *counterRows) write(ctx context.Context, db *DB, tx *sql.Tx) error {
	each := func(i int, key []any, n int64) error {
		if n == 0 {
			return nil
		}
		if _, err := db.txExec(ctx, tx, counterUpsert(i), append(key, n)...); err != nil {
			return fmt.Errorf("store: %s: %w", counterTables[i].table, err)
		}
		if n > 0 {
			return nil
		}
		if _, err := db.txExec(ctx, tx, counterEmptied(i), key...); err != nil {
			return fmt.Errorf("store: %s: %w", counterTables[i].table, err)
		}
		return nil
	}
	// Rows are written in one order (inOrder): two batches that share rows (a hub's
	// sites share command and user names) then wait for each other instead of
	// deadlocking on PostgreSQL, where each row stays locked until commit.
	var err error
	for _, k := range inOrder(c.counts, func(k [4]any) []any { return k[:] }) {
		err = cmp.Or(err, each(0, k[:], c.counts[k]))
	}
	for _, k := range inOrder(c.hours, func(k [3]any) []any { return k[:] }) {
		err = cmp.Or(err, each(1, k[:], c.hours[k]))
	}
	for _, k := range inOrder(c.commands, func(k [3]any) []any { return k[:] }) {
		err = cmp.Or(err, each(2, k[:], c.commands[k]))
	}
	for _, k := range inOrder(c.errors, func(k [2]any) []any { return k[:] }) {
		err = cmp.Or(err, each(3, k[:], c.errors[k]))
	}
	for _, k := range inOrder(c.names, func(k [2]any) []any { return k[:] }) {
		if _, e := db.txExec(ctx, tx, nameInsert, k[:]...); e != nil {
			err = cmp.Or(err, fmt.Errorf("store: command_log_names: %w", e))
		}
	}
	return err
}

// inOrder is the keys of m sorted by their values' Go syntax: any fixed order serves,
// as long as every writer uses the same one. One key (a single log's) is not sorted.
func inOrder[K comparable, V any](m map[K]V, values func(K) []any) []K {
	keys := slices.Collect(maps.Keys(m))
	if len(keys) < 2 {
		return keys
	}
	text := make(map[K]string, len(keys))
	for _, k := range keys {
		text[k] = fmt.Sprintf("%#v", values(k))
	}
	slices.SortFunc(keys, func(a, b K) int { return strings.Compare(text[a], text[b]) })
	return keys
}

// counterUpsert adds n to the row of counter table i (its keys, then n).
func counterUpsert(i int) string {
	t := counterTables[i]
	return `INSERT INTO ` + t.table + ` (` + t.keys + `, n) VALUES (` + placeholders(strings.Count(t.keys, ",")+2) +
		`) ON CONFLICT (` + t.keys + `) DO UPDATE SET n = ` + t.table + `.n + excluded.n` // PostgreSQL: n alone is ambiguous
}

// counterEmptied deletes the row of counter table i (its keys) when it counts no log.
func counterEmptied(i int) string {
	t := counterTables[i]
	return `DELETE FROM ` + t.table + ` WHERE (` + t.keys + `) = (` + placeholders(strings.Count(t.keys, ",")+1) + `) AND n <= 0`
}

// nameInsert adds a name some log has (kind, name), when it is new.
const nameInsert = `INSERT INTO command_log_names (kind, name) VALUES (?, ?) ON CONFLICT DO NOTHING`

// prepareLogWrites prepares the statements of a log's write on the writer, before any
// transaction holds its connection, so that each log's transaction uses them (txExec).
func (db *DB) prepareLogWrites(ctx context.Context) {
	stmts := []string{insertLogSQL + ` RETURNING id`, nameInsert}
	for i := range counterTables {
		stmts = append(stmts, counterUpsert(i), counterEmptied(i))
	}
	for _, q := range stmts {
		db.w.stmt(ctx, q)
	}
}

// countLogsAfter adds the logs after id lastID to the counters, in tx: for logs written
// in bulk (BulkLogs).
func (db *DB) countLogsAfter(ctx context.Context, tx *sql.Tx, lastID int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+tallyColumns+` FROM command_logs t WHERE t.id > ?`, lastID)
	if err != nil {
		return err
	}
	c := newCounterRows()
	for rows.Next() {
		t, err := scanTally(rows)
		if err != nil {
			rows.Close()
			return err
		}
		c.add(t, 1)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return c.write(ctx, db, tx)
}

// logKeyGone moves the counters of a deleted device, user or command (key, a column of
// the counters: device_key, user_key or command_key) to key 0, in the transaction that
// deletes it, as its logs' reference becomes NULL.
func logKeyGone(ctx context.Context, tx *sql.Tx, key string, id int64) error {
	for _, t := range counterTables {
		if !strings.Contains(t.keys, key) {
			continue
		}
		cols := strings.ReplaceAll(t.keys, key, "0")
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+t.table+` (`+t.keys+`, n) SELECT `+cols+`, n FROM `+t.table+
			` WHERE `+key+` = ? ON CONFLICT (`+t.keys+`) DO UPDATE SET n = `+t.table+`.n + excluded.n`, id); err != nil {
			return fmt.Errorf("store: %s: %w", t.table, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t.table+` WHERE `+key+` = ?`, id); err != nil {
			return fmt.Errorf("store: %s: %w", t.table, err)
		}
	}
	return nil
}
