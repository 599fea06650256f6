package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// LogText is what comparing a log with another needs: who and what it ran on, and
// what the device answered.
type LogText struct {
	ID          int64
	DeviceID    *int64
	DeviceName  string
	CommandID   *int64
	CommandName string
	Created     time.Time
	Success     bool
	Output      string
	Parsed      json.RawMessage // parsed_output as stored; nil when none
}

// LogForDiff loads one log for a diff if it is within where (the viewer's scope);
// otherwise ErrNotFound, as for a log that does not exist.
func (db *DB) LogForDiff(ctx context.Context, id int64, where Expr) (LogText, error) {
	var l LogText
	var created string
	var parsed sql.NullString
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT t.id, t.device_id, t.device_name, t.command_id, t.command_name,
		t.created, t.success, t.output, t.parsed_output FROM command_logs t WHERE t.id = ? AND (`+where.SQL+`)`,
		append([]any{id}, where.Args...)...).
		Scan(&l.ID, &l.DeviceID, &l.DeviceName, &l.CommandID, &l.CommandName, &created, &l.Success, &l.Output, &parsed)
	if errors.Is(err, sql.ErrNoRows) {
		return l, fmt.Errorf("store: command log %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return l, fmt.Errorf("store: command log %d: %w", id, err)
	}
	l.Created = ParseStamp(created)
	if parsed.Valid {
		l.Parsed = json.RawMessage(parsed.String)
	}
	return l, nil
}

// sameRun is the condition "the same command on the same device" as a log: by the
// ids while the command and device exist, by their kept names once deleted.
func sameRun(l LogText) Expr {
	var e []Expr
	if l.DeviceID != nil {
		e = append(e, Expr{SQL: `t.device_id = ?`, Args: []any{*l.DeviceID}})
	} else {
		e = append(e, Expr{SQL: `t.device_id IS NULL AND t.device_name = ?`, Args: []any{l.DeviceName}})
	}
	if l.CommandID != nil {
		e = append(e, Expr{SQL: `t.command_id = ?`, Args: []any{*l.CommandID}})
	} else {
		e = append(e, Expr{SQL: `t.command_id IS NULL AND t.command_name = ?`, Args: []any{l.CommandName}})
	}
	return And(e...)
}

// PreviousRun is the id of the successful run of l's command on l's device just
// before l (by created, then id) within where; ErrNotFound when there is none.
func (db *DB) PreviousRun(ctx context.Context, l LogText, where Expr) (int64, error) {
	cond := And(sameRun(l), where, Expr{SQL: `t.success = 1 AND (t.created < ? OR (t.created = ? AND t.id < ?))`,
		Args: []any{Stamp(l.Created), Stamp(l.Created), l.ID}})
	var id int64
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT t.id FROM command_logs t WHERE `+cond.SQL+
		` ORDER BY t.created DESC, t.id DESC LIMIT 1`, cond.Args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("store: previous run of command log %d: %w", l.ID, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("store: previous run of command log %d: %w", l.ID, err)
	}
	return id, nil
}

// Run is one execution in a command's history on a device.
type Run struct {
	ID       int64
	Created  time.Time
	Success  bool
	Username string
	Notes    string // why it ran, as its runner said
	// Cancelled: someone stopped the run (its failure's reason is "cancelled"); it
	// did not fail.
	Cancelled bool
	// Changed: the output differs from the previous successful run's (false for the
	// first); nil for a failed run, whose output is not an answer to compare.
	Changed *bool
}

// CommandHistory lists the newest runs (at most limit) of a command on a device
// within where, newest first, each successful one marked when its output differs
// from the successful run before it. Outputs are compared by digest, read one run
// at a time.
func (db *DB) CommandHistory(ctx context.Context, deviceID, commandID int64, where Expr, limit int) ([]Run, error) {
	cond := And(Expr{SQL: `t.device_id = ? AND t.command_id = ?`, Args: []any{deviceID, commandID}}, where)
	rows, err := db.reader(ctx).QueryContext(ctx, `SELECT t.id, t.created, t.success, t.username, t.notes, t.output,
		coalesce(json_extract(t.failure, '$.reason') = 'cancelled', 0)
		FROM command_logs t WHERE `+cond.SQL+` ORDER BY t.created DESC, t.id DESC LIMIT ?`, append(cond.Args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: command history: %w", err)
	}
	defer rows.Close()
	var runs []Run
	var digests [][32]byte
	for rows.Next() {
		var r Run
		var created, output string
		if err := rows.Scan(&r.ID, &created, &r.Success, &r.Username, &r.Notes, &output, &r.Cancelled); err != nil {
			return nil, fmt.Errorf("store: command history: %w", err)
		}
		r.Created = ParseStamp(created)
		runs, digests = append(runs, r), append(digests, sha256.Sum256([]byte(output)))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: command history: %w", err)
	}
	// Each successful run against the next older successful one; the oldest
	// successful run shown against the one before the page, read apart.
	for i := range runs {
		if !runs[i].Success {
			continue
		}
		var older *[32]byte
		for j := i + 1; j < len(runs) && older == nil; j++ {
			if runs[j].Success {
				older = &digests[j]
			}
		}
		if older == nil {
			d, ok, err := db.runBefore(ctx, cond, runs[i])
			if err != nil {
				return nil, err
			}
			if ok {
				older = &d
			}
		}
		changed := older != nil && *older != digests[i]
		runs[i].Changed = &changed
	}
	return runs, nil
}

// runBefore is the digest of the output of the successful run within cond just
// before r; false when there is none.
func (db *DB) runBefore(ctx context.Context, cond Expr, r Run) ([32]byte, bool, error) {
	c := And(cond, Expr{SQL: `t.success = 1 AND (t.created < ? OR (t.created = ? AND t.id < ?))`,
		Args: []any{Stamp(r.Created), Stamp(r.Created), r.ID}})
	var output string
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT t.output FROM command_logs t WHERE `+c.SQL+
		` ORDER BY t.created DESC, t.id DESC LIMIT 1`, c.Args...).Scan(&output)
	if errors.Is(err, sql.ErrNoRows) {
		return [32]byte{}, false, nil
	}
	if err != nil {
		return [32]byte{}, false, fmt.Errorf("store: command history: %w", err)
	}
	return sha256.Sum256([]byte(output)), true, nil
}
