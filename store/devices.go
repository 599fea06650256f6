package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Device is a dcim.device with the names of what it refers to.
type Device struct {
	ID                   int64
	Name                 string
	SiteID               int64
	SiteName, SiteSlug   string
	PlatformID           *int64
	PlatformName         string
	PlatformSlug         string
	PlatformDriver       string
	PlatformLegacy       bool
	Status               string
	PrimaryIP4ID         *int64
	PrimaryIP4           string // with prefix length, "" when none
	PrimaryIP6ID         *int64
	PrimaryIP6           string
	Description          string
	CustomFields         map[string]any
	HostKey              string // authorized_keys line of the trusted key, "" when none
	LegacyAlgorithms     bool
	Tags                 []Tag
	Created, LastUpdated time.Time
}

// OptRef is a nullable reference in a partial update: Set says it was given, and a nil
// ID sets it to null.
type OptRef struct {
	Set bool
	ID  *int64
}

// DeviceInput is a create or a partial update: nil (or unset) fields are left as they are.
type DeviceInput struct {
	Name, Status, Description *string
	SiteID                    *int64
	Platform                  OptRef
	PrimaryIP4, PrimaryIP6    OptRef
	Tags                      *[]int64
	LegacyAlgorithms          *bool
	CustomFields              map[string]any // nil = unchanged
	// MergeCustomFields keeps stored keys CustomFields does not name (PATCH); otherwise
	// CustomFields replaces them all.
	MergeCustomFields bool
}

// DeviceStatuses are the values of a device's status.
var DeviceStatuses = []string{"active", "offline", "planned", "staged", "failed"}

const deviceSelect = `SELECT d.id, d.name, d.site_id, s.name, s.slug, d.platform_id, p.name, p.slug, p.driver,
	p.legacy_algorithms, d.status, d.primary_ip4_id, i4.address, d.primary_ip6_id, i6.address, d.description,
	d.custom_fields, d.host_key, d.legacy_algorithms, d.created, d.last_updated
	FROM devices d JOIN sites s ON s.id = d.site_id
	LEFT JOIN platforms p ON p.id = d.platform_id
	LEFT JOIN ip_addresses i4 ON i4.id = d.primary_ip4_id
	LEFT JOIN ip_addresses i6 ON i6.id = d.primary_ip6_id`

// Devices loads devices by id, with their tags.
func (db *DB) Devices(ctx context.Context, ids []int64) ([]Device, error) {
	rows, err := db.r.QueryContext(ctx, deviceSelect+` WHERE d.id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: devices: %w", err)
	}
	defer rows.Close()
	var out []Device
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, fmt.Errorf("store: devices: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: devices: %w", err)
	}
	tags, err := db.tagsOf(ctx, "device_tags", "device_id", ids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Tags = tags[out[i].ID]
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanDevice(s scanner) (Device, error) {
	var d Device
	var platformID, ip4ID, ip6ID sql.NullInt64
	var pName, pSlug, pDriver, ip4, ip6 sql.NullString
	var pLegacy sql.NullBool
	var cf, c, u string
	err := s.Scan(&d.ID, &d.Name, &d.SiteID, &d.SiteName, &d.SiteSlug, &platformID, &pName, &pSlug, &pDriver,
		&pLegacy, &d.Status, &ip4ID, &ip4, &ip6ID, &ip6, &d.Description, &cf, &d.HostKey, &d.LegacyAlgorithms, &c, &u)
	if err != nil {
		return d, err
	}
	d.PlatformID, d.PrimaryIP4ID, d.PrimaryIP6ID = idPtr(platformID), idPtr(ip4ID), idPtr(ip6ID)
	d.PlatformName, d.PlatformSlug, d.PlatformDriver = pName.String, pSlug.String, pDriver.String
	d.PlatformLegacy = pLegacy.Bool
	d.PrimaryIP4, d.PrimaryIP6 = ip4.String, ip6.String
	d.CustomFields = map[string]any{}
	_ = json.Unmarshal([]byte(cf), &d.CustomFields) // only this package writes it, always an object
	if d.CustomFields == nil {
		d.CustomFields = map[string]any{}
	}
	d.Created, d.LastUpdated = ParseStamp(c), ParseStamp(u)
	return d, nil
}

func idPtr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// CreateDevice inserts a device that must fall within guard.
func (db *DB) CreateDevice(ctx context.Context, in DeviceInput, guard Scope) (int64, error) {
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		status := "active"
		if in.Status != nil {
			status = *in.Status
		}
		cf, _ := json.Marshal(in.CustomFields)
		if in.CustomFields == nil {
			cf = []byte("{}")
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO devices (name, site_id, platform_id, status, description,
			custom_fields, legacy_algorithms, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			deref(in.Name), deref(in.SiteID), in.Platform.ID, status, deref(in.Description), string(cf),
			deref(in.LegacyAlgorithms), now, now)
		if err != nil {
			return constraintErr(err, "device")
		}
		id, _ = res.LastInsertId()
		return db.finishDevice(ctx, tx, id, in, guard)
	})
	return id, err
}

// UpdateDevice changes the fields set in in; the result must stay within guard.
func (db *DB) UpdateDevice(ctx context.Context, id int64, in DeviceInput, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		set.Str("name", in.Name)
		set.Str("status", in.Status)
		set.Str("description", in.Description)
		if in.SiteID != nil {
			set.Val("site_id", *in.SiteID)
		}
		if in.Platform.Set {
			set.Val("platform_id", in.Platform.ID)
		}
		if in.LegacyAlgorithms != nil {
			set.Val("legacy_algorithms", *in.LegacyAlgorithms)
		}
		if in.CustomFields != nil {
			cf, err := mergedCustomFields(ctx, tx, id, in)
			if err != nil {
				return err
			}
			set.Val("custom_fields", cf)
		}
		if err := set.Apply(ctx, tx, "devices", id, db.now()); err != nil {
			return constraintErr(err, "device")
		}
		return db.finishDevice(ctx, tx, id, in, guard)
	})
}

func mergedCustomFields(ctx context.Context, tx *sql.Tx, id int64, in DeviceInput) (string, error) {
	cf := map[string]any{}
	if in.MergeCustomFields {
		var raw string
		err := tx.QueryRowContext(ctx, `SELECT custom_fields FROM devices WHERE id = ?`, id).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			return "", fmt.Errorf("device %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return "", err
		}
		_ = json.Unmarshal([]byte(raw), &cf)
		if cf == nil {
			cf = map[string]any{}
		}
	}
	for k, v := range in.CustomFields {
		cf[k] = v
	}
	b, err := json.Marshal(cf)
	return string(b), err
}

// finishDevice writes the parts of a device write that need its id: tags, primary IPs
// (checked against the device's interfaces), and the scope check.
func (db *DB) finishDevice(ctx context.Context, tx *sql.Tx, id int64, in DeviceInput, guard Scope) error {
	if in.Tags != nil {
		if err := setLinks(ctx, tx, "device_tags", "device_id", "tag_id", id, *in.Tags); err != nil {
			return constraintErr(err, "device tags")
		}
	}
	for _, p := range []struct {
		field  string
		ref    OptRef
		family int
	}{{"primary_ip4", in.PrimaryIP4, 4}, {"primary_ip6", in.PrimaryIP6, 6}} {
		if !p.ref.Set {
			continue
		}
		if p.ref.ID != nil {
			if err := checkPrimaryIP(ctx, tx, id, *p.ref.ID, p.family, p.field); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE devices SET `+p.field+`_id = ? WHERE id = ?`, p.ref.ID, id); err != nil {
			return err
		}
	}
	return CheckScope(ctx, tx, TypeDevice, id, guard)
}

// checkPrimaryIP makes sure an address can be the device's primary of that family: it
// must be assigned to one of the device's interfaces.
func checkPrimaryIP(ctx context.Context, q rowQueryer, deviceID, ipID int64, family int, field string) error {
	var address string
	var owner sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT ip.address, i.device_id FROM ip_addresses ip
		LEFT JOIN interfaces i ON i.id = ip.assigned_object_id WHERE ip.id = ?`, ipID).Scan(&address, &owner)
	if errors.Is(err, sql.ErrNoRows) {
		return &FieldError{Field: field, Err: fmt.Errorf("Related object not found using the provided numeric ID: %d", ipID)}
	}
	if err != nil {
		return err
	}
	if AddressFamily(address) != family {
		return &FieldError{Field: field, Err: fmt.Errorf("%s is not an IPv%d address.", address, family)}
	}
	if !owner.Valid || owner.Int64 != deviceID {
		return &FieldError{Field: field, Err: fmt.Errorf("The specified IP address (%s) is not assigned to this device.", address)}
	}
	return nil
}

// AddressFamily is 4 or 6 for a stored address ("10.0.0.1/24"), 0 if it does not parse.
func AddressFamily(address string) int {
	p, err := netip.ParsePrefix(address)
	switch {
	case err != nil:
		return 0
	case p.Addr().Is4():
		return 4
	}
	return 6
}

// DeleteDevice deletes a device: its interfaces go with it, command logs keep their
// history (they store the device's name).
func (db *DB) DeleteDevice(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "devices", id)
}
