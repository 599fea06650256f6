package store

import (
	"context"
	"database/sql"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
)

// CommandLogs is netbox_toolkit_plugin.commandlog: the read-only audit log of
// executions, written by the server only. A log keeps the command's, device's and
// user's names, so it outlives them. The export's columns follow the Export flags, in
// this order.
var CommandLogs = sortedBy(declare(&Model{
	Type: TypeCommandLog, Name: "CommandLog", Table: "command_logs", DefaultOrder: "-created", DisplayFields: []string{"command_name", "device_name"},
	Display:    func(r Row) string { return fmt.Sprintf("%s on %s", r["command_name"], r["device_name"]) },
	TextSearch: func(ctx context.Context, db *DB, q string) (Expr, error) { return db.logSearch(ctx, q) },
	List:       func(ctx context.Context, db *DB, q Query) ([]int64, int, []any, error) { return db.listLogs(ctx, q) },
	Fields: []Field{
		{Name: "username", Column: "username", Kind: KindString, Access: ReadOnly, Filter: FilterLookups, Sort: true,
			SortIndex: "command_logs_username", SortThen: "created", Search: true, Export: Exported, Doc: "user who executed the command"},
		{Name: "device", Column: "device_id", Kind: KindInt, Rel: TypeDevice, KeptName: "device_name", Access: ReadOnly,
			Export: Exported, Doc: "id (null once the device is deleted), url (absent then), name, display"},
		{Name: "command", Column: "command_id", Kind: KindInt, Rel: TypeCommand, KeptName: "command_name", Access: ReadOnly,
			Export: Exported, Doc: "id (null once the command is deleted), url (absent then), name, display"},
		{Name: "command_type", Column: "command_type", Kind: KindString, Access: ReadOnly, Choices: CommandTypes,
			Default: CommandShow, Export: Exported},
		{Name: "success", Column: "success", Kind: KindBool, Access: ReadOnly, Filter: FilterExact, Sort: true,
			SortIndex: "command_logs_success", SortThen: "created", Export: Exported, Doc: "outcome (true/false)"},
		{Name: "execution_duration", Column: "execution_duration", Kind: KindFloat, Access: ReadOnly, Sort: true,
			SortIndex: "command_logs_duration", SortThen: "created", Export: Exported, Doc: "seconds"},
		{Name: "error_message", Column: "error_message", Kind: KindString, Access: ReadOnly, Export: Exported,
			Doc: "empty when successful"},
		{Name: "user", Column: "user_id", Kind: KindInt, Rel: TypeUser, KeptName: "username", Access: ReadOnly, Null: true},
		{Name: "execution_time", Column: "execution_time", Kind: KindTime, Access: ReadOnly},
		{Name: "parsed_output", Column: "parsed_output", Kind: KindJSON, Access: ReadOnly, Null: true, Schema: "ParsedOutput"},
		{Name: "syntax_error", Column: "syntax_error", Kind: KindJSON, Access: ReadOnly, Null: true, Schema: "SyntaxError"},
		{Name: "sent_command", Column: "sent_command", Kind: KindString, Access: ReadOnly, Export: Exported,
			Doc: "exactly what was sent to the device: the command with its variables substituted (and quoted, " +
				"where the driver quotes); empty for logs written before it was recorded"},
		{Name: "variables", Column: "variables", Kind: KindJSON, Access: ReadOnly, Null: true, Export: Exported,
			Schema: "LogVariables", Doc: "the value each variable took (a default included); null for logs written before"},
		{Name: "credential_set", Column: "credential_set_id", Kind: KindInt, Rel: TypeCredentialSet,
			KeptName: "credential_set_name", Access: ReadOnly, Null: true, Export: Exported,
			Doc: "the credential set used: id and name, kept after the set is deleted"},
		{Name: "source", Column: "source", Kind: KindString, Access: ReadOnly, Null: true, Choices: LogSources,
			Filter: FilterExact, Export: Exported, Doc: "where the execution came from; null for logs written before"},
		{Name: "client_address", Column: "client_address", Kind: KindString, Access: ReadOnly, Filter: FilterLookups,
			Export: Exported, Label: "Client address", Doc: "the address the request came from"},
		{Name: "notes", Column: "notes", Kind: KindString, Access: ReadOnly, MaxLen: MaxNotes, Export: Exported,
			Doc: "why the command was run, as its runner said (at most 1,000 characters); the only part of a log " +
				"that may change: its author or a user with change_commandlog edits it with a PATCH"},
		// Exported after the columns exports had before it, so that a reader by position
		// still finds them.
		{Name: "site", Kind: KindInt, Rel: TypeSite, Null: true, Access: ReadOnly, Select: logSiteSQL, Export: Exported,
			Doc: "the site of the log's device (at a hub: the FieldKit site it ran at), read from the device when the log is; " +
				"null when the device has no site or is deleted"},
		{Name: "schedule", Kind: KindJSON, Access: ReadOnly, Null: true, Select: logScheduleSQL, Schema: "LogSchedule",
			Doc: "the schedule that ran the execution (source schedule): its id and name as they were; null otherwise"},
		{Name: "output", Column: "output", Kind: KindString, Access: ReadOnly, Export: ExportOnRequest, Lazy: true},
		{Name: "failure", Column: "failure", Kind: KindJSON, Access: ReadOnly, Null: true, Schema: "ExecutionFailure",
			Doc: "why a failed execution failed, in parts; null on success or a syntax error"},
		{Name: "command_name", Column: "command_name", Kind: KindString, Access: Internal, Search: true},
		{Name: "device_name", Column: "device_name", Kind: KindString, Access: Internal, Search: true},
		{Name: "credential_set_name", Column: "credential_set_name", Kind: KindString, Access: Internal},
	},
	Filters: map[string]Filter{
		"device_id":   {Path: "device", Doc: "device id"},
		"site_id":     {Path: "device__site", Doc: "site id of the log's device (at a hub: the FieldKit site it ran at)"},
		"site":        {Path: "device__site__slug", Doc: "site slug of the log's device (at a hub: the FieldKit site it ran at)"},
		"command_id":  {Path: "command", Doc: "command id"},
		"user_id":     {Path: "user", Doc: "id of the user who executed"},
		"schedule_id": {SQL: logScheduleFilter, Kind: KindInt, Doc: "id of the schedule that ran it"},
		"created":     {Path: "created", Lookups: true, Doc: "creation time; created__gte and created__lte bound a range"},
	},
}))

// logSiteSQL is a log's site: its device's, looked up by the device's id for the rows
// read (a page's, an export's), never kept on the log.
const logSiteSQL = `(SELECT d.site_id FROM devices d WHERE d.id = t.device_id)`

// sortedBy names the index that holds the created field's order (see Field.SortIndex):
// ties on created break by id, which the index holds next.
func sortedBy(m *Model) *Model {
	f, _ := m.Field("created")
	f.SortIndex = "command_logs_created"
	return m
}

// LogSources are where an execution may come from.
var LogSources = []Choice{{"api", "API (execute)"}, {"bulk", "API (bulk execute)"}, {"ui", "Web interface"},
	{"schedule", "Schedule"}, {"backup", "Config backup"}, {"hub", "Hub (a job from the site's hub)"}}

// insertSQL is the INSERT of a model's stored columns (references by id, kept names,
// JSON as text, the time stamps), for rows the server writes whole (logs).
func insertSQL(m *Model) (string, []*Field) {
	var fields []*Field
	var cols []string
	for i := range m.Fields {
		if f := &m.Fields[i]; f.Column != "" && f.Select == "" && f.Name != "id" {
			fields, cols = append(fields, f), append(cols, f.Column)
		}
	}
	return `INSERT INTO ` + m.Table + ` (` + strings.Join(cols, ", ") + `) VALUES (` + placeholders(len(cols)) + `)`, fields
}

var insertLogSQL, logColumns = insertSQL(CommandLogs)

// logWordsOf are the words of a log's column values (logArgs): of its output, error
// message and notes.
func logWordsOf(args []any) []string {
	var texts []string
	for _, col := range []string{"output", "error_message", "notes"} {
		if s, ok := args[logColumn(col)].(string); ok {
			texts = append(texts, s)
		}
	}
	return logWordSet(texts...)
}

// logArgs are the column values of one log: a field left out gets its Default, else
// NULL if it is a reference or Null, else its kind's zero value; created is the store's
// clock unless given, last_updated and execution_time default to created. A name that
// is no field is an error, not a silent loss. stampAt are the positions of the columns
// that take created when the clock gives it (nil when given): the log queue stamps them
// again as the log joins it (logQueue.stamp).
func (db *DB) logArgs(v Values) ([]any, []int, error) {
	created, _ := v["created"].(time.Time)
	clocked := created.IsZero()
	if clocked {
		created = db.now()
	}
	args := make([]any, len(logColumns))
	var stampAt []int
	for i, f := range logColumns {
		val, ok := v[f.Name]
		switch {
		case f.Name == "created" || f.Name == "last_updated" || (f.Name == "execution_time" && !ok):
			val = created
			if clocked {
				stampAt = append(stampAt, i)
			}
		case !ok && f.Default != nil:
			val = f.Default
		case !ok && f.Rel == "" && !f.Null:
			val = zeroOf(f.Kind)
		}
		args[i] = toColumn(f, val)
	}
	for name := range v {
		if _, ok := CommandLogs.Field(name); !ok {
			return nil, nil, fmt.Errorf("store: command log: unknown field %q", name)
		}
	}
	return args, stampAt, nil
}

// logColumn is the position of a column among logColumns.
func logColumn(name string) int {
	return slices.IndexFunc(logColumns, func(f *Field) bool { return f.Column == name })
}

// tallyOf is what a log about to be written (its logArgs) counts in.
func tallyOf(args []any) logTally {
	key := func(col string) int64 { id, _ := args[logColumn(col)].(int64); return id }
	text := func(col string) string { s, _ := args[logColumn(col)].(string); return s }
	ok, _ := args[logColumn("success")].(bool)
	return logTally{device: key("device_id"), user: key("user_id"), command: key("command_id"), username: text("username"),
		commandName: text("command_name"), deviceName: text("device_name"), outcome: outcomeOf(ok, text("failure")),
		created: text("created"), errorMessage: text("error_message")}
}

// zeroOf is the value a log's column takes when the execution gave none.
func zeroOf(k Kind) any {
	switch k {
	case KindString:
		return ""
	case KindInt:
		return 0
	case KindFloat:
		return 0.0
	case KindBool:
		return false
	}
	return nil
}

// CreateLog records one execution, field name → value as in a write (a reference by id,
// JSON as any value that marshals), and returns the log's id once it is committed. Logs
// of concurrent executions are committed together (see logQueue).
func (db *DB) CreateLog(ctx context.Context, v Values) (int64, error) {
	args, stampAt, err := db.logArgs(v)
	if err != nil {
		return 0, err
	}
	var id int64
	if tx := db.batchTx(ctx); tx != nil {
		id, err = db.writeLog(ctx, tx, args)
	} else {
		id, err = db.insertLog(ctx, args, stampAt)
	}
	if err != nil {
		return 0, fmt.Errorf("store: create log: %w", constraintErr(err, "command log"))
	}
	return id, nil
}

// writeLog inserts one log and counts it, in tx.
func (db *DB) writeLog(ctx context.Context, tx *sql.Tx, args []any) (int64, error) {
	var id int64
	if err := db.txQueryRow(ctx, tx, insertLogSQL+` RETURNING id`, args...).Scan(&id); err != nil {
		return 0, err
	}
	c := newCounterRows()
	c.add(tallyOf(args), 1)
	return id, c.write(ctx, db, tx)
}

// InsertLogs records many executions in one transaction with one prepared statement:
// the bulk path for the demo seed, tests and benchmarks.
func (db *DB) InsertLogs(ctx context.Context, logs []Values) error {
	_, err := db.InsertLogSeq(ctx, slices.Values(logs))
	return err
}

// InsertLogSeq is InsertLogs for logs made on the fly, so that a million of them never
// sit in memory at once. It returns how many it inserted.
func (db *DB) InsertLogSeq(ctx context.Context, logs iter.Seq[Values]) (int, error) {
	return db.BulkLogs(ctx, func(tx *sql.Tx) (int, error) { return db.insertLogRows(ctx, tx, logs) })
}

// BulkLogs runs insert, which adds logs inside the transaction and says how many, and
// counts the logs it added at the end, rather than one by one.
func (db *DB) BulkLogs(ctx context.Context, insert func(tx *sql.Tx) (int, error)) (int, error) {
	n := 0
	err := db.Write(ctx, func(tx *sql.Tx) error {
		var lastID int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM command_logs`).Scan(&lastID); err != nil {
			return fmt.Errorf("store: insert logs: %w", err)
		}
		var err error
		if n, err = insert(tx); err != nil {
			return err
		}
		if err := db.countLogsAfter(ctx, tx, lastID); err != nil {
			return fmt.Errorf("store: insert logs: counters: %w", err)
		}
		return nil
	})
	return n, err
}

func (db *DB) insertLogRows(ctx context.Context, tx *sql.Tx, logs iter.Seq[Values]) (int, error) {
	stmt, err := tx.PrepareContext(ctx, insertLogSQL)
	if err != nil {
		return 0, fmt.Errorf("store: insert logs: %w", err)
	}
	defer stmt.Close()
	n := 0
	for v := range logs {
		args, _, err := db.logArgs(v)
		if err != nil {
			return n, err
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return n, fmt.Errorf("store: insert logs: %w", constraintErr(err, "command log"))
		}
		n++
	}
	return n, nil
}

// pruneBatch bounds how many logs one retention transaction deletes, so the writer is
// never held for long. Tests lower it.
var pruneBatch = 5000

// PruneLogs deletes the logs created before olderThan, in batches, and returns how many
// it deleted. Each batch takes its logs off the counters in its transaction.
func (db *DB) PruneLogs(ctx context.Context, olderThan time.Time) (int64, error) {
	var total int64
	for {
		n, err := db.pruneLogBatch(ctx, olderThan)
		total += n
		if err != nil {
			return total, fmt.Errorf("store: prune logs: %w", err)
		}
		if n < int64(pruneBatch) {
			return total, nil
		}
	}
}

// pruneLogBatch deletes the oldest pruneBatch logs created before olderThan in one
// transaction, and takes them off the counters.
func (db *DB) pruneLogBatch(ctx context.Context, olderThan time.Time) (int64, error) {
	var n int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		floor, err := unsentLogFloor(ctx, tx) // a log the hub has not stored stays
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT t.id, `+tallyColumns+` FROM command_logs t
			WHERE t.created < ? AND t.id < ? ORDER BY t.created LIMIT ?`, Stamp(olderThan), floor, pruneBatch)
		if err != nil {
			return err
		}
		c := newCounterRows()
		var ids []any
		for rows.Next() {
			var id int64
			var t logTally
			var ok bool
			var failure sql.NullString
			if err := rows.Scan(&id, &t.device, &t.user, &t.command, &t.username, &t.commandName, &t.deviceName, &ok,
				&failure, &t.created, &t.errorMessage); err != nil {
				rows.Close()
				return err
			}
			t.outcome = outcomeOf(ok, failure.String)
			c.add(t, -1)
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE id IN (`+placeholders(len(ids))+`)`, ids...)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return c.write(ctx, db, tx)
	})
	return n, err
}

// RecentSuccesses returns, per device, the times of successful executions since a time:
// what the rate limiter needs at start-up so that a restart does not reset it.
func (db *DB) RecentSuccesses(ctx context.Context, since time.Time) (map[int64][]time.Time, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT device_id, created FROM command_logs
		WHERE success = 1 AND created >= ? AND device_id IS NOT NULL ORDER BY created`, Stamp(since))
	if err != nil {
		return nil, fmt.Errorf("store: recent successes: %w", err)
	}
	defer rows.Close()
	out := map[int64][]time.Time{}
	for rows.Next() {
		var id int64
		var created string
		if err := rows.Scan(&id, &created); err != nil {
			return nil, err
		}
		out[id] = append(out[id], ParseStamp(created))
	}
	return out, rows.Err()
}
