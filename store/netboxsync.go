package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A NetBox sync fetches pages into a staging area, one small transaction a page, and
// applies them to the inventory in one transaction at the end: an interrupted sync
// loses nothing it fetched and the next one resumes from its queue, and the inventory
// changes all at once or not at all.

// SyncRun is one NetBox sync.
type SyncRun struct {
	ID       int64
	Source   string // what it fetches: the NetBox URL and the device filter
	State    string // fetching (also: interrupted, resumable), done or failed
	Phase    string
	Queue    []string // the URLs still to fetch; the first may be a next page
	Pages    int
	Started  time.Time
	Finished time.Time // zero while fetching
	Error    string
	Summary  json.RawMessage // what the run did, as the sync reports it
}

// ErrSyncBusy is returned (wrapped with when that one started) when another process is
// running a sync.
var ErrSyncBusy = errors.New("a NetBox sync is already running")

// StagedObject is one object a run fetched, as NetBox served it.
type StagedObject struct {
	NetBoxID int64
	Body     json.RawMessage
}

const syncRunCols = `id, source, state, phase, queue, pages, started, finished, error, summary`

func scanSyncRun(row interface{ Scan(...any) error }) (SyncRun, error) {
	var r SyncRun
	var queue, started, summary string
	var finished sql.NullString
	err := row.Scan(&r.ID, &r.Source, &r.State, &r.Phase, &queue, &r.Pages, &started, &finished, &r.Error, &summary)
	if err != nil {
		return r, err
	}
	_ = json.Unmarshal([]byte(queue), &r.Queue) // written by this package from a []string
	r.Started, r.Summary = ParseStamp(started), json.RawMessage(summary)
	if finished.Valid {
		r.Finished = ParseStamp(finished.String)
	}
	return r, nil
}

// ClaimSyncRun gives owner the run to work on: the interrupted one of the same source
// started within resumeWithin (resumed true), else a new one. A run another owner
// worked on less than stale ago is ErrSyncBusy; an abandoned run of another source, or
// too old, is closed as failed and its staged objects dropped.
func (db *DB) ClaimSyncRun(ctx context.Context, source, owner string, stale, resumeWithin time.Duration) (SyncRun, bool, error) {
	var run SyncRun
	resumed := false
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := db.now()
		cur, err := scanSyncRun(tx.QueryRowContext(ctx, `SELECT `+syncRunCols+` FROM netbox_sync_runs
			WHERE state = 'fetching' ORDER BY id DESC LIMIT 1`))
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			var who, beat string
			if err := tx.QueryRowContext(ctx, `SELECT owner, heartbeat FROM netbox_sync_runs WHERE id = ?`, cur.ID).Scan(&who, &beat); err != nil {
				return err
			}
			if who != "" && who != owner && ParseStamp(beat).After(now.Add(-stale)) {
				return fmt.Errorf("%w (since %s)", ErrSyncBusy, cur.Started.Format(time.RFC3339))
			}
			if cur.Source == source && cur.Started.After(now.Add(-resumeWithin)) {
				_, err := tx.ExecContext(ctx, `UPDATE netbox_sync_runs SET owner = ?, heartbeat = ?, error = '' WHERE id = ?`, owner, Stamp(now), cur.ID)
				run, resumed = cur, true
				run.Error = ""
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE netbox_sync_runs SET state = 'failed', finished = ?, owner = '',
				error = CASE WHEN error = '' THEN 'abandoned' ELSE error END WHERE id = ?`, Stamp(now), cur.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM netbox_sync_objects WHERE run_id = ?`, cur.ID); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO netbox_sync_runs (source, owner, heartbeat, started) VALUES (?, ?, ?, ?)`,
			source, owner, Stamp(now), Stamp(now))
		if err != nil {
			return err
		}
		id, _ := res.LastInsertId()
		run = SyncRun{ID: id, Source: source, State: "fetching", Started: now}
		return nil
	})
	return run, resumed, err
}

// SaveSyncPage stages one fetched page's objects of a kind and moves the run's queue
// on, in one transaction: the page is either wholly behind the run or still ahead.
func (db *DB) SaveSyncPage(ctx context.Context, runID int64, owner, kind string, objs []StagedObject, queue []string) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		if err := ownRun(ctx, tx, runID, owner); err != nil {
			return err
		}
		for _, o := range objs {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO netbox_sync_objects (run_id, kind, netbox_id, body)
				VALUES (?, ?, ?, ?)`, runID, kind, o.NetBoxID, string(o.Body)); err != nil {
				return err
			}
		}
		q, _ := json.Marshal(queue)
		_, err := tx.ExecContext(ctx, `UPDATE netbox_sync_runs SET queue = ?, pages = pages + 1, heartbeat = ? WHERE id = ?`,
			string(q), Stamp(db.now()), runID)
		return err
	})
}

// SetSyncPhase starts a run's next phase with the URLs it fetches.
func (db *DB) SetSyncPhase(ctx context.Context, runID int64, owner, phase string, queue []string) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		if err := ownRun(ctx, tx, runID, owner); err != nil {
			return err
		}
		q, _ := json.Marshal(queue)
		_, err := tx.ExecContext(ctx, `UPDATE netbox_sync_runs SET phase = ?, queue = ?, heartbeat = ? WHERE id = ?`,
			phase, string(q), Stamp(db.now()), runID)
		return err
	})
}

// ownRun makes sure the run is still owner's (a claim that went stale may have passed
// to another process).
func ownRun(ctx context.Context, tx *sql.Tx, runID int64, owner string) error {
	var who string
	if err := tx.QueryRowContext(ctx, `SELECT owner FROM netbox_sync_runs WHERE id = ?`, runID).Scan(&who); err != nil {
		return err
	}
	if who != owner {
		return fmt.Errorf("%w (taken over by another process)", ErrSyncBusy)
	}
	return nil
}

// StagedObjects returns what a run fetched of a kind, by NetBox id.
func (db *DB) StagedObjects(ctx context.Context, runID int64, kind string) ([]StagedObject, error) {
	rows, err := db.reader(ctx).QueryContext(ctx, `SELECT netbox_id, body FROM netbox_sync_objects
		WHERE run_id = ? AND kind = ? ORDER BY netbox_id`, runID, kind)
	if err != nil {
		return nil, fmt.Errorf("store: staged %s: %w", kind, err)
	}
	defer rows.Close()
	var out []StagedObject
	for rows.Next() {
		var o StagedObject
		var body string
		if err := rows.Scan(&o.NetBoxID, &body); err != nil {
			return nil, err
		}
		o.Body = json.RawMessage(body)
		out = append(out, o)
	}
	return out, rows.Err()
}

// ReleaseSyncRun ends owner's work on a run: done (its staged objects dropped), failed
// (the same, the error kept), or with state "fetching" interrupted, to be resumed.
func (db *DB) ReleaseSyncRun(ctx context.Context, runID int64, state, errText string, summary json.RawMessage) error {
	if summary == nil {
		summary = json.RawMessage("{}")
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		finished := any(nil)
		if state != "fetching" {
			finished = Stamp(db.now())
			if _, err := tx.ExecContext(ctx, `DELETE FROM netbox_sync_objects WHERE run_id = ?`, runID); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE netbox_sync_runs SET state = ?, error = ?, summary = ?, finished = ?, owner = ''
			WHERE id = ?`, state, errText, string(summary), finished, runID)
		return err
	})
}

// SyncRuns returns the last n runs, the newest first.
func (db *DB) SyncRuns(ctx context.Context, n int) ([]SyncRun, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+syncRunCols+` FROM netbox_sync_runs ORDER BY id DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("store: sync runs: %w", err)
	}
	defer rows.Close()
	var out []SyncRun
	for rows.Next() {
		r, err := scanSyncRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SetNetBoxID records that an object is NetBox's object nbID, last updated there at
// updated.
func (db *DB) SetNetBoxID(ctx context.Context, m *Model, id, nbID int64, updated string) error {
	_, err := db.execer(ctx).ExecContext(ctx, `UPDATE `+m.Table+` SET netbox_id = ?, netbox_updated = ? WHERE id = ?`, nbID, updated, id)
	return constraintErr(err, m.Type)
}

// Unsync makes an object that disappeared from NetBox FieldKit's own (kept because
// something here still uses it); a device becomes offline.
func (db *DB) Unsync(ctx context.Context, m *Model, id int64) error {
	q := `UPDATE ` + m.Table + ` SET netbox_id = NULL, netbox_updated = '' WHERE id = ?`
	if m.Type == TypeDevice {
		q = `UPDATE devices SET netbox_id = NULL, netbox_updated = '', status = 'offline' WHERE id = ?`
	}
	_, err := db.execer(ctx).ExecContext(ctx, q, id)
	return err
}

// inUse is what still needs an object of a type once NetBox no longer has it: a
// device's command logs (its history), the commands and devices of a platform, the
// devices of a site, the commands of a tag.
var inUse = map[string]string{
	TypeDevice:   `SELECT EXISTS (SELECT 1 FROM command_logs WHERE device_id = ?)`,
	TypePlatform: `SELECT EXISTS (SELECT 1 FROM command_platforms WHERE platform_id = ?1) OR EXISTS (SELECT 1 FROM devices WHERE platform_id = ?1)`,
	TypeSite:     `SELECT EXISTS (SELECT 1 FROM devices WHERE site_id = ?)`,
	TypeTag:      `SELECT EXISTS (SELECT 1 FROM command_tags WHERE tag_id = ?)`,
}

// InUse reports whether something FieldKit keeps still uses an object (see inUse);
// objects of other types are never kept.
func (db *DB) InUse(ctx context.Context, objectType string, id int64) (bool, error) {
	q, ok := inUse[objectType]
	if !ok {
		return false, nil
	}
	var used bool
	err := db.reader(ctx).QueryRowContext(ctx, q, id).Scan(&used)
	return used, err
}
