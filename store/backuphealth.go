package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"
)

// SiteBackupLimit is the site custom field that overrides backup.max_age for the
// site's devices: a number of hours.
const SiteBackupLimit = "backup_max_age_hours"

// Backup health states.
const (
	BackupOK    = "ok"    // the last good backup is within its limit
	BackupStale = "stale" // older than its limit
	BackupNever = "never" // never backed up
)

// BackupHealth is one device's last good config backup against its limit.
type BackupHealth struct {
	DeviceID           int64
	DeviceName         string
	SiteID             int64
	SiteName, SiteSlug string
	LastGood           time.Time // zero: never
	Age, Limit         time.Duration
	Status             string // BackupOK, BackupStale or BackupNever
	SiteOverride       bool   // the limit is the site's own
	LatestVersion      int64  // 0: none
}

// BackupHealthOf lists the active devices within a scope on devices (aliased t), each
// with the age of its last good config backup against its limit: the site's
// backup_max_age_hours custom field, else limit. Most stale first (never backed up
// first of all), then by name.
func (db *DB) BackupHealthOf(ctx context.Context, limit time.Duration, within Expr, now time.Time) ([]BackupHealth, error) {
	where := `t.status = 'active'`
	if within.SQL != "" {
		where += ` AND (` + within.SQL + `)`
	}
	rows, err := db.r.QueryContext(ctx, `SELECT t.id, t.name, s.id, s.name, s.slug,
		json_extract(s.custom_fields, '$.`+SiteBackupLimit+`'), g.confirmed, g.id
		FROM devices t JOIN sites s ON s.id = t.site_id
		LEFT JOIN (SELECT device_id, max(confirmed) AS confirmed, max(id) AS id FROM config_versions
			WHERE status = 'stored' AND device_id IS NOT NULL GROUP BY device_id) g ON g.device_id = t.id
		WHERE `+where+` ORDER BY t.name, t.id`, within.Args...)
	if err != nil {
		return nil, fmt.Errorf("store: backup health: %w", err)
	}
	defer rows.Close()
	var out []BackupHealth
	for rows.Next() {
		var b BackupHealth
		var override sql.NullFloat64
		var confirmed sql.NullString
		var version sql.NullInt64
		if err := rows.Scan(&b.DeviceID, &b.DeviceName, &b.SiteID, &b.SiteName, &b.SiteSlug, &override, &confirmed, &version); err != nil {
			return nil, fmt.Errorf("store: backup health: %w", err)
		}
		b.Limit = limit
		if override.Valid && override.Float64 > 0 && !math.IsInf(override.Float64, 0) {
			b.Limit, b.SiteOverride = time.Duration(override.Float64*float64(time.Hour)), true
		}
		b.LatestVersion = version.Int64
		b.LastGood = ParseStamp(confirmed.String)
		switch {
		case b.LastGood.IsZero():
			b.Status = BackupNever
		case now.Sub(b.LastGood) > b.Limit:
			b.Age, b.Status = now.Sub(b.LastGood), BackupStale
		default:
			b.Age, b.Status = now.Sub(b.LastGood), BackupOK
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// checkSiteFields accepts a site's custom fields whose backup_max_age_hours, when set,
// is a positive number of hours.
func checkSiteFields(v any) (any, error) {
	cf, _ := v.(map[string]any)
	x, ok := cf[SiteBackupLimit]
	if !ok || x == nil {
		return v, nil
	}
	if n, isNum := x.(float64); !isNum || n <= 0 || n > 24*366 {
		return nil, Problem(SiteBackupLimit + ": a number of hours, more than 0 (the site's devices' config backup age limit).")
	}
	return v, nil
}
