package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"
)

// The edge's outbox to its hub (migration 0110, docs/HUB-PROTOCOL.md). Triggers note a
// record in the transaction of every change the hub shows, once the outbox is enabled;
// the pusher reads the records from the last one the hub acknowledged, renders each
// object as the API shows it, and acknowledges what the hub answers it stored.

// Record kinds and operations.
const (
	KindLog      = "log"
	KindDevice   = "device"
	KindPlatform = "platform"
	KindCommand  = "command"
	// KindSnapshot is noted after a full copy of the inventory (an enable, a new
	// epoch): its body lists every object of each kind the edge has, so that the hub
	// drops the others.
	KindSnapshot = "snapshot"

	OpUpsert = "upsert"
	OpDelete = "delete"
)

// OutboxState is the outbox's state and backlog.
type OutboxState struct {
	Enabled bool
	// Instance was made with the database; Epoch changes when the database may have
	// been rewound, and the hub's count starts again at EpochStart.
	Instance, Epoch string
	EpochStart      int64
	// Acked is the highest record of the epoch the hub acknowledged; Last the highest
	// record noted.
	Acked, Last int64
	HubURL      string
	// Pending is how many records the hub has not acknowledged; Oldest is when the
	// oldest of them was noted (zero when none).
	Pending int64
	Oldest  time.Time
}

// OutboxRecord is one noted change: an object (Kind, Ref) upserted or deleted.
type OutboxRecord struct {
	Seq     int64
	Kind    string
	Op      string
	Ref     int64
	Created time.Time
}

// newHubID is a random identifier (an instance, an epoch): 32 hex characters.
func newHubID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

// OutboxState reads the outbox's state.
func (db *DB) OutboxState(ctx context.Context) (OutboxState, error) {
	st, err := outboxState(ctx, db.r)
	if err != nil {
		return st, fmt.Errorf("store: hub outbox: %w", err)
	}
	return st, nil
}

func outboxState(ctx context.Context, q querier) (OutboxState, error) {
	var st OutboxState
	var oldest sql.NullString
	err := q.QueryRowContext(ctx, `SELECT e.enabled, e.instance, e.epoch, e.epoch_start, e.acked, e.hub_url,
		coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'hub_outbox'), 0),
		(SELECT count(*) FROM hub_outbox o WHERE o.seq > e.acked),
		(SELECT min(o.created) FROM hub_outbox o WHERE o.seq > e.acked)
		FROM hub_edge e WHERE e.id = 1`).Scan(&st.Enabled, &st.Instance, &st.Epoch, &st.EpochStart, &st.Acked, &st.HubURL,
		&st.Last, &st.Pending, &oldest)
	if oldest.Valid {
		st.Oldest = ParseStamp(oldest.String)
	}
	return st, err
}

// EnableOutbox turns the outbox on for the hub at hubURL. The first enable makes the
// instance and the epoch. An outbox that was off, or that sent to another hub, starts
// a new epoch with a full copy of the inventory (snapshot): the changes made while it
// was off were never noted, and another hub knows nothing of this one's records.
func (db *DB) EnableOutbox(ctx context.Context, hubURL string) (OutboxState, error) {
	var st OutboxState
	err := db.Write(ctx, func(tx *sql.Tx) error {
		cur, err := outboxState(ctx, tx)
		if err != nil {
			return err
		}
		if cur.Enabled && cur.HubURL == hubURL && cur.Epoch != "" {
			st = cur
			return nil
		}
		if cur.Instance == "" {
			if _, err := tx.ExecContext(ctx, `UPDATE hub_edge SET instance = ? WHERE id = 1`, newHubID()); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE hub_edge SET enabled = 1, hub_url = ? WHERE id = 1`, hubURL); err != nil {
			return err
		}
		if err := newEpoch(ctx, tx, db.now()); err != nil {
			return err
		}
		st, err = outboxState(ctx, tx)
		return err
	})
	if err != nil {
		return st, fmt.Errorf("store: enable the hub outbox: %w", err)
	}
	return st, nil
}

// DisableOutbox turns the outbox off: changes are no longer noted, and log retention
// no longer waits for the records left unsent, which stay for a later enable. It
// returns how many there are.
func (db *DB) DisableOutbox(ctx context.Context) (int64, error) {
	var pending int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		st, err := outboxState(ctx, tx)
		if err != nil || !st.Enabled {
			return err
		}
		pending = st.Pending
		_, err = tx.ExecContext(ctx, `UPDATE hub_edge SET enabled = 0 WHERE id = 1`)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: disable the hub outbox: %w", err)
	}
	return pending, nil
}

// RotateEpoch starts a new epoch: the records not acknowledged yet are sent again in
// it, numbered as they are, after a full copy of the inventory. The pusher calls it
// when the hub's count and this database's disagree in a way only a rewound database
// explains (a copy restored by other means than fieldkit backup).
func (db *DB) RotateEpoch(ctx context.Context) (OutboxState, error) {
	var st OutboxState
	err := db.Write(ctx, func(tx *sql.Tx) error {
		if err := newEpoch(ctx, tx, db.now()); err != nil {
			return err
		}
		var err error
		st, err = outboxState(ctx, tx)
		return err
	})
	if err != nil {
		return st, fmt.Errorf("store: new hub epoch: %w", err)
	}
	return st, nil
}

// newEpoch gives the outbox a new epoch starting at its oldest unacknowledged record
// (or the next one), and notes a snapshot after them.
func newEpoch(ctx context.Context, tx *sql.Tx, now time.Time) error {
	var start int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT min(o.seq) FROM hub_outbox o, hub_edge e WHERE e.id = 1 AND o.seq > e.acked),
		(SELECT seq FROM sqlite_sequence WHERE name = 'hub_outbox') + 1, 1)`).Scan(&start)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE hub_edge SET epoch = ?, epoch_start = ?, acked = ?, copied = 0 WHERE id = 1`,
		newHubID(), start, start-1); err != nil {
		return err
	}
	return noteSnapshot(ctx, tx, now)
}

// noteSnapshot notes an upsert of every platform, device and command (in the order a
// hub needs them), then the snapshot record.
func noteSnapshot(ctx context.Context, tx *sql.Tx, now time.Time) error {
	for _, k := range []struct{ kind, table string }{
		{KindPlatform, "platforms"}, {KindDevice, "devices"}, {KindCommand, "commands"},
	} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO hub_outbox (kind, op, ref, created)
			SELECT ?, ?, id, last_updated FROM `+k.table+` ORDER BY id`, k.kind, OpUpsert); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO hub_outbox (kind, op, ref, created) VALUES (?, ?, 0, ?)`,
		KindSnapshot, OpUpsert, Stamp(now))
	return err
}

// OutboxRecords reads up to limit records from seq from on.
func (db *DB) OutboxRecords(ctx context.Context, from int64, limit int) ([]OutboxRecord, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT seq, kind, op, ref, created FROM hub_outbox WHERE seq >= ? ORDER BY seq LIMIT ?`,
		from, limit)
	if err != nil {
		return nil, fmt.Errorf("store: hub outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxRecord
	for rows.Next() {
		var r OutboxRecord
		var created string
		if err := rows.Scan(&r.Seq, &r.Kind, &r.Op, &r.Ref, &created); err != nil {
			return nil, fmt.Errorf("store: hub outbox: %w", err)
		}
		r.Created = ParseStamp(created)
		out = append(out, r)
	}
	return out, rows.Err()
}

// AckOutbox records that the hub stored the records of epoch up to seq upTo. An answer
// for another epoch (one that ended while the request was out) changes nothing.
func (db *DB) AckOutbox(ctx context.Context, epoch string, upTo int64) error {
	_, err := db.w.ExecContext(ctx, `UPDATE hub_edge SET acked = max(acked, ?) WHERE id = 1 AND epoch = ?`, upTo, epoch)
	if err != nil {
		return fmt.Errorf("store: hub outbox: %w", err)
	}
	return nil
}

// ResendFrom makes the records from seq from on unacknowledged again, for a hub that
// expects them (it lost them: restored from a backup). It fails when the outbox no
// longer holds them all: the pusher then starts a new epoch.
func (db *DB) ResendFrom(ctx context.Context, epoch string, from int64) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		var ok bool
		err := tx.QueryRowContext(ctx, `SELECT e.epoch = ? AND ? >= e.epoch_start AND ? <= e.acked + 1
			AND (? > e.acked OR EXISTS (SELECT 1 FROM hub_outbox WHERE seq = ?))
			FROM hub_edge e WHERE e.id = 1`, epoch, from, from, from, from).Scan(&ok)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("store: hub outbox: record %d of epoch %s: %w", from, epoch, ErrNotFound)
		}
		_, err = tx.ExecContext(ctx, `UPDATE hub_edge SET acked = ? WHERE id = 1`, from-1)
		return err
	})
}

// PruneOutbox deletes the acknowledged records noted before before, kept until then for
// a hub restored from a backup to get them again. What stays is every record from
// some seq on, never one with a hole below it.
func (db *DB) PruneOutbox(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.w.ExecContext(ctx, `DELETE FROM hub_outbox WHERE seq <= (SELECT max(o.seq) FROM hub_outbox o, hub_edge e
		WHERE e.id = 1 AND o.seq <= e.acked AND o.created < ?)`, Stamp(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune the hub outbox: %w", err)
	}
	return res.RowsAffected()
}

// SnapshotIDs are the ids of every object of the kinds a snapshot lists.
func (db *DB) SnapshotIDs(ctx context.Context) (map[string][]int64, error) {
	out := map[string][]int64{}
	for kind, table := range map[string]string{KindPlatform: "platforms", KindDevice: "devices", KindCommand: "commands"} {
		ids, err := scalars[int64](ctx, db.r, `SELECT id FROM `+table+` ORDER BY id`)
		if err != nil {
			return nil, fmt.Errorf("store: hub snapshot: %w", err)
		}
		if ids == nil {
			ids = []int64{}
		}
		out[kind] = ids
	}
	return out, nil
}

// unsentLogFloor is the lowest id of a log whose record the hub has not acknowledged
// (math.MaxInt64 when none, or when the outbox is off): log retention stops below it.
func unsentLogFloor(ctx context.Context, q querier) (int64, error) {
	var floor sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT min(o.ref) FROM hub_outbox o, hub_edge e
		WHERE e.id = 1 AND e.enabled AND o.seq > e.acked AND o.kind = 'log'`).Scan(&floor)
	if noSuchTable(err) {
		return math.MaxInt64, nil // migrated only part of the way (tests of older migrations)
	}
	if err != nil || !floor.Valid {
		return math.MaxInt64, err
	}
	return floor.Int64, nil
}

// noSuchTable reports whether err is SQLite's missing table: a database migrated only
// part of the way, as tests of older migrations open it.
func noSuchTable(err error) bool { return err != nil && strings.Contains(err.Error(), "no such table") }

// rotateIfCopied starts a new epoch in a database that fieldkit backup wrote (see
// markCopied), at its first opening: the original may have sent the hub records past
// the copy's, so the copy's count must not be taken for theirs.
func (db *DB) rotateIfCopied(ctx context.Context) error {
	var copied bool
	err := db.w.QueryRowContext(ctx, `SELECT copied FROM hub_edge WHERE id = 1`).Scan(&copied)
	if noSuchTable(err) {
		return nil
	}
	if err != nil || !copied {
		return err
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		var enabled, copied bool
		if err := tx.QueryRowContext(ctx, `SELECT enabled, copied FROM hub_edge WHERE id = 1`).Scan(&enabled, &copied); err != nil || !copied {
			return err
		}
		if !enabled {
			_, err := tx.ExecContext(ctx, `UPDATE hub_edge SET copied = 0 WHERE id = 1`)
			return err
		}
		return newEpoch(ctx, tx, db.now())
	})
}

// MarkCopied marks the database file at path as a copy of another (a backup), so that
// whoever opens it next starts a new hub epoch. Backup does it to every copy it
// writes; a restore that puts back a file Backup did not write calls it first.
func MarkCopied(ctx context.Context, path string) error {
	c, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("store: mark %s as a copy: %w", path, err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `UPDATE hub_edge SET copied = 1 WHERE id = 1`); err != nil {
		if noSuchTable(err) {
			return nil // a database from before the hub: it has nothing to rotate
		}
		return fmt.Errorf("store: mark %s as a copy: %w", path, err)
	}
	return nil
}

// LogStamps are the created stamps of the logs that exist among ids, as stored: a
// log's uid at the hub derives from it.
func (db *DB) LogStamps(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	rows, err := db.r.QueryContext(ctx, `SELECT id, created FROM command_logs WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: log stamps: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var created string
		if err := rows.Scan(&id, &created); err != nil {
			return nil, fmt.Errorf("store: log stamps: %w", err)
		}
		out[id] = created
	}
	return out, rows.Err()
}
