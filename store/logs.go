package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

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
	res, err := db.w.ExecContext(ctx, insertLogSQL, db.logArgs(in)...)
	if err != nil {
		return 0, fmt.Errorf("store: create log: %w", constraintErr(err, "command log"))
	}
	return res.LastInsertId()
}

// InsertLogs records many executions in one transaction with one prepared statement:
// the bulk path for the demo seed and benchmarks.
func (db *DB) InsertLogs(ctx context.Context, logs []LogInput) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, insertLogSQL)
		if err != nil {
			return fmt.Errorf("store: insert logs: %w", err)
		}
		defer stmt.Close()
		for i := range logs {
			if _, err := stmt.ExecContext(ctx, db.logArgs(logs[i])...); err != nil {
				return fmt.Errorf("store: insert logs: %w", constraintErr(err, "command log"))
			}
		}
		return nil
	})
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
