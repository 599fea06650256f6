package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A hub's side of a push (package hub drives it): every call here is made inside the
// one Batch that stores a batch of records, and reads and writes through it. The SQL
// is the same for SQLite and PostgreSQL.

// LockHubSite reads a site's state for a push and holds its row until the push
// commits: the UPDATE takes PostgreSQL's row lock, so that two hub processes never
// apply one site's batches at once (SQLite's one writer serialises them anyway).
func (db *DB) LockHubSite(ctx context.Context, id int64, now time.Time) (HubSite, error) {
	s, err := scanHubSite(db.reader(ctx).QueryRowContext(ctx, `UPDATE hub_sites SET last_seen = ? WHERE id = ?
		RETURNING `+hubSiteColumns, Stamp(now), id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("hub site %d: %w", id, ErrNotFound)
	}
	return s, err
}

// BindHubSite binds a site's token to the database that first pushed with it.
func (db *DB) BindHubSite(ctx context.Context, id int64, instance string) error {
	_, err := db.execer(ctx).ExecContext(ctx, `UPDATE hub_sites SET instance = ? WHERE id = ? AND instance = ''`, instance, id)
	return err
}

// HubEpochSeen reports whether a site pushed in epoch before.
func (db *DB) HubEpochSeen(ctx context.Context, id int64, epoch string) (bool, error) {
	var n int
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT count(*) FROM hub_site_epochs WHERE hub_site_id = ? AND epoch = ?`,
		id, epoch).Scan(&n)
	return n > 0, err
}

// StartHubEpoch makes epoch the site's own, its records expected from first on.
func (db *DB) StartHubEpoch(ctx context.Context, id int64, epoch string, first int64, now time.Time) error {
	x := db.execer(ctx)
	if _, err := x.ExecContext(ctx, `INSERT INTO hub_site_epochs (hub_site_id, epoch, first_seq, started) VALUES (?, ?, ?, ?)`,
		id, epoch, first, Stamp(now)); err != nil {
		return err
	}
	_, err := x.ExecContext(ctx, `UPDATE hub_sites SET epoch = ?, next_seq = ? WHERE id = ?`, epoch, first, id)
	return err
}

// HubRecord is a record's row in the hub's ledger.
type HubRecord struct {
	Site    int64
	Epoch   string
	Seq     int64
	Kind    string
	Op      string
	EdgeID  int64
	UID     string
	SkewMS  int64
	HubID   int64 // 0: none
	Problem string
}

// AddHubRecord puts a record in the ledger; false when the ledger already holds its
// (site, epoch, seq): a duplicate, never applied twice.
func (db *DB) AddHubRecord(ctx context.Context, r HubRecord, now time.Time) (bool, error) {
	rows, err := db.reader(ctx).QueryContext(ctx, `INSERT INTO hub_records (hub_site_id, epoch, seq, kind, op, edge_id, uid,
		skew_ms, received) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hub_site_id, epoch, seq) DO NOTHING RETURNING seq`,
		r.Site, r.Epoch, r.Seq, r.Kind, r.Op, r.EdgeID, r.UID, r.SkewMS, Stamp(now))
	if err != nil {
		return false, err
	}
	defer rows.Close()
	added := rows.Next()
	return added, errors.Join(rows.Err(), rows.Close())
}

// SetHubRecordResult records what a record was applied to, or why it was not.
func (db *DB) SetHubRecordResult(ctx context.Context, r HubRecord) error {
	var hubID any
	if r.HubID != 0 {
		hubID = r.HubID
	}
	_, err := db.execer(ctx).ExecContext(ctx, `UPDATE hub_records SET hub_id = ?, problem = ? WHERE hub_site_id = ? AND epoch = ? AND seq = ?`,
		hubID, r.Problem, r.Site, r.Epoch, r.Seq)
	return err
}

// StoredHubRecord reads a record of the ledger; false when it holds none.
func (db *DB) StoredHubRecord(ctx context.Context, site int64, epoch string, seq int64) (HubRecord, bool, error) {
	r := HubRecord{Site: site, Epoch: epoch, Seq: seq}
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT kind, op, edge_id, uid FROM hub_records WHERE hub_site_id = ? AND epoch = ? AND seq = ?`,
		site, epoch, seq).Scan(&r.Kind, &r.Op, &r.EdgeID, &r.UID)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// HubPushed is what a push changed of its site's state.
type HubPushed struct {
	NextSeq              int64
	Applied, Duplicates  int
	Records              bool // the push carried records (not a heartbeat)
	Version              string
	Protocol             int
	SkewMS, CorrectionMS int64
	Backlog, BehindMS    int64
	At                   time.Time
}

// FinishHubPush records a push in its site's state.
func (db *DB) FinishHubPush(ctx context.Context, id int64, p HubPushed) error {
	at := Stamp(p.At)
	var batch any
	if p.Records {
		batch = at
	}
	_, err := db.execer(ctx).ExecContext(ctx, `UPDATE hub_sites SET next_seq = ?, records = records + ?, duplicates = duplicates + ?,
		version = ?, protocol = ?, clock_skew_ms = ?, correction_ms = ?, backlog = ?, behind_ms = ?, last_seen = ?,
		last_batch = coalesce(?, last_batch) WHERE id = ?`, p.NextSeq, p.Applied, p.Duplicates, p.Version, p.Protocol, p.SkewMS,
		p.CorrectionMS, p.Backlog, p.BehindMS, at, batch, id)
	return err
}

// HubObject is the hub's id of an edge object of a site (by its id, or a log's uid);
// false when the hub has none.
func (db *DB) HubObject(ctx context.Context, site int64, kind, key string) (int64, bool, error) {
	var id int64
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT hub_id FROM hub_objects WHERE hub_site_id = ? AND kind = ? AND edge_key = ?`,
		site, kind, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// SetHubObject records that an edge object of a site is the hub's object hubID.
func (db *DB) SetHubObject(ctx context.Context, site int64, kind, key string, hubID int64) error {
	_, err := db.execer(ctx).ExecContext(ctx, `INSERT INTO hub_objects (hub_site_id, kind, edge_key, hub_id) VALUES (?, ?, ?, ?)
		ON CONFLICT (hub_site_id, kind, edge_key) DO UPDATE SET hub_id = excluded.hub_id`, site, kind, key, hubID)
	return err
}

// SetCommandSite files a command the hub copied from a site under that site's dcim
// site (siteID): its site in the API, its filters and its permissions' constraints.
func (db *DB) SetCommandSite(ctx context.Context, id, siteID int64) error {
	_, err := db.execer(ctx).ExecContext(ctx, `UPDATE commands SET site_id = ? WHERE id = ?`, siteID, id)
	return err
}

// DropHubObject forgets an edge object of a site.
func (db *DB) DropHubObject(ctx context.Context, site int64, kind, key string) error {
	_, err := db.execer(ctx).ExecContext(ctx, `DELETE FROM hub_objects WHERE hub_site_id = ? AND kind = ? AND edge_key = ?`,
		site, kind, key)
	return err
}

// HubObjects are the edge objects of a kind the hub holds for a site: edge key → hub id.
func (db *DB) HubObjects(ctx context.Context, site int64, kind string) (map[string]int64, error) {
	rows, err := db.reader(ctx).QueryContext(ctx, `SELECT edge_key, hub_id FROM hub_objects WHERE hub_site_id = ? AND kind = ?`, site, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var key string
		var id int64
		if err := rows.Scan(&key, &id); err != nil {
			return nil, err
		}
		out[key] = id
	}
	return out, rows.Err()
}

// HubObjectMapped reports whether any site's object is the hub's object hubID of kind
// (a platform or tag several sites share).
func (db *DB) HubObjectMapped(ctx context.Context, kind string, hubID int64) (bool, error) {
	var n int
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT count(*) FROM hub_objects WHERE kind = ? AND hub_id = ?`, kind, hubID).Scan(&n)
	return n > 0, err
}

// IDBySlug is the id of the row of a table (platforms, tags) with that slug; false when
// none has it.
func (db *DB) IDBySlug(ctx context.Context, m *Model, slug string) (int64, bool, error) {
	var id int64
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT id FROM `+m.Table+` WHERE slug = ?`, slug).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// PlatformUsed reports whether a device or a command uses a platform.
func (db *DB) PlatformUsed(ctx context.Context, id int64) (bool, error) {
	var used bool
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM devices WHERE platform_id = ?)
		OR EXISTS (SELECT 1 FROM command_platforms WHERE platform_id = ?)`, id, id).Scan(&used)
	return used, err
}

// Savepoint runs fn inside ctx's Batch so that a failing fn undoes its own changes
// alone, and the batch goes on.
func (db *DB) Savepoint(ctx context.Context, fn func(ctx context.Context) error) error {
	tx := db.batchTx(ctx)
	if tx == nil {
		return errors.New("store: a savepoint outside a batch")
	}
	return savepoint(ctx, tx, func(*sql.Tx) error { return fn(ctx) })
}

// NoteHubSeen records that a site was heard from (a poll for jobs) at now.
func (db *DB) NoteHubSeen(ctx context.Context, id int64, now time.Time) error {
	_, err := db.execer(ctx).ExecContext(ctx, `UPDATE hub_sites SET last_seen = ? WHERE id = ?`, Stamp(now), id)
	return err
}

// HubLog is a new log record of a push, for AddHubLogs: its ledger row, the key
// hub_objects keeps it by (its uid), and its fields (none when Record.Problem says why
// the hub stores it in the ledger alone).
type HubLog struct {
	Record HubRecord
	Key    string
	Values Values
	// Known is set by AddHubLogs when the hub had the log already (sent again under a
	// new epoch, or twice in one run): Record.HubID is then the log it had.
	Known bool
}

// ErrHubLedgerRaced is AddHubLogs' error when the ledger held one of the records
// already: the caller undoes the run and stores its records one by one.
var ErrHubLedgerRaced = errors.New("store: the hub's ledger holds a record of the run already")

// AddHubLogs stores a run of a site's new log records at once, in ctx's Batch: the logs
// the hub has not (by key), their hub_objects rows and ledger rows (on SQLite one
// INSERT per 500 rows; on PostgreSQL the hub_objects rows first, by claimHubLogKeys,
// then one COPY for the logs and one for the ledger), and their counters summed in Go
// and written once per key. It sets each log's Record.HubID and Known. A failure
// leaves the batch to undo what it wrote (run it in a Savepoint); a record of the run
// already in the ledger fails it (on SQLite with ErrHubLedgerRaced, on PostgreSQL with
// the COPY's unique violation).
func (db *DB) AddHubLogs(ctx context.Context, site int64, logs []HubLog, now time.Time) error {
	tx := db.batchTx(ctx)
	if tx == nil {
		return errors.New("store: hub logs outside a batch")
	}
	var keys []string // each once, in the run's order
	seen := map[string]bool{}
	for _, l := range logs {
		if l.Record.Problem == "" && !seen[l.Key] {
			seen[l.Key] = true
			keys = append(keys, l.Key)
		}
	}
	var held, claimed map[string]int64
	var err error
	if db.pg {
		held, claimed, err = claimHubLogKeys(ctx, tx, site, keys)
	} else {
		held, err = heldHubLogKeys(ctx, tx, site, keys)
	}
	if err != nil {
		return err
	}
	// The logs to write, each once: a key met again in the run is the first one's log.
	var writes []*logWrite
	var writers []int
	first := map[string]int{}
	for i := range logs {
		l := &logs[i]
		if l.Record.Problem != "" {
			continue
		}
		if id, ok := held[l.Key]; ok {
			l.Record.HubID, l.Known = id, true
			continue
		}
		if _, ok := first[l.Key]; ok {
			l.Known = true
			continue
		}
		args, _, err := db.logArgs(l.Values)
		if err != nil {
			return err
		}
		first[l.Key] = i
		writes, writers = append(writes, &logWrite{args: args, id: claimed[l.Key]}), append(writers, i)
	}
	if err := db.insertHubLogRows(ctx, tx, writes); err != nil {
		return fmt.Errorf("store: create logs: %w", constraintErr(err, "command log"))
	}
	c := newCounterRows()
	var objects [][]any
	for n, w := range writes {
		if w.err != nil {
			return w.err
		}
		l := &logs[writers[n]]
		l.Record.HubID = w.id
		objects = append(objects, []any{site, KindLog, l.Key, w.id})
		c.add(tallyOf(w.args), 1)
	}
	for i := range logs {
		if l := &logs[i]; l.Known && l.Record.HubID == 0 {
			l.Record.HubID = logs[first[l.Key]].Record.HubID
		}
	}
	var ledger [][]any
	for _, l := range logs {
		r := l.Record
		var hubID any
		if r.HubID != 0 {
			hubID = r.HubID
		}
		ledger = append(ledger, []any{r.Site, r.Epoch, r.Seq, r.Kind, r.Op, r.EdgeID, r.UID, r.SkewMS, Stamp(now), hubID, r.Problem})
	}
	if db.pg {
		// The logs' hub_objects rows are in (claimHubLogKeys). The site's row, locked by
		// the push (LockHubSite), keeps any other push of the site out: no record of the
		// run can be in the ledger already, so its rows are copied in without ON
		// CONFLICT, and should one be (never seen) the copy fails and the caller stores
		// the run record by record.
		if err := db.copyRows(ctx, "hub_records", hubRecordColumns, ledger); err != nil {
			return fmt.Errorf("store: hub_records: %w", err)
		}
		return c.write(ctx, db, tx)
	}
	if err := multiRow(ctx, tx, `INSERT INTO hub_objects (`+strings.Join(hubObjectColumns, ", ")+`) VALUES `, 4,
		slices.Concat(objects...), ` ON CONFLICT (hub_site_id, kind, edge_key) DO UPDATE SET hub_id = excluded.hub_id`, nil); err != nil {
		return err
	}
	added := 0
	if err := multiRow(ctx, tx, `INSERT INTO hub_records (`+strings.Join(hubRecordColumns, ", ")+`) VALUES `, 11,
		slices.Concat(ledger...), ` ON CONFLICT (hub_site_id, epoch, seq) DO NOTHING RETURNING seq`, &added); err != nil {
		return err
	}
	if added != len(logs) {
		return ErrHubLedgerRaced
	}
	return c.write(ctx, db, tx)
}

// The columns AddHubLogs writes of hub_objects and of hub_records.
var (
	hubObjectColumns = []string{"hub_site_id", "kind", "edge_key", "hub_id"}
	hubRecordColumns = []string{"hub_site_id", "epoch", "seq", "kind", "op", "edge_id", "uid", "skew_ms", "received",
		"hub_id", "problem"}
)

// insertHubLogRows inserts new logs: on SQLite with one INSERT per maxLogRows, which
// sets their ids; on PostgreSQL, with the ids claimHubLogKeys gave them, by one COPY
// (copyRows).
func (db *DB) insertHubLogRows(ctx context.Context, tx *sql.Tx, writes []*logWrite) error {
	if !db.pg {
		for chunk := range slices.Chunk(writes, maxLogRows) {
			if err := insertLogsAtOnce(ctx, tx, chunk); err != nil {
				return err
			}
		}
		return nil
	}
	columns := []string{"id"}
	for _, f := range logColumns {
		columns = append(columns, f.Column)
	}
	// The logs' words for ?q= (pgschema/0006), made here: the database's trigger would
	// spend ten times the CPU on them.
	columns = append(columns, "words")
	copied := make([][]any, len(writes))
	for i, w := range writes {
		// A copy: copyRows converts in place, tallyOf reads w.args.
		copied[i] = append(append([]any{w.id}, w.args...), logWordsOf(w.args))
	}
	return db.copyRows(ctx, "command_logs", columns, copied)
}

// heldHubLogKeys are the keys of a run the hub has a log of (hub_objects), with its id.
func heldHubLogKeys(ctx context.Context, tx *sql.Tx, site int64, keys []string) (map[string]int64, error) {
	held := map[string]int64{}
	for chunk := range slices.Chunk(keys, maxLogRows) {
		args := []any{site, KindLog}
		for _, k := range chunk {
			args = append(args, k)
		}
		rows, err := tx.QueryContext(ctx, `SELECT edge_key, hub_id FROM hub_objects WHERE hub_site_id = ? AND kind = ?
			AND edge_key IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, err
		}
		if err := scanKeyIDs(rows, held); err != nil {
			return nil, err
		}
	}
	return held, nil
}

// claimHubLogKeys, on PostgreSQL, gives each key of a run the hub has no log of a new
// log id, taken from command_logs' sequence in the run's order, and records it in
// hub_objects at once: an INSERT … ON CONFLICT DO NOTHING, where the unique index
// answers for each key. (A lookup of the run's keys, IN (…), was left to the planner,
// which read every row of the table, a filter of 500 keys on each, for as long as the
// table's statistics lagged its growth: 0.8 s a batch at 36,000 logs.) It returns the
// keys the hub had (held), looked up alone, and the ids of the others (claimed).
func claimHubLogKeys(ctx context.Context, tx *sql.Tx, site int64, keys []string) (held, claimed map[string]int64, err error) {
	held, claimed = map[string]int64{}, map[string]int64{}
	if len(keys) == 0 {
		return held, claimed, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT nextval(pg_get_serial_sequence('command_logs', 'id')) FROM generate_series(1, ?)`,
		len(keys))
	if err != nil {
		return nil, nil, err
	}
	ids := make([]int64, 0, len(keys))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, nil, err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, nil, err
	}
	if len(ids) != len(keys) {
		return nil, nil, fmt.Errorf("store: %d log ids for %d logs", len(ids), len(keys))
	}
	slices.Sort(ids) // the logs' ids in the run's order, as on SQLite
	rows, err = tx.QueryContext(ctx, `INSERT INTO hub_objects (hub_site_id, kind, edge_key, hub_id)
		SELECT ?, ?, t.k, t.i FROM unnest(?::text[], ?::bigint[]) AS t (k, i)
		ON CONFLICT (hub_site_id, kind, edge_key) DO NOTHING RETURNING edge_key, hub_id`, site, KindLog, keys, ids)
	if err != nil {
		return nil, nil, err
	}
	if err := scanKeyIDs(rows, claimed); err != nil {
		return nil, nil, err
	}
	var others []string
	for _, k := range keys {
		if _, ok := claimed[k]; !ok {
			others = append(others, k)
		}
	}
	if len(others) == 0 {
		return held, claimed, nil
	}
	rows, err = tx.QueryContext(ctx, `SELECT edge_key, hub_id FROM hub_objects WHERE hub_site_id = ? AND kind = ?
		AND edge_key = ANY(?::text[])`, site, KindLog, others)
	if err != nil {
		return nil, nil, err
	}
	return held, claimed, scanKeyIDs(rows, held)
}

// scanKeyIDs reads rows of (key, id) into m, and closes rows.
func scanKeyIDs(rows *sql.Rows, m map[string]int64) error {
	defer rows.Close()
	for rows.Next() {
		var key string
		var id int64
		if err := rows.Scan(&key, &id); err != nil {
			return err
		}
		m[key] = id
	}
	return errors.Join(rows.Err(), rows.Close())
}

// multiRow runs head, then a row of width placeholders for each width args, then tail,
// as one statement per maxLogRows rows (within SQLite's limit of parameters); when
// returned is not nil, it counts the rows the statements return.
func multiRow(ctx context.Context, tx *sql.Tx, head string, width int, args []any, tail string, returned *int) error {
	row := "(" + placeholders(width) + ")"
	for chunk := range slices.Chunk(args, width*maxLogRows) {
		q := head + strings.TrimSuffix(strings.Repeat(row+", ", len(chunk)/width), ", ") + tail
		if returned == nil {
			if _, err := tx.ExecContext(ctx, q, chunk...); err != nil {
				return err
			}
			continue
		}
		rows, err := tx.QueryContext(ctx, q, chunk...)
		if err != nil {
			return err
		}
		for rows.Next() {
			*returned++
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
	}
	return nil
}
