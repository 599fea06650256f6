package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"fieldkit/diff"
)

// TypeConfigVersion is the object type of config versions, as permissions name it.
const TypeConfigVersion = "netbox_toolkit_plugin.configversion"

// The statuses of a config version: a configuration kept, or a read refused.
const (
	ConfigStored      = "stored"
	ConfigQuarantined = "quarantined"
	// ConfigUnchanged is the outcome of a read that found the latest version again; no
	// row is written for it but the version's confirmed time.
	ConfigUnchanged = "unchanged"
)

// ConfigVersions is netbox_toolkit_plugin.configversion: a device's running
// configuration, kept when it changed (status stored), and the reads refused as bad
// (status quarantined, with the reason; the transcript is the collection's log).
var ConfigVersions = declare(&Model{
	Type: TypeConfigVersion, Name: "ConfigVersion", Table: "config_versions", DefaultOrder: "-id",
	DisplayFields: []string{"device_name", "status"},
	Display:       func(r Row) string { return fmt.Sprintf("%s %s", r["device_name"], r["status"]) },
	TextSearch:    configSearch,
	Fields: []Field{
		{Name: "device", Column: "device_id", Kind: KindInt, Rel: TypeDevice, KeptName: "device_name", Access: ReadOnly,
			Doc: "id (null once the device is deleted), url, name, display"},
		{Name: "status", Column: "status", Kind: KindString, Access: ReadOnly, Filter: FilterExact, Sort: true,
			Choices: []Choice{{ConfigStored, "Stored"}, {ConfigQuarantined, "Quarantined"}},
			Doc:     "stored: a configuration kept because it changed; quarantined: a read refused as bad"},
		{Name: "reason", Column: "reason", Kind: KindString, Access: ReadOnly,
			Doc: "why a read was quarantined (failed execution, no end marker, below the floor, shrunk); empty when stored"},
		{Name: "hash", Column: "hash", Kind: KindString, Access: ReadOnly, Filter: FilterExact,
			Doc: "SHA-256 of the normalised configuration: its content address; empty when quarantined"},
		{Name: "command_log_id", Column: "command_log_id", Kind: KindInt, Access: ReadOnly, Null: true,
			Doc: "the collection's command log (its transcript), null once pruned"},
		{Name: "previous_id", Column: "previous_id", Kind: KindInt, Access: ReadOnly, Null: true,
			Doc: "the stored version this one follows; null for a device's first"},
		{Name: "lines", Column: "lines", Kind: KindInt, Access: ReadOnly, Sort: true, Doc: "lines of the normalised configuration"},
		{Name: "added", Column: "added", Kind: KindInt, Access: ReadOnly, Doc: "lines added since the previous version"},
		{Name: "removed", Column: "removed", Kind: KindInt, Access: ReadOnly, Doc: "lines removed since the previous version"},
		{Name: "secrets", Column: "secrets", Kind: KindInt, Access: ReadOnly, Doc: "secrets masked in text"},
		{Name: "changes", Column: "changes", Kind: KindJSON, Access: ReadOnly, Schema: "ConfigChanges",
			Doc: "the FieldKit config executions on the device since the previous version was last read"},
		{Name: "changed_outside", Column: "changed_outside", Kind: KindBool, Access: ReadOnly, Filter: FilterExact,
			Doc: "the configuration changed with no FieldKit config execution since the previous version was last read"},
		{Name: "oscillating", Column: "oscillating", Kind: KindBool, Access: ReadOnly, Filter: FilterExact,
			Doc: "equal to the version before the previous one: the configuration flips back and forth (marked once)"},
		{Name: "flipping", Column: "flipping", Kind: KindJSON, Access: ReadOnly, Null: true, Schema: "ConfigFlipping",
			Doc: "when oscillating, the lines that flip: removed and added against the previous version"},
		{Name: "confirmed", Column: "confirmed", Kind: KindTime, Access: ReadOnly, Null: true, Sort: true,
			Doc: "the last read that found this configuration (a good backup's age); null when quarantined"},
		{Name: "text", Kind: KindString, Access: ReadOnly, Lazy: true,
			Select: `coalesce((SELECT x.text FROM config_texts x WHERE x.hash = t.hash), '')`,
			Doc:    "the normalised configuration with its secrets masked (empty when quarantined); ?exclude=text for light lists"},
		{Name: "device_name", Column: "device_name", Kind: KindString, Access: Internal, Search: true},
	},
	Filters: map[string]Filter{
		"device_id": {Path: "device", Doc: "device id"},
		"site_id":   {Path: "device__site", Doc: "site id of the device"},
		"site":      {Path: "device__site__slug", Doc: "site slug of the device"},
		"created":   {Path: "created", Lookups: true, Doc: "creation time; created__gte and created__lte bound a range"},
		"latest": {Kind: KindBool, Doc: "true: each device's latest stored version only (with q: which devices' configurations hold it now)",
			SQL: func(vals []string) (Expr, error) {
				on, err := ParseBool(vals[0])
				if err != nil {
					return Expr{}, problemf("Must be true or false.")
				}
				e := Expr{SQL: `t.id IN (SELECT max(v.id) FROM config_versions v WHERE v.status = 'stored' GROUP BY v.device_id, v.device_name)`}
				if !on {
					return Not(e), nil
				}
				return e, nil
			}},
	},
})

// configSearch is ?q= on config versions: their text (as shown, secrets masked) holds
// q, case ignored, or their device's name does.
func configSearch(_ context.Context, _ *DB, q string) (Expr, error) {
	return Expr{SQL: `(t.hash IN (SELECT x.hash FROM config_texts x WHERE instr(lower(x.text), lower(?)) > 0)
		OR instr(lower(t.device_name), lower(?)) > 0)`, Args: []any{q, q}}, nil
}

// ConfigRead is one collection's read of a device's configuration, on its way to be
// kept, or refused.
type ConfigRead struct {
	DeviceID   int64
	DeviceName string
	LogID      int64
	// Failed is why the execution failed ("" when it succeeded); Problem a check the
	// read failed before the store saw it (the end marker).
	Failed, Problem string
	Text            string // the normalised configuration, as read
	Masked          string // Text with its secrets masked
	Secrets         int
	// MinLines is the floor, MaxShrink the share (0 to 1) of lines a version may lose
	// against the last one with no FieldKit config execution between.
	MinLines  int
	MaxShrink float64
}

// ConfigOutcome is what a read became.
type ConfigOutcome struct {
	Status     string // ConfigStored, ConfigUnchanged or ConfigQuarantined
	VersionID  int64  // the version written, or found again
	Reason     string
	DeviceID   int64
	DeviceName string
	LogID      int64
	Time       time.Time
	// Outside and Oscillating describe a stored version.
	Outside, Oscillating bool
}

// ConfigChange is one FieldKit config execution a version is attributed to.
type ConfigChange struct {
	LogID       int64  `json:"command_log_id"`
	Username    string `json:"username"`
	SentCommand string `json:"sent_command"`
	Created     string `json:"created"`
	Success     bool   `json:"success"`
}

// latestConfig is a device's latest stored version.
type latestConfig struct {
	id, previous int64
	hash, seen   string
	lines        int
	oscillating  bool
}

// KeepConfig decides, in one transaction, what a read becomes: quarantined when it
// failed, when its end marker was missing, when it is below the floor, or when it
// shrank by more than the allowed share with no FieldKit config execution since the
// last version was read; the latest version confirmed when it is the same
// configuration; else a new version, attributed to the config executions since, and
// marked oscillating (once) when it equals the version before the previous one.
func (db *DB) KeepConfig(ctx context.Context, kr *Keyring, r ConfigRead) (ConfigOutcome, error) {
	out := ConfigOutcome{DeviceID: r.DeviceID, DeviceName: r.DeviceName, LogID: r.LogID, Time: db.now()}
	err := db.Write(ctx, func(tx *sql.Tx) error {
		reason, last, changes, err := configChecks(ctx, tx, r)
		if err != nil {
			return err
		}
		now := Stamp(out.Time)
		switch {
		case reason != "":
			out.Status, out.Reason = ConfigQuarantined, reason
			out.VersionID, err = insertID(ctx, tx, `INSERT INTO config_versions (device_id, device_name, status, reason,
				command_log_id, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				r.DeviceID, r.DeviceName, ConfigQuarantined, reason, nullID(r.LogID), now, now)
			return err
		case last != nil && last.hash == configHash(r.Text):
			out.Status, out.VersionID = ConfigUnchanged, last.id
			_, err = tx.ExecContext(ctx, `UPDATE config_versions SET confirmed = ? WHERE id = ?`, now, last.id)
			return err
		}
		out.Status = ConfigStored
		out.VersionID, out.Outside, out.Oscillating, err = storeVersion(ctx, tx, kr, r, last, changes, now)
		return err
	})
	if err != nil {
		return out, fmt.Errorf("store: keep config of device %d: %w", r.DeviceID, err)
	}
	return out, nil
}

// configChecks reads the device's latest version and the config executions since it
// was last read, and says why the read must be quarantined ("" when it may be kept).
func configChecks(ctx context.Context, tx *sql.Tx, r ConfigRead) (string, *latestConfig, []ConfigChange, error) {
	if r.Failed != "" {
		return "the execution failed: " + r.Failed, nil, nil, nil
	}
	if r.Problem != "" {
		return r.Problem, nil, nil, nil
	}
	lines := countLines(r.Text)
	if lines < r.MinLines {
		return fmt.Sprintf("the configuration has %d lines, below the floor of %d (config_backup.min_lines)", lines, r.MinLines), nil, nil, nil
	}
	last, err := latestVersion(ctx, tx, r.DeviceID)
	if err != nil || last == nil {
		return "", last, nil, err
	}
	changes, err := changesSince(ctx, tx, r.DeviceID, last.seen)
	if err != nil {
		return "", nil, nil, err
	}
	if len(changes) == 0 && float64(lines) < float64(last.lines)*(1-r.MaxShrink) {
		return fmt.Sprintf("the configuration shrank from %d to %d lines, more than %.0f%% (config_backup.max_shrink_percent), "+
			"with no FieldKit config execution since the last version was read", last.lines, lines, r.MaxShrink*100), last, nil, nil
	}
	return "", last, changes, nil
}

func latestVersion(ctx context.Context, tx *sql.Tx, deviceID int64) (*latestConfig, error) {
	var l latestConfig
	var prev sql.NullInt64
	var seen sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT id, coalesce(previous_id, 0), hash, confirmed, created, lines, oscillating
		FROM config_versions WHERE device_id = ? AND status = 'stored' ORDER BY id DESC LIMIT 1`, deviceID).
		Scan(&l.id, &prev, &l.hash, &seen, new(string), &l.lines, &l.oscillating)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l.previous, l.seen = prev.Int64, seen.String
	return &l, nil
}

// changesSince lists the device's config executions logged after a time.
func changesSince(ctx context.Context, tx *sql.Tx, deviceID int64, since string) ([]ConfigChange, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, username, sent_command, created, success FROM command_logs
		WHERE device_id = ? AND created > ? AND command_type = 'config' ORDER BY created, id`, deviceID, since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ConfigChange{}
	for rows.Next() {
		var c ConfigChange
		if err := rows.Scan(&c.LogID, &c.Username, &c.SentCommand, &c.Created, &c.Success); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// storeVersion writes a new version (and its text, unless the same text is kept
// already), counting the lines it adds and removes and telling whether it flips back.
func storeVersion(ctx context.Context, tx *sql.Tx, kr *Keyring, r ConfigRead, last *latestConfig, changes []ConfigChange, now string) (int64, bool, bool, error) {
	hash := configHash(r.Text)
	if _, err := tx.ExecContext(ctx, `INSERT INTO config_texts (hash, text, raw, secrets) VALUES (?, ?, ?, ?)
		ON CONFLICT (hash) DO NOTHING`, hash, r.Masked, kr.sealConfig(hash, r.Text), r.Secrets); err != nil {
		return 0, false, false, err
	}
	var added, removed int
	var flipping any
	var previous any
	outside, oscillating := false, false
	if last != nil {
		before, err := textOf(ctx, tx, last.hash)
		if err != nil {
			return 0, false, false, err
		}
		d := diff.Lines(before, r.Masked)
		added, removed, previous, outside = len(d.Added), len(d.Removed), last.id, len(changes) == 0
		if oscillating, err = flipsBack(ctx, tx, last, hash); err != nil {
			return 0, false, false, err
		}
		if oscillating {
			b, _ := json.Marshal(d)
			flipping = string(b)
		}
	}
	if changes == nil {
		changes = []ConfigChange{}
	}
	ch, err := json.Marshal(changes)
	if err != nil {
		return 0, false, false, err
	}
	id, err := insertID(ctx, tx, `INSERT INTO config_versions (device_id, device_name, status, hash, command_log_id, previous_id,
		lines, added, removed, secrets, changes, changed_outside, oscillating, flipping, confirmed, created, last_updated)
		VALUES (?, ?, 'stored', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.DeviceID, r.DeviceName, hash, nullID(r.LogID), previous, countLines(r.Text), added, removed, r.Secrets,
		string(ch), outside, oscillating, flipping, now, now, now)
	return id, outside, oscillating, err
}

// flipsBack tells whether a configuration of hash, following last, equals the version
// before last: an oscillation, marked once (not when last was itself marked).
func flipsBack(ctx context.Context, tx *sql.Tx, last *latestConfig, hash string) (bool, error) {
	if last.previous == 0 || last.oscillating {
		return false, nil
	}
	var before string
	err := tx.QueryRowContext(ctx, `SELECT hash FROM config_versions WHERE id = ?`, last.previous).Scan(&before)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return before == hash, err
}

func textOf(ctx context.Context, q querier, hash string) (string, error) {
	var text string
	err := q.QueryRowContext(ctx, `SELECT text FROM config_texts WHERE hash = ?`, hash).Scan(&text)
	return text, err
}

func insertID(ctx context.Context, tx *sql.Tx, query string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func countLines(text string) int {
	if strings.TrimSpace(text) == "" {
		return 0
	}
	return strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
}

// configHash is a normalised configuration's content address.
func configHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// sealConfig encrypts a configuration as read with the master key, bound to its hash.
func (k *Keyring) sealConfig(hash, text string) []byte {
	return k.seal(0, "config_text:"+hash, text)
}

// openConfig decrypts what sealConfig sealed.
func (k *Keyring) openConfig(hash string, sealed []byte) (string, error) {
	return k.open(0, "config_text:"+hash, sealed)
}

// RawConfig is a version's configuration as read, secrets and all, decrypted with the
// master key; ErrNotFound for a quarantined version (it kept no configuration).
func (db *DB) RawConfig(ctx context.Context, kr *Keyring, id int64) (string, error) {
	var hash string
	var sealed []byte
	err := db.reader(ctx).QueryRowContext(ctx, `SELECT v.hash, x.raw FROM config_versions v
		JOIN config_texts x ON x.hash = v.hash WHERE v.id = ?`, id).Scan(&hash, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: config version %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: config version %d: %w", id, err)
	}
	text, err := kr.openConfig(hash, sealed)
	if err != nil {
		return "", fmt.Errorf("store: config version %d: %w", id, err)
	}
	return text, nil
}

// BackupState is one device's config backups at a glance.
type BackupState struct {
	DeviceID         int64
	DeviceName       string
	SiteID           *int64
	SiteName         string
	LastGood         time.Time // the last read that kept or found its configuration; zero: never
	VersionID        int64     // its latest version; 0: none
	VersionCreated   time.Time
	LastQuarantined  time.Time // its last quarantined read after the last good one; zero: none
	QuarantineReason string
}

// BackupStatus lists the devices within devices (of the site, when site is not 0) with
// their backups within versions: every such device, backed up or not.
func (db *DB) BackupStatus(ctx context.Context, site int64, devices, versions Expr) ([]BackupState, error) {
	where := devices
	if site != 0 {
		where = And(where, Expr{SQL: `t.site_id = ?`, Args: []any{site}})
	}
	rows, err := db.reader(ctx).QueryContext(ctx, `SELECT t.id, t.name, t.site_id, coalesce(s.name, '')
		FROM devices t LEFT JOIN sites s ON s.id = t.site_id WHERE `+where.SQL+` ORDER BY t.name, t.id`, where.Args...)
	if err != nil {
		return nil, fmt.Errorf("store: backup status: %w", err)
	}
	var out []BackupState
	index := map[int64]int{}
	for rows.Next() {
		var b BackupState
		if err := rows.Scan(&b.DeviceID, &b.DeviceName, &b.SiteID, &b.SiteName); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: backup status: %w", err)
		}
		index[b.DeviceID] = len(out)
		out = append(out, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: backup status: %w", err)
	}
	return out, db.backupVersions(ctx, out, index, versions)
}

// backupVersions fills in each device's latest stored version and last quarantine.
func (db *DB) backupVersions(ctx context.Context, out []BackupState, index map[int64]int, versions Expr) error {
	rows, err := db.reader(ctx).QueryContext(ctx, `SELECT t.device_id, t.status, t.id, t.created, coalesce(t.confirmed, ''), t.reason
		FROM config_versions t WHERE t.id IN (SELECT max(id) FROM config_versions WHERE device_id IS NOT NULL GROUP BY device_id, status)
		AND `+versions.SQL, versions.Args...)
	if err != nil {
		return fmt.Errorf("store: backup status: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var dev, id int64
		var status, created, confirmed, reason string
		if err := rows.Scan(&dev, &status, &id, &created, &confirmed, &reason); err != nil {
			return fmt.Errorf("store: backup status: %w", err)
		}
		i, ok := index[dev]
		if !ok {
			continue
		}
		if status == ConfigStored {
			out[i].VersionID, out[i].VersionCreated, out[i].LastGood = id, ParseStamp(created), ParseStamp(confirmed)
		} else {
			out[i].LastQuarantined, out[i].QuarantineReason = ParseStamp(created), reason
		}
	}
	return rows.Err()
}

// LastGoodConfigs is, for each device that has one, the time of its last good config
// backup: the last read that kept or found its configuration (a backup's age).
func (db *DB) LastGoodConfigs(ctx context.Context) (map[int64]time.Time, error) {
	rows, err := db.reader(ctx).QueryContext(ctx, `SELECT device_id, max(confirmed) FROM config_versions
		WHERE status = 'stored' AND device_id IS NOT NULL GROUP BY device_id`)
	if err != nil {
		return nil, fmt.Errorf("store: last good configs: %w", err)
	}
	defer rows.Close()
	out := map[int64]time.Time{}
	for rows.Next() {
		var id int64
		var at string
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("store: last good configs: %w", err)
		}
		out[id] = ParseStamp(at)
	}
	return out, rows.Err()
}

// ConfigMatch is a device whose latest configuration holds a searched text.
type ConfigMatch struct {
	VersionID  int64
	DeviceID   *int64
	DeviceName string
	Raw        bool     // the lines are as read (the searcher may see secrets)
	Lines      []string // the lines that hold it
}

// SearchConfigs finds q (case ignored) in each device's latest stored version within
// view: in the text as shown, and, for the versions within raw (view_raw_config), in
// the text as read, decrypted here, so that a masked secret ("snmp-server community
// public") is found by those who may see it and by nobody else. At most limit matches,
// by device name.
func (db *DB) SearchConfigs(ctx context.Context, kr *Keyring, q string, view, raw Expr, limit int) ([]ConfigMatch, error) {
	args := append(append([]any{}, raw.Args...), view.Args...)
	rows, err := db.reader(ctx).QueryContext(ctx, `SELECT t.id, t.device_id, t.device_name, t.hash, x.text,
		CASE WHEN (`+raw.SQL+`) THEN x.raw END FROM config_versions t JOIN config_texts x ON x.hash = t.hash
		WHERE t.id IN (SELECT max(v.id) FROM config_versions v WHERE v.status = 'stored' GROUP BY v.device_id, v.device_name)
		AND (`+view.SQL+`) ORDER BY t.device_name, t.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search configs: %w", err)
	}
	defer rows.Close()
	needle := strings.ToLower(q)
	var out []ConfigMatch
	for rows.Next() && len(out) < limit {
		var m ConfigMatch
		var hash, text string
		var sealed []byte
		if err := rows.Scan(&m.VersionID, &m.DeviceID, &m.DeviceName, &hash, &text, &sealed); err != nil {
			return nil, fmt.Errorf("store: search configs: %w", err)
		}
		if sealed != nil && kr != nil {
			plain, err := kr.openConfig(hash, sealed)
			if err != nil {
				return nil, fmt.Errorf("store: search configs: version %d: %w", m.VersionID, err)
			}
			text, m.Raw = plain, true
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(strings.ToLower(line), needle) {
				m.Lines = append(m.Lines, line)
			}
		}
		if len(m.Lines) > 0 {
			out = append(out, m)
		}
	}
	return out, rows.Err()
}
