package handlers

import (
	"context"
	"database/sql"
	"testing"

	"fieldkit/store"
)

// The toolkit tests insert inventory rows with plain SQL so that they do not depend on
// the inventory API.

func tkExec(t testing.TB, db *store.DB, query string, args ...any) int64 {
	t.Helper()
	var id int64
	err := db.Write(context.Background(), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(context.Background(), query, args...)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return id
}

const tkNow = "2026-01-01T00:00:00.000000Z"

func tkPlatform(t testing.TB, db *store.DB, name, slug string) int64 {
	return tkExec(t, db, `INSERT INTO platforms (name, slug, created, last_updated) VALUES (?, ?, ?, ?)`, name, slug, tkNow, tkNow)
}

func tkSite(t testing.TB, db *store.DB, name, slug string) int64 {
	return tkExec(t, db, `INSERT INTO sites (name, slug, created, last_updated) VALUES (?, ?, ?, ?)`, name, slug, tkNow, tkNow)
}

func tkDevice(t testing.TB, db *store.DB, name string, siteID, platformID int64) int64 {
	return tkExec(t, db, `INSERT INTO devices (name, site_id, platform_id, created, last_updated) VALUES (?, ?, ?, ?, ?)`,
		name, siteID, platformID, tkNow, tkNow)
}

func tkTag(t testing.TB, db *store.DB, name, slug string) int64 {
	return tkExec(t, db, `INSERT INTO tags (name, slug, created, last_updated) VALUES (?, ?, ?, ?)`, name, slug, tkNow, tkNow)
}
