package store

import (
	"context"
	"database/sql"
	"fmt"
	"iter"
	"slices"
	"time"
)

// CommandLogs is netbox_toolkit_plugin.commandlog: the read-only audit log of
// executions. A log keeps the command's and device's names, so it outlives them.
var CommandLogs = declare(&Model{
	Type: TypeCommandLog, Name: "CommandLog", Table: "command_logs", DefaultOrder: "-created",
	Display: func(r Row) string { return fmt.Sprintf("%s on %s", r["command_name"], r["device_name"]) },
	Fields: []Field{
		{Name: "command", Column: "command_id", Kind: KindInt, Rel: TypeCommand, Access: ReadOnly, Schema: "NestedLogCommand",
			Doc: "id (null once the command is deleted), url (absent then), name, display"},
		{Name: "device", Column: "device_id", Kind: KindInt, Rel: TypeDevice, Access: ReadOnly, Schema: "NestedLogDevice",
			Doc: "id (null once the device is deleted), url (absent then), name, display"},
		{Name: "command_type", Column: "command_type", Kind: KindString, Access: ReadOnly, Choices: CommandTypes},
		{Name: "output", Column: "output", Kind: KindString, Access: ReadOnly},
		{Name: "username", Column: "username", Kind: KindString, Access: ReadOnly, Filter: FilterLookups, Sort: true,
			Search: true, Doc: "user who executed the command"},
		{Name: "user", Column: "user_id", Kind: KindInt, Rel: TypeUser, Access: ReadOnly, Null: true},
		{Name: "execution_time", Column: "execution_time", Kind: KindTime, Access: ReadOnly},
		{Name: "success", Column: "success", Kind: KindBool, Access: ReadOnly, Filter: FilterExact, Sort: true, Doc: "outcome (true/false)"},
		{Name: "error_message", Column: "error_message", Kind: KindString, Access: ReadOnly, Doc: "empty when successful"},
		{Name: "execution_duration", Column: "execution_duration", Kind: KindFloat, Access: ReadOnly, Sort: true, Doc: "seconds"},
		{Name: "parsed_output", Column: "parsed_output", Kind: KindJSON, Access: ReadOnly, Null: true, Schema: "ParsedOutput"},
		{Name: "syntax_error", Column: "syntax_error", Kind: KindJSON, Access: ReadOnly, Null: true, Schema: "SyntaxError"},
		{Name: "command_name", Column: "command_name", Kind: KindString, Access: Internal, Search: true},
		{Name: "device_name", Column: "device_name", Kind: KindString, Access: Internal, Search: true},
	},
	Filters: map[string]Filter{
		"device_id":  {Path: "device", Doc: "device id"},
		"command_id": {Path: "command", Doc: "command id"},
		"user_id":    {Path: "user", Doc: "id of the user who executed"},
		"created":    {Path: "created", Lookups: true, Doc: "creation time; created__gte and created__lte bound a range"},
	},
})

// CommandLog is one execution record. CommandID and DeviceID are 0 once the command or
// device was deleted; the names stay.
type CommandLog struct {
	ID                        int64
	CommandID                 int64
	CommandName, CommandType  string
	DeviceID                  int64
	DeviceName                string
	UserID                    int64
	Username                  string
	Output                    string
	ParsedOutput, SyntaxError string // JSON text, "" when none
	Success                   bool
	ErrorMessage              string
	ExecutionDuration         float64 // seconds
	ExecutionTime             time.Time
	Created, LastUpdated      time.Time
}

// LogInput is what an execution records. Ids of 0 are stored as NULL; a zero
// ExecutionTime or Created means the store's clock.
type LogInput struct {
	CommandID                 int64
	CommandName, CommandType  string
	DeviceID                  int64
	DeviceName                string
	UserID                    int64
	Username                  string
	Output                    string
	ParsedOutput, SyntaxError string
	Success                   bool
	ErrorMessage              string
	ExecutionDuration         float64
	ExecutionTime, Created    time.Time
}

const insertLogSQL = `INSERT INTO command_logs (command_id, command_name, command_type, device_id, device_name,
	user_id, username, output, parsed_output, syntax_error, success, error_message, execution_duration,
	execution_time, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (db *DB) logArgs(in LogInput) []any {
	now := db.now()
	created := in.Created
	if created.IsZero() {
		created = now
	}
	execTime := in.ExecutionTime
	if execTime.IsZero() {
		execTime = created
	}
	typ := in.CommandType
	if typ == "" {
		typ = CommandShow
	}
	c := Stamp(created)
	return []any{nullID(in.CommandID), in.CommandName, typ, nullID(in.DeviceID), in.DeviceName,
		nullID(in.UserID), in.Username, in.Output, nullStr(in.ParsedOutput), nullStr(in.SyntaxError),
		in.Success, in.ErrorMessage, in.ExecutionDuration, Stamp(execTime), c, c}
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CreateLog records one execution and returns the log's id.
func (db *DB) CreateLog(ctx context.Context, in LogInput) (int64, error) {
	res, err := db.execer(ctx).ExecContext(ctx, insertLogSQL, db.logArgs(in)...)
	if err != nil {
		return 0, fmt.Errorf("store: create log: %w", constraintErr(err, "command log"))
	}
	return res.LastInsertId()
}

// InsertLogs records many executions in one transaction with one prepared statement:
// the bulk path for the demo seed and benchmarks.
func (db *DB) InsertLogs(ctx context.Context, logs []LogInput) error {
	_, err := db.InsertLogSeq(ctx, slices.Values(logs))
	return err
}

// InsertLogSeq is InsertLogs for logs made on the fly, so that a million of them never
// sit in memory at once. It returns how many it inserted.
//
// The per-row insert trigger that keeps the statistics counters costs more than the
// insert itself, so inside the transaction it is dropped, the rows go in, the counters
// are brought up to date with three aggregate statements over the new rows, and the
// trigger is created again from its own stored text. DDL is transactional in SQLite:
// other connections never see the table without its trigger.
func (db *DB) InsertLogSeq(ctx context.Context, logs iter.Seq[LogInput]) (int, error) {
	n := 0
	err := db.Write(ctx, func(tx *sql.Tx) error {
		var trigger string
		var lastID int64
		if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'command_logs_ai'`).
			Scan(&trigger); err != nil {
			return fmt.Errorf("store: insert logs: read trigger: %w", err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM command_logs`).Scan(&lastID); err != nil {
			return fmt.Errorf("store: insert logs: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER command_logs_ai`); err != nil {
			return fmt.Errorf("store: insert logs: %w", err)
		}
		var err error
		if n, err = db.insertLogRows(ctx, tx, logs); err != nil {
			return err
		}
		if err := addLogCounters(ctx, tx, lastID); err != nil {
			return fmt.Errorf("store: insert logs: counters: %w", err)
		}
		if _, err := tx.ExecContext(ctx, trigger); err != nil {
			return fmt.Errorf("store: insert logs: restore trigger: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

func (db *DB) insertLogRows(ctx context.Context, tx *sql.Tx, logs iter.Seq[LogInput]) (int, error) {
	stmt, err := tx.PrepareContext(ctx, insertLogSQL)
	if err != nil {
		return 0, fmt.Errorf("store: insert logs: %w", err)
	}
	defer stmt.Close()
	n := 0
	for in := range logs {
		if _, err := stmt.ExecContext(ctx, db.logArgs(in)...); err != nil {
			return n, fmt.Errorf("store: insert logs: %w", constraintErr(err, "command log"))
		}
		n++
	}
	return n, nil
}

// addLogCounters does for every log after lastID what the insert trigger does for one
// (rowids only grow inside the one write transaction).
func addLogCounters(ctx context.Context, tx *sql.Tx, lastID int64) error {
	for _, q := range []string{
		`UPDATE command_log_totals SET
			total = total + (SELECT count(*) FROM command_logs WHERE id > ?1),
			successful = successful + (SELECT coalesce(sum(success), 0) FROM command_logs WHERE id > ?1)
			WHERE id = 1`,
		`INSERT INTO command_log_counts (command_name, total)
			SELECT command_name, count(*) FROM command_logs WHERE id > ?1 GROUP BY command_name
			ON CONFLICT (command_name) DO UPDATE SET total = total + excluded.total`,
		`INSERT INTO command_log_errors (error, total)
			SELECT substr(error_message, 1, 100), count(*) FROM command_logs WHERE id > ?1 AND success = 0
			GROUP BY substr(error_message, 1, 100)
			ON CONFLICT (error) DO UPDATE SET total = total + excluded.total`,
	} {
		if _, err := tx.ExecContext(ctx, q, lastID); err != nil {
			return err
		}
	}
	return nil
}

// Logs loads command logs by id.
func (db *DB) Logs(ctx context.Context, ids []int64) ([]CommandLog, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, command_id, command_name, command_type, device_id, device_name,
		user_id, username, output, parsed_output, syntax_error, success, error_message, execution_duration,
		execution_time, created, last_updated FROM command_logs WHERE id IN (`+placeholders(len(ids))+`)`,
		int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: logs: %w", err)
	}
	defer rows.Close()
	var out []CommandLog
	for rows.Next() {
		var l CommandLog
		var cid, did, uid sql.NullInt64
		var parsed, syn sql.NullString
		var et, cr, up string
		if err := rows.Scan(&l.ID, &cid, &l.CommandName, &l.CommandType, &did, &l.DeviceName, &uid, &l.Username,
			&l.Output, &parsed, &syn, &l.Success, &l.ErrorMessage, &l.ExecutionDuration, &et, &cr, &up); err != nil {
			return nil, fmt.Errorf("store: logs: %w", err)
		}
		l.CommandID, l.DeviceID, l.UserID = cid.Int64, did.Int64, uid.Int64
		l.ParsedOutput, l.SyntaxError = parsed.String, syn.String
		l.ExecutionTime, l.Created, l.LastUpdated = ParseStamp(et), ParseStamp(cr), ParseStamp(up)
		out = append(out, l)
	}
	return out, rows.Err()
}
