package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TypeSchedule is a schedule's object type, as permissions name it.
const TypeSchedule = "netbox_toolkit_plugin.schedule"

// ScheduleKinds are what a schedule runs.
var ScheduleKinds = []Choice{{"command", "Command"}, {"config_backup", "Config backup"}}

// ScheduleStatuses are a schedule's states: active (it runs when due), disabled (by a
// person) or paused (something it needs is gone; status_reason says what).
var ScheduleStatuses = []Choice{{"active", "Active"}, {"disabled", "Disabled"}, {"paused", "Paused"}}

// schedulePauses are the reasons a schedule cannot run, in the order they are tested:
// the condition on the schedule's row (aliased t), its status and the reason shown.
var schedulePauses = []struct{ when, status, reason string }{
	{`t.enabled = 0`, "disabled", `'Disabled: enable it to run.'`},
	{`t.owner_id IS NULL`, "paused", `'Its owner was deleted; saving the schedule makes you its owner.'`},
	{`(SELECT u.is_active FROM users u WHERE u.id = t.owner_id) = 0`, "paused",
		`'Its owner ' || (SELECT u.username FROM users u WHERE u.id = t.owner_id) || ' is inactive; saving the schedule makes you its owner.'`},
	{`t.kind = 'command' AND t.command_id IS NULL`, "paused", `'It has no command to run.'`},
	{`t.credential_set_id IS NULL`, "paused", `'Its service credential set was deleted; choose another.'`},
	{`(SELECT c.is_active FROM credential_sets c WHERE c.id = t.credential_set_id) = 0`, "paused",
		`'Its service credential set ' || (SELECT c.name FROM credential_sets c WHERE c.id = t.credential_set_id) || ' is inactive; activate it or choose another.'`},
}

// scheduleStatusSQL is the status (or, reason, the reason) of the schedule aliased t.
func scheduleStatusSQL(reason bool) string {
	var b strings.Builder
	b.WriteString("(CASE")
	for _, p := range schedulePauses {
		v := "'" + p.status + "'"
		if reason {
			v = p.reason
		}
		b.WriteString(" WHEN " + p.when + " THEN " + v)
	}
	if reason {
		b.WriteString(" ELSE '' END)")
	} else {
		b.WriteString(" ELSE 'active' END)")
	}
	return b.String()
}

const scheduleStateSQL = `(SELECT s.%s FROM schedule_state s WHERE s.schedule_id = t.id)`

// Schedules is netbox_toolkit_plugin.schedule: a command run on its own, when due, on
// the devices it targets, with a service credential set, as the user who last saved it.
var Schedules = declare(&Model{
	Type: TypeSchedule, Name: "Schedule", Table: "schedules", DefaultOrder: "name",
	Fields: []Field{
		nameField(100, ""),
		description(200),
		{Name: "kind", Column: "kind", Kind: KindString, Choices: ScheduleKinds, Default: "command", Labeled: true,
			Filter: FilterExact, Sort: true, Brief: true, Doc: "what the schedule runs: command (a command on each target device) or " +
				"config_backup (a config backup of each target device: its platform's running-config command, kept as a config version)"},
		{Name: "command", Column: "command_id", Kind: KindInt, Rel: TypeCommand, Null: true,
			Doc: "the command to run (kind command; null for config_backup); a command a schedule names cannot be deleted"},
		{Name: "variables", Column: "variables", Kind: KindJSON, Null: true, Check: checkScheduleVariables, Schema: "LogVariables",
			Doc: "variable name to value, as an execute request gives them; checked on each device at each run"},
		{Name: "devices", Kind: KindInt, Rel: TypeDevice, Join: &Join{"schedule_devices", "schedule_id", "device_id"},
			Doc: "devices the schedule runs on, besides those its sites, platforms and tags select"},
		{Name: "sites", Kind: KindInt, Rel: TypeSite, Join: &Join{"schedule_sites", "schedule_id", "site_id"},
			Doc: "with platforms and tags: the devices matching every one of them that is not empty, resolved at each run"},
		{Name: "platforms", Kind: KindInt, Rel: TypePlatform, Join: &Join{"schedule_platforms", "schedule_id", "platform_id"},
			Doc: "see sites"},
		{Name: "tags", Kind: KindInt, Rel: TypeTag, Join: &Join{"schedule_tags", "schedule_id", "tag_id"},
			Doc: "device tags (a device with any of them); see sites"},
		{Name: "cron", Column: "cron", Kind: KindString, MaxLen: 100, Label: "Cron expression",
			Doc: "when it runs: five fields (minute hour day-of-month month day-of-week) in server.time_zone, " +
				"or @hourly, @daily, @weekly, @monthly; empty when interval is set"},
		{Name: "interval", Column: "interval_seconds", Kind: KindInt, Null: true, Min: 60, Max: 31 * 86400,
			Label: "Interval (s)", Doc: "seconds between runs (at least 60), instead of cron"},
		{Name: "jitter", Column: "jitter", Kind: KindInt, Default: 0, Min: 0, Max: 3600, Label: "Jitter (s)",
			Doc: "each run starts up to this many seconds after it is due, at random, so that schedules due at once spread out"},
		{Name: "window_start", Column: "window_start", Kind: KindString, MaxLen: 5, Check: checkClock, Label: "Window start",
			Doc: "HH:MM in server.time_zone: with window_end, runs happen only from window_start to window_end " +
				"(across midnight when the end comes first); empty: any time"},
		{Name: "window_end", Column: "window_end", Kind: KindString, MaxLen: 5, Check: checkClock, Label: "Window end",
			Doc: "HH:MM; see window_start"},
		{Name: "timeout", Column: "timeout", Kind: KindInt, Default: 30, Min: 5, Max: 300, Label: "Timeout (s)",
			Doc: "the hard deadline of each device's execution, in seconds"},
		{Name: "credential_set", Column: "credential_set_id", Kind: KindInt, Rel: TypeCredentialSet, Null: true,
			Label: "Service credential set",
			Doc: "a credential set made for unattended use (never a person's own); attaching one needs the service " +
				"action on netbox_toolkit_plugin.devicecredentialset; null once the set is deleted (the schedule then pauses)"},
		{Name: "enabled", Column: "enabled", Kind: KindBool, Default: true, Filter: FilterExact, Sort: true, Brief: true},
		{Name: "owner", Column: "owner_id", Kind: KindInt, Rel: TypeUser, Null: true, Access: ReadOnly,
			Doc: "who last saved the schedule: runs execute as this user, with this user's permissions"},
		{Name: "owner_id", Column: "owner_id", Kind: KindInt, Access: Internal},
		{Name: "status", Kind: KindString, Access: ReadOnly, Select: scheduleStatusSQL(false), Choices: ScheduleStatuses,
			Labeled: true, Brief: true, Doc: "active, disabled, or paused (status_reason says why)"},
		{Name: "status_reason", Kind: KindString, Access: ReadOnly, Select: scheduleStatusSQL(true),
			Doc: "why the schedule is paused or disabled; empty when active"},
		{Name: "next_run", Kind: KindTime, Access: ReadOnly, Null: true, Select: fmt.Sprintf(scheduleStateSQL, "next_run"),
			Doc: "when it is next due (before jitter); null while it is not active"},
		{Name: "last_run", Kind: KindJSON, Access: ReadOnly, Null: true, Select: fmt.Sprintf(scheduleStateSQL, "last_run"),
			Schema: "ScheduleRun", Doc: "the last run's outcome; null before the first"},
		{Name: "skipped_runs", Kind: KindInt, Access: ReadOnly, Select: "COALESCE(" + fmt.Sprintf(scheduleStateSQL, "skipped") + ", 0)",
			Doc: "runs not started because the one before was still going"},
		{Name: "missed_runs", Kind: KindInt, Access: ReadOnly, Select: "COALESCE(" + fmt.Sprintf(scheduleStateSQL, "missed") + ", 0)",
			Doc: "runs that fell due while the server was down, beyond the one run at start-up"},
	},
	Filters: map[string]Filter{
		"command_id":        {Path: "command", Doc: "command id"},
		"credential_set_id": {Path: "credential_set", Doc: "service credential set id"},
		"device_id":         {Path: "devices", Doc: "id of a device listed on the schedule"},
		"tag":               {Path: "tags__slug", Doc: "slug of a tag the schedule targets"},
	},
})

var clockRE = func() func(string) bool {
	return func(s string) bool {
		var h, m int
		if len(s) != 5 || s[2] != ':' {
			return false
		}
		if _, err := fmt.Sscanf(s, "%2d:%2d", &h, &m); err != nil {
			return false
		}
		return h >= 0 && h < 24 && m >= 0 && m < 60
	}
}()

func checkClock(v any) (any, error) {
	s := v.(string)
	if s != "" && !clockRE(s) {
		return nil, Problem("Enter a time as HH:MM (00:00 to 23:59), or nothing.")
	}
	return s, nil
}

// checkScheduleVariables accepts an object of variable name to value: a string, or a
// number kept as its string (as an execute request takes them).
func checkScheduleVariables(v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Problem("Must be an object of variable name to value.")
	}
	for k, x := range m {
		switch n := x.(type) {
		case string:
		case float64:
			m[k] = strconv.FormatFloat(n, 'f', -1, 64)
		default:
			return nil, problemf("%s: a value must be a string or a number.", k)
		}
	}
	return m, nil
}

// ScheduleSpec is what the scheduler and a run need of a schedule.
type ScheduleSpec struct {
	ID                       int64
	Name, Kind               string
	CommandID                int64 // 0: none
	Variables                map[string]json.RawMessage
	Cron                     string
	Interval, Jitter         time.Duration
	WindowStart, WindowEnd   string
	Timeout                  time.Duration
	CredentialSetID, OwnerID int64 // 0: none
	Status, Reason           string
	// The scheduler's state: what NextRun was computed from, and when it is due (zero:
	// never computed).
	StateSpec string
	NextRun   time.Time
}

// When is the part of a schedule that decides when it runs, as one string: a changed
// When makes the scheduler compute the next run afresh.
func (s ScheduleSpec) When() string {
	return fmt.Sprintf("%s|%d|%d|%s-%s", s.Cron, int64(s.Interval/time.Second), int64(s.Jitter/time.Second),
		s.WindowStart, s.WindowEnd)
}

var scheduleSpecSQL = `SELECT t.id, t.name, t.kind, COALESCE(t.command_id, 0), t.variables, t.cron,
	COALESCE(t.interval_seconds, 0), t.jitter, t.window_start, t.window_end, t.timeout, COALESCE(t.credential_set_id, 0),
	COALESCE(t.owner_id, 0), ` + scheduleStatusSQL(false) + `, ` + scheduleStatusSQL(true) + `,
	COALESCE(s.spec, ''), COALESCE(s.next_run, '')
	FROM schedules t LEFT JOIN schedule_state s ON s.schedule_id = t.id`

// ScheduleSpecs loads every schedule, with its status and the scheduler's state.
func (db *DB) ScheduleSpecs(ctx context.Context) ([]ScheduleSpec, error) {
	return db.scheduleSpecs(ctx, scheduleSpecSQL+` ORDER BY t.id`)
}

// ScheduleSpecByID loads one schedule.
func (db *DB) ScheduleSpecByID(ctx context.Context, id int64) (ScheduleSpec, error) {
	specs, err := db.scheduleSpecs(ctx, scheduleSpecSQL+` WHERE t.id = ?`, id)
	if err != nil {
		return ScheduleSpec{}, err
	}
	if len(specs) == 0 {
		return ScheduleSpec{}, fmt.Errorf("schedule %d: %w", id, ErrNotFound)
	}
	return specs[0], nil
}

func (db *DB) scheduleSpecs(ctx context.Context, query string, args ...any) ([]ScheduleSpec, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: schedules: %w", err)
	}
	defer rows.Close()
	var out []ScheduleSpec
	for rows.Next() {
		var s ScheduleSpec
		var vars sql.NullString
		var interval, jitter, timeout int64
		var next string
		if err := rows.Scan(&s.ID, &s.Name, &s.Kind, &s.CommandID, &vars, &s.Cron, &interval, &jitter, &s.WindowStart,
			&s.WindowEnd, &timeout, &s.CredentialSetID, &s.OwnerID, &s.Status, &s.Reason, &s.StateSpec, &next); err != nil {
			return nil, fmt.Errorf("store: schedules: %w", err)
		}
		s.Interval, s.Jitter, s.Timeout = time.Duration(interval)*time.Second, time.Duration(jitter)*time.Second,
			time.Duration(timeout)*time.Second
		s.NextRun = ParseStamp(next)
		if vars.Valid && vars.String != "" && vars.String != "null" {
			if err := json.Unmarshal([]byte(vars.String), &s.Variables); err != nil {
				return nil, fmt.Errorf("store: schedule %d variables: %w", s.ID, err)
			}
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SetScheduleNext records when a schedule is next due, and what that was computed from.
func (db *DB) SetScheduleNext(ctx context.Context, id int64, spec string, next time.Time) error {
	var at any
	if !next.IsZero() {
		at = Stamp(next)
	}
	return db.scheduleState(ctx, id, `spec = ?, next_run = ?`, spec, at)
}

// SetScheduleLastRun records the outcome of a schedule's last run (JSON).
func (db *DB) SetScheduleLastRun(ctx context.Context, id int64, run json.RawMessage) error {
	return db.scheduleState(ctx, id, `last_run = ?`, string(run))
}

// AddScheduleSkips counts runs that were due but not started: skipped (the one before
// was still going) and missed (the server was down).
func (db *DB) AddScheduleSkips(ctx context.Context, id int64, skipped, missed int) error {
	return db.scheduleState(ctx, id, `skipped = skipped + ?, missed = missed + ?`, skipped, missed)
}

// scheduleState updates a schedule's state row, made first if missing; a schedule
// deleted meanwhile is left alone.
func (db *DB) scheduleState(ctx context.Context, id int64, set string, args ...any) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO schedule_state (schedule_id) SELECT id FROM schedules WHERE id = ?
			ON CONFLICT (schedule_id) DO NOTHING`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE schedule_state SET `+set+` WHERE schedule_id = ?`, append(args, id)...)
		return err
	})
}

// ScheduleTargets resolves the devices a schedule runs on now: those it lists, and
// those matching every non-empty one of its sites, platforms and tags; only active
// devices, only on one of the command's platforms (platformsOf: 0 for any), only within
// visible (a scope on devices, aliased t). They come in name order.
func (db *DB) ScheduleTargets(ctx context.Context, id, platformsOf int64, visible Expr) ([]int64, error) {
	// sel is the schedule's selectors: s (sites), p (platforms), g (tags), each NULL
	// when empty; a device must match each one that is not.
	query := `WITH sel AS (SELECT
			(SELECT 1 FROM schedule_sites WHERE schedule_id = ?1 LIMIT 1) AS s,
			(SELECT 1 FROM schedule_platforms WHERE schedule_id = ?1 LIMIT 1) AS p,
			(SELECT 1 FROM schedule_tags WHERE schedule_id = ?1 LIMIT 1) AS g)
		SELECT t.id FROM devices t, sel WHERE t.status = 'active' AND (
			t.id IN (SELECT device_id FROM schedule_devices WHERE schedule_id = ?1)
			OR ((sel.s OR sel.p OR sel.g)
				AND (sel.s IS NULL OR t.site_id IN (SELECT site_id FROM schedule_sites WHERE schedule_id = ?1))
				AND (sel.p IS NULL OR t.platform_id IN (SELECT platform_id FROM schedule_platforms WHERE schedule_id = ?1))
				AND (sel.g IS NULL OR t.id IN (SELECT dt.device_id FROM device_tags dt
					JOIN schedule_tags st ON st.tag_id = dt.tag_id WHERE st.schedule_id = ?1))))
			AND (?2 = 0 OR t.platform_id IN (SELECT platform_id FROM command_platforms WHERE command_id = ?2))`
	args := []any{id, platformsOf}
	if visible.SQL != "" {
		// The scope's own placeholders are plain ?, numbered after ?2.
		query += ` AND (` + visible.SQL + `)`
		args = append(args, visible.Args...)
	}
	rows, err := db.r.QueryContext(ctx, query+` ORDER BY t.name, t.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: schedule %d targets: %w", id, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// ErrScheduleBusy is returned when a schedule asked to run is still running.
var ErrScheduleBusy = errors.New("the schedule is running")

// logScheduleSQL is a log's schedule, from command_log_schedules.
const logScheduleSQL = `(SELECT json_object('id', s.schedule_id, 'name', s.schedule_name, 'display', s.schedule_name)
	FROM command_log_schedules s WHERE s.log_id = t.id)`

// logScheduleFilter is ?schedule_id= on the logs.
func logScheduleFilter(vals []string) (Expr, error) {
	args := make([]any, len(vals))
	for i, v := range vals {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Expr{}, problemf("%q is not an id.", v)
		}
		args[i] = n
	}
	return Expr{SQL: `t.id IN (SELECT log_id FROM command_log_schedules WHERE schedule_id IN (` + placeholders(len(args)) + `))`,
		Args: args}, nil
}

// LinkLogSchedule records that a schedule made a log; it is written right after the
// log (a crash between the two leaves the log with source schedule and no schedule).
func (db *DB) LinkLogSchedule(ctx context.Context, logID, scheduleID int64, name string) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO command_log_schedules (log_id, schedule_id, schedule_name) VALUES (?, ?, ?)`,
			logID, scheduleID, name)
		return err
	})
}
