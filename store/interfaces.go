package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Interface is a dcim.interface with its device's and VLANs' names.
type Interface struct {
	ID                   int64
	DeviceID             int64
	DeviceName           string
	Name, Type           string
	Enabled              bool
	Description          string
	Mode                 string // "", access, tagged, tagged-all
	UntaggedVLAN         *VLANRef
	TaggedVLANs          []VLANRef
	Created, LastUpdated time.Time
}

// VLANRef is the brief form of a VLAN.
type VLANRef struct {
	ID, VID int64
	Name    string
}

// InterfaceInput is a create or a partial update: nil (or unset) fields are left as
// they are.
type InterfaceInput struct {
	DeviceID                      *int64
	Name, Type, Description, Mode *string
	Enabled                       *bool
	UntaggedVLAN                  OptRef
	TaggedVLANs                   *[]int64
}

// InterfaceModes are the 802.1Q modes of an interface; "" is none.
var InterfaceModes = []string{"", "access", "tagged", "tagged-all"}

// Interfaces loads interfaces by id, with their VLANs.
func (db *DB) Interfaces(ctx context.Context, ids []int64) ([]Interface, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT i.id, i.device_id, d.name, i.name, i.type, i.enabled, i.description,
		i.mode, v.id, v.vid, v.name, i.created, i.last_updated
		FROM interfaces i JOIN devices d ON d.id = i.device_id LEFT JOIN vlans v ON v.id = i.untagged_vlan_id
		WHERE i.id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: interfaces: %w", err)
	}
	defer rows.Close()
	var out []Interface
	for rows.Next() {
		var it Interface
		var vid, vvid sql.NullInt64
		var vname sql.NullString
		var c, u string
		if err := rows.Scan(&it.ID, &it.DeviceID, &it.DeviceName, &it.Name, &it.Type, &it.Enabled, &it.Description,
			&it.Mode, &vid, &vvid, &vname, &c, &u); err != nil {
			return nil, fmt.Errorf("store: interfaces: %w", err)
		}
		if vid.Valid {
			it.UntaggedVLAN = &VLANRef{ID: vid.Int64, VID: vvid.Int64, Name: vname.String}
		}
		it.Created, it.LastUpdated = ParseStamp(c), ParseStamp(u)
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	tagged, err := db.taggedVLANs(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].TaggedVLANs = tagged[out[i].ID]
	}
	return out, nil
}

func (db *DB) taggedVLANs(ctx context.Context, ids []int64) (map[int64][]VLANRef, error) {
	return grouped(ctx, db, "tagged vlans", `SELECT l.interface_id, v.id, v.vid, v.name FROM interface_tagged_vlans l
		JOIN vlans v ON v.id = l.vlan_id WHERE l.interface_id IN (`+placeholders(len(ids))+`)
		ORDER BY l.interface_id, v.vid, v.id`, int64Args(ids), func(v *VLANRef) []any { return []any{&v.ID, &v.VID, &v.Name} })
}

// ifaceState is the part of an interface that the 802.1Q rules look at.
type ifaceState struct {
	deviceID int64
	mode     string
	untagged *int64
	tagged   []int64
}

// CreateInterface inserts an interface that must fall within guard.
func (db *DB) CreateInterface(ctx context.Context, in InterfaceInput, guard Scope) (int64, error) {
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		st := ifaceState{deviceID: deref(in.DeviceID)}
		if err := st.apply(ctx, tx, in); err != nil {
			return err
		}
		typ, enabled := "other", true
		if in.Type != nil {
			typ = *in.Type
		}
		if in.Enabled != nil {
			enabled = *in.Enabled
		}
		now := Stamp(db.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO interfaces (device_id, name, type, enabled, description, mode,
			untagged_vlan_id, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			st.deviceID, deref(in.Name), typ, enabled, deref(in.Description), st.mode, st.untagged, now, now)
		if err != nil {
			return constraintErr(err, "interface")
		}
		id, _ = res.LastInsertId()
		if err := setLinks(ctx, tx, "interface_tagged_vlans", "interface_id", "vlan_id", id, st.tagged); err != nil {
			return constraintErr(err, "interface tagged vlans")
		}
		return CheckScope(ctx, tx, TypeInterface, id, guard)
	})
	return id, err
}

// UpdateInterface changes the fields set in in; the result must stay within guard.
func (db *DB) UpdateInterface(ctx context.Context, id int64, in InterfaceInput, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		var st ifaceState
		var untagged sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT device_id, mode, untagged_vlan_id FROM interfaces WHERE id = ?`, id).
			Scan(&st.deviceID, &st.mode, &untagged)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("interface %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		st.untagged = idPtr(untagged)
		if st.tagged, err = linkedIDs(ctx, tx, "interface_tagged_vlans", "interface_id", "vlan_id", id); err != nil {
			return err
		}
		if err := st.apply(ctx, tx, in); err != nil {
			return err
		}
		set := Set{}
		set.Val("device_id", st.deviceID)
		set.Str("name", in.Name)
		set.Str("type", in.Type)
		set.Str("description", in.Description)
		if in.Enabled != nil {
			set.Val("enabled", *in.Enabled)
		}
		set.Val("mode", st.mode)
		set.Val("untagged_vlan_id", st.untagged)
		if err := set.Apply(ctx, tx, "interfaces", id, db.now()); err != nil {
			return constraintErr(err, "interface")
		}
		if err := setLinks(ctx, tx, "interface_tagged_vlans", "interface_id", "vlan_id", id, st.tagged); err != nil {
			return constraintErr(err, "interface tagged vlans")
		}
		return CheckScope(ctx, tx, TypeInterface, id, guard)
	})
}

// apply merges in into the state and enforces NetBox's 802.1Q rules: an untagged VLAN
// needs a mode, tagged VLANs need mode "tagged", and every VLAN must be global or at
// the device's site. VLANs a mode change makes meaningless are dropped, as NetBox does.
func (st *ifaceState) apply(ctx context.Context, tx *sql.Tx, in InterfaceInput) error {
	if in.DeviceID != nil {
		st.deviceID = *in.DeviceID
	}
	if in.Mode != nil {
		st.mode = *in.Mode
	}
	if in.UntaggedVLAN.Set {
		st.untagged = in.UntaggedVLAN.ID
	}
	if in.TaggedVLANs != nil {
		st.tagged = *in.TaggedVLANs
	}
	if st.mode == "" && st.untagged != nil {
		if in.UntaggedVLAN.Set {
			return &FieldError{Field: "untagged_vlan", Err: errors.New("An untagged VLAN needs the interface's mode set to access or tagged.")}
		}
		st.untagged = nil
	}
	if st.mode != "tagged" && len(st.tagged) > 0 {
		if in.TaggedVLANs != nil {
			return &FieldError{Field: "tagged_vlans", Err: errors.New("Tagged VLANs need the interface's mode set to tagged.")}
		}
		st.tagged = nil
	}
	var site int64
	if err := tx.QueryRowContext(ctx, `SELECT site_id FROM devices WHERE id = ?`, st.deviceID).Scan(&site); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return &FieldError{Field: "device", Err: fmt.Errorf("Related object not found using the provided numeric ID: %d", st.deviceID)}
		}
		return err
	}
	check := func(field string, vlan int64) error {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM vlans WHERE id = ? AND (site_id IS NULL OR site_id = ?)`, vlan, site).Scan(&n)
		if err == nil && n == 0 {
			err = &FieldError{Field: field, Err: fmt.Errorf("VLAN %d must belong to the interface's device's site or be global.", vlan)}
		}
		return err
	}
	if st.untagged != nil {
		if err := check("untagged_vlan", *st.untagged); err != nil {
			return err
		}
	}
	for _, v := range st.tagged {
		if err := check("tagged_vlans", v); err != nil {
			return err
		}
	}
	return nil
}

// linkedIDs reads one owner's rows of a link table inside a transaction.
func linkedIDs(ctx context.Context, tx *sql.Tx, table, local, remote string, id int64) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+remote+` FROM `+table+` WHERE `+local+` = ? ORDER BY `+remote, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var x int64
		if err := rows.Scan(&x); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// DeleteInterface deletes an interface; its IP addresses become unassigned.
func (db *DB) DeleteInterface(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "interfaces", id)
}
