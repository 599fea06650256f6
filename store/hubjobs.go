package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Commands flowing down (migration 0112): a hub's jobs for its sites, and an edge's
// record of the jobs it took. The SQL is the same for SQLite and PostgreSQL.

// KindJob is the outbox record of a job's answer.
const KindJob = "job"

// JobLease is how long a job sent to a site stays its own: longer than the longest
// execution, after which the hub sends it again (the site never runs it twice).
const JobLease = 6 * time.Minute

// HubJob is one execution a hub asked of a site.
type HubJob struct {
	ID, Site                    int64
	CommandID, DeviceID         int64 // the hub's
	EdgeCommandID, EdgeDeviceID int64 // the site's
	Variables                   json.RawMessage
	Timeout                     int // seconds
	UserID                      int64
	Username                    string
	Notes                       string // why it runs, as the requester wrote it, for the site's log
	State                       string // queued, sent, done, expired
	Status                      int    // the site's answer's HTTP status, once done
	Answer                      json.RawMessage
	LogID                       int64 // the hub's log of it, once done (0: none)
	Created, Expires, Finished  time.Time
}

const hubJobColumns = `id, hub_site_id, command_id, device_id, edge_command_id, edge_device_id, variables, timeout, user_id,
	username, notes, state, coalesce(status, 0), coalesce(answer, ''), coalesce(log_id, 0), created, expires, coalesce(finished, '')`

func scanHubJob(s interface{ Scan(...any) error }) (HubJob, error) {
	var j HubJob
	var vars, answer, created, expires, finished string
	err := s.Scan(&j.ID, &j.Site, &j.CommandID, &j.DeviceID, &j.EdgeCommandID, &j.EdgeDeviceID, &vars, &j.Timeout, &j.UserID,
		&j.Username, &j.Notes, &j.State, &j.Status, &answer, &j.LogID, &created, &expires, &finished)
	j.Variables, j.Created, j.Expires, j.Finished = json.RawMessage(vars), ParseStamp(created), ParseStamp(expires), ParseStamp(finished)
	if answer != "" {
		j.Answer = json.RawMessage(answer)
	}
	return j, err
}

// QueueHubJob queues a job for its site and returns its id.
func (db *DB) QueueHubJob(ctx context.Context, j HubJob) (int64, error) {
	vars := string(j.Variables)
	if vars == "" {
		vars = "{}"
	}
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO hub_jobs (hub_site_id, command_id, device_id, edge_command_id, edge_device_id,
			variables, timeout, user_id, username, notes, created, expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			j.Site, j.CommandID, j.DeviceID, j.EdgeCommandID, j.EdgeDeviceID, vars, j.Timeout, j.UserID, j.Username, j.Notes,
			Stamp(db.now()), Stamp(j.Expires)).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("store: queue a hub job: %w", err)
	}
	return id, nil
}

// HubJob reads a job, expiring it first when it is due; ErrNotFound when none has id.
func (db *DB) HubJob(ctx context.Context, id int64) (HubJob, error) {
	now := Stamp(db.now())
	if _, err := db.execer(ctx).ExecContext(ctx, `UPDATE hub_jobs SET state = 'expired', finished = ? WHERE id = ? AND expires <= ?
		AND (state = 'queued' OR (state = 'sent' AND lease_until < ?))`, now, id, now, now); err != nil {
		return HubJob{}, fmt.Errorf("store: hub job %d: %w", id, err)
	}
	j, err := scanHubJob(db.reader(ctx).QueryRowContext(ctx, `SELECT `+hubJobColumns+` FROM hub_jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("hub job %d: %w", id, ErrNotFound)
	}
	return j, err
}

// HubJobsDue reports whether a site has a job ClaimHubJobs would take or expire (one
// queued, or sent with its lease ended): a read, so that a site's waiting poll, looking
// every jobLook, writes nothing until there is something to take.
func (db *DB) HubJobsDue(ctx context.Context, site int64) (bool, error) {
	var n int
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM hub_jobs WHERE hub_site_id = ?
		AND (state = 'queued' OR (state = 'sent' AND lease_until < ?)) LIMIT 1) AS due`, site, Stamp(db.now())).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: hub jobs due: %w", err)
	}
	return n > 0, nil
}

// ClaimHubJobs takes up to n of a site's jobs for its poll, each its own until now +
// JobLease: those queued, and those sent whose lease ended unanswered; it expires the
// ones due first. Two hub processes never take one job at once: the state test is on
// the updated row itself, which PostgreSQL checks again once the other's update commits.
func (db *DB) ClaimHubJobs(ctx context.Context, site int64, n int) ([]HubJob, error) {
	now := db.now()
	at, lease := Stamp(now), Stamp(now.Add(JobLease))
	var jobs []HubJob
	err := db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE hub_jobs SET state = 'expired', finished = ? WHERE hub_site_id = ? AND expires <= ?
			AND (state = 'queued' OR (state = 'sent' AND lease_until < ?))`, at, site, at, at); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `UPDATE hub_jobs SET state = 'sent', lease_until = ?
			WHERE (state = 'queued' OR (state = 'sent' AND lease_until < ?)) AND id IN (
				SELECT id FROM hub_jobs WHERE hub_site_id = ? AND (state = 'queued' OR (state = 'sent' AND lease_until < ?))
				ORDER BY id LIMIT ?)
			RETURNING `+hubJobColumns, lease, at, site, at, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanHubJob(rows)
			if err != nil {
				return err
			}
			jobs = append(jobs, j)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim hub jobs: %w", err)
	}
	return jobs, nil
}

// FinishHubJob records a site's answer to its job (inside a push's Batch); false when
// the site has no such job, or it was answered before.
func (db *DB) FinishHubJob(ctx context.Context, site, id int64, status int, answer json.RawMessage, logID int64) (bool, error) {
	var log any
	if logID != 0 {
		log = logID
	}
	res, err := db.execer(ctx).ExecContext(ctx, `UPDATE hub_jobs SET state = 'done', status = ?, answer = ?, log_id = ?, finished = ?
		WHERE id = ? AND hub_site_id = ? AND state <> 'done'`, status, string(answer), log, Stamp(db.now()), id, site)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// EdgeJob is a job an edge took from its hub.
type EdgeJob struct {
	ID, HubJob int64
	Status     int // 0 while it runs
	Answer     json.RawMessage
	LogID      int64
}

// TakeEdgeJob notes that the hub's job is taken, and returns it; a job taken before (the
// hub sent it again) comes back as it is, so that it never runs twice.
func (db *DB) TakeEdgeJob(ctx context.Context, hubJob int64) (EdgeJob, bool, error) {
	j := EdgeJob{HubJob: hubJob}
	taken := false
	err := db.Write(ctx, func(tx *sql.Tx) error {
		var answer string
		err := tx.QueryRowContext(ctx, `SELECT id, status, answer, coalesce(log_id, 0) FROM hub_edge_jobs WHERE hub_job = ?`, hubJob).
			Scan(&j.ID, &j.Status, &answer, &j.LogID)
		if err == nil {
			j.Answer = json.RawMessage(answer)
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		taken = true
		return tx.QueryRowContext(ctx, `INSERT INTO hub_edge_jobs (hub_job, created) VALUES (?, ?) RETURNING id`,
			hubJob, Stamp(db.now())).Scan(&j.ID)
	})
	if err != nil {
		return j, false, fmt.Errorf("store: take hub job %d: %w", hubJob, err)
	}
	return j, taken, nil
}

// FinishEdgeJob records a job's answer; its record goes to the hub with the outbox.
func (db *DB) FinishEdgeJob(ctx context.Context, id int64, status int, answer json.RawMessage, logID int64) error {
	var log any
	if logID != 0 {
		log = logID
	}
	_, err := db.w.ExecContext(ctx, `UPDATE hub_edge_jobs SET status = ?, answer = ?, log_id = ? WHERE id = ? AND status = 0`,
		status, string(answer), log, id)
	if err != nil {
		return fmt.Errorf("store: finish hub job: %w", err)
	}
	return nil
}

// EdgeJobs reads the answered jobs among ids.
func (db *DB) EdgeJobs(ctx context.Context, ids []int64) (map[int64]EdgeJob, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, hub_job, status, answer, coalesce(log_id, 0) FROM hub_edge_jobs
		WHERE status <> 0 AND id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: hub jobs: %w", err)
	}
	defer rows.Close()
	out := map[int64]EdgeJob{}
	for rows.Next() {
		var j EdgeJob
		var answer string
		if err := rows.Scan(&j.ID, &j.HubJob, &j.Status, &answer, &j.LogID); err != nil {
			return nil, fmt.Errorf("store: hub jobs: %w", err)
		}
		j.Answer = json.RawMessage(answer)
		out[j.ID] = j
	}
	return out, rows.Err()
}

// HubObjectOf is the site and the edge's key of a hub object of a kind that a site's
// record made (a command, a device); false for the hub's own.
func (db *DB) HubObjectOf(ctx context.Context, kind string, hubID int64) (site int64, key string, ok bool, err error) {
	err = db.reader(ctx).QueryRowContext(ctx, `SELECT hub_site_id, edge_key FROM hub_objects WHERE kind = ? AND hub_id = ?`,
		kind, hubID).Scan(&site, &key)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", false, nil
	}
	return site, key, err == nil, err
}
