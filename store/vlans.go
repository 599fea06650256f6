package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// VLAN is an ipam.vlan; SiteID is nil for a global VLAN.
type VLAN struct {
	ID                   int64
	VID                  int64
	Name                 string
	SiteID               *int64
	SiteName, SiteSlug   string
	Status, Description  string
	Created, LastUpdated time.Time
}

// VLANInput is a create or a partial update: nil (or unset) fields are left as they are.
type VLANInput struct {
	VID                       *int64
	Name, Status, Description *string
	Site                      OptRef
}

// VLANStatuses are the values of a VLAN's (and an IP address's first three) status.
var VLANStatuses = []string{"active", "reserved", "deprecated"}

// VLANs loads VLANs by id.
func (db *DB) VLANs(ctx context.Context, ids []int64) ([]VLAN, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT v.id, v.vid, v.name, v.site_id, s.name, s.slug, v.status,
		v.description, v.created, v.last_updated FROM vlans v LEFT JOIN sites s ON s.id = v.site_id
		WHERE v.id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: vlans: %w", err)
	}
	defer rows.Close()
	var out []VLAN
	for rows.Next() {
		var v VLAN
		var site sql.NullInt64
		var sName, sSlug sql.NullString
		var c, u string
		if err := rows.Scan(&v.ID, &v.VID, &v.Name, &site, &sName, &sSlug, &v.Status, &v.Description, &c, &u); err != nil {
			return nil, fmt.Errorf("store: vlans: %w", err)
		}
		v.SiteID, v.SiteName, v.SiteSlug = idPtr(site), sName.String, sSlug.String
		v.Created, v.LastUpdated = ParseStamp(c), ParseStamp(u)
		out = append(out, v)
	}
	return out, rows.Err()
}

// CreateVLAN inserts a VLAN that must fall within guard.
func (db *DB) CreateVLAN(ctx context.Context, in VLANInput, guard Scope) (int64, error) {
	status := "active"
	if in.Status != nil {
		status = *in.Status
	}
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO vlans (vid, name, site_id, status, description, created, last_updated)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, deref(in.VID), deref(in.Name), in.Site.ID, status, deref(in.Description), now, now)
		if err != nil {
			return constraintErr(err, "vlan")
		}
		id, _ = res.LastInsertId()
		return CheckScope(ctx, tx, TypeVLAN, id, guard)
	})
	return id, err
}

// UpdateVLAN changes the fields set in in; the result must stay within guard.
func (db *DB) UpdateVLAN(ctx context.Context, id int64, in VLANInput, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		if in.VID != nil {
			set.Val("vid", *in.VID)
		}
		set.Str("name", in.Name)
		set.Str("status", in.Status)
		set.Str("description", in.Description)
		if in.Site.Set {
			set.Val("site_id", in.Site.ID)
		}
		if err := set.Apply(ctx, tx, "vlans", id, db.now()); err != nil {
			return constraintErr(err, "vlan")
		}
		return CheckScope(ctx, tx, TypeVLAN, id, guard)
	})
}

// DeleteVLAN deletes a VLAN; interfaces lose it as untagged or tagged VLAN.
func (db *DB) DeleteVLAN(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "vlans", id)
}
