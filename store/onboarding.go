package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A device is reached at its primary IP, which NetBox keeps on one of its interfaces.
// Onboarding one device took a site, the device, an interface, an address on it and
// the device again to pick the address; the device's mgmt_ip and ssh_port fields take
// the address and the port directly, and FieldKit keeps the interface and the address
// behind them.

// MgmtInterface is the interface FieldKit creates to hold a management address written
// through a device's mgmt_ip (type virtual, as NetBox names a logical interface).
const MgmtInterface = "mgmt0"

// mgmtIPField is a device's management address: its primary IP, written with its prefix
// length.
var mgmtIPField = Field{Name: "mgmt_ip", Kind: KindString, Null: true, Default: "", MaxLen: 64, Check: checkAddress,
	Compute: mgmtIP, Label: "Management IP",
	Doc: "the address SSH connects to, with its prefix length (10.0.0.1/24): FieldKit puts it on the interface " +
		MgmtInterface + " (created when missing) and makes it the primary IP of its family; an address already on " +
		"one of the device's interfaces is used as it is; null or \"\" removes the management address. Reads the " +
		"primary IP (IPv4 first)"}

// sshPortField is custom_fields.ssh_port as a field of its own.
var sshPortField = Field{Name: "ssh_port", Kind: KindInt, Null: true, Min: 1, Max: 65535, Compute: sshPort,
	Label: "SSH port", Doc: "the port of the device's SSH server, kept in custom_fields.ssh_port; null: 22"}

func mgmtIP(r Row) any {
	if ip, ok := primaryIP(r).(Row); ok {
		return ip["address"]
	}
	return nil
}

// sshPort is custom_fields.ssh_port, or null when it is not set (22).
func sshPort(r Row) any {
	cf := customFieldsOf(r)
	if cf["ssh_port"] == nil { // unset, or null as NetBox serves an empty custom field
		return nil
	}
	return int64(SSHPort(cf))
}

// customFieldsOf decodes a loaded row's custom fields.
func customFieldsOf(r Row) map[string]any {
	var cf map[string]any
	switch x := r["custom_fields"].(type) {
	case json.RawMessage:
		_ = json.Unmarshal(x, &cf) // stored by this package from a JSON object
	case map[string]any:
		cf = x
	}
	return cf
}

// writeDevice applies what a write of a device says beyond its columns: the management
// address and the SSH port, then the rule that primary IPs are on its interfaces.
func writeDevice(ctx context.Context, tx *sql.Tx, id int64, v Values, old Row) error {
	if a, ok := v["mgmt_ip"]; ok {
		fam := 0
		if s, isStr := a.(string); isStr {
			fam = AddressFamily(s)
		}
		if _, both := v[fmt.Sprintf("primary_ip%d", fam)]; both && fam != 0 {
			return &FieldError{Field: "mgmt_ip", Err: problemf("Set mgmt_ip or primary_ip%d, not both.", fam)}
		}
		s, _ := a.(string)
		if err := setMgmtIP(ctx, tx, id, s); err != nil {
			return err
		}
	}
	if p, ok := v["ssh_port"]; ok {
		q := `UPDATE devices SET custom_fields = json_remove(custom_fields, '$.ssh_port') WHERE id = ?`
		args := []any{id}
		if n, isInt := p.(int64); isInt {
			q, args = `UPDATE devices SET custom_fields = json_set(custom_fields, '$.ssh_port', ?) WHERE id = ?`, []any{n, id}
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return checkPrimaryIPs(ctx, tx, id, v, old)
}

// setMgmtIP makes address (with prefix length) the device's primary IP of its family,
// or with "" removes the management address.
func setMgmtIP(ctx context.Context, tx *sql.Tx, dev int64, address string) error {
	if address == "" {
		for _, fam := range []int{4, 6} {
			if err := dropMgmtIP(ctx, tx, dev, fam); err != nil {
				return err
			}
		}
		return nil
	}
	fam := AddressFamily(address)
	col := fmt.Sprintf("primary_ip%d_id", fam)
	// An address already on one of the device's interfaces is chosen as it is.
	var ip int64
	err := tx.QueryRowContext(ctx, `SELECT ip.id FROM ip_addresses ip JOIN interfaces i ON i.id = ip.assigned_object_id
		WHERE i.device_id = ? AND ip.address = ? ORDER BY i.name = ? DESC, ip.id LIMIT 1`, dev, address, MgmtInterface).Scan(&ip)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	found := err == nil
	cur, onMgmt, err := primaryOnMgmt(ctx, tx, dev, fam)
	if err != nil {
		return err
	}
	now := Stamp(time.Now().UTC())
	switch {
	case found:
		// The address FieldKit kept on mgmt0 until now is not needed any more.
		if onMgmt && cur != ip {
			if _, err := tx.ExecContext(ctx, `DELETE FROM ip_addresses WHERE id = ?`, cur); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE devices SET `+col+` = ? WHERE id = ?`, ip, dev)
	case onMgmt:
		// The management address of this family on mgmt0 moves to the new address.
		_, err = tx.ExecContext(ctx, `UPDATE ip_addresses SET address = ?, address_key = ?, last_updated = ? WHERE id = ?`,
			address, addressKey(address), now, cur)
	default:
		ip, err = addMgmtIP(ctx, tx, dev, address, now)
		if err == nil {
			_, err = tx.ExecContext(ctx, `UPDATE devices SET `+col+` = ? WHERE id = ?`, ip, dev)
		}
	}
	if err != nil {
		return err
	}
	// The other family's management address goes: mgmt_ip is one address.
	return dropMgmtIP(ctx, tx, dev, 10-fam)
}

// primaryOnMgmt is the device's primary IP of a family and whether it sits on mgmt0.
func primaryOnMgmt(ctx context.Context, tx *sql.Tx, dev int64, fam int) (int64, bool, error) {
	var ip sql.NullInt64
	var iface sql.NullString
	err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT d.primary_ip%d_id, i.name FROM devices d
		LEFT JOIN ip_addresses ip ON ip.id = d.primary_ip%d_id
		LEFT JOIN interfaces i ON i.id = ip.assigned_object_id AND i.device_id = d.id WHERE d.id = ?`, fam, fam), dev).Scan(&ip, &iface)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("device %d: %w", dev, ErrNotFound)
	}
	return ip.Int64, ip.Valid && iface.String == MgmtInterface, err
}

// dropMgmtIP removes the device's primary IP of a family: deleted when it sits on
// mgmt0 (FieldKit made it), only unset when it is on an interface of the user's.
func dropMgmtIP(ctx context.Context, tx *sql.Tx, dev int64, fam int) error {
	ip, onMgmt, err := primaryOnMgmt(ctx, tx, dev, fam)
	if err != nil || ip == 0 {
		return err
	}
	if onMgmt {
		_, err = tx.ExecContext(ctx, `DELETE FROM ip_addresses WHERE id = ?`, ip)
		return err
	}
	_, err = tx.ExecContext(ctx, fmt.Sprintf(`UPDATE devices SET primary_ip%d_id = NULL WHERE id = ?`, fam), dev)
	return err
}

// addMgmtIP puts an address on the device's mgmt0, creating the interface when missing.
func addMgmtIP(ctx context.Context, tx *sql.Tx, dev int64, address, now string) (int64, error) {
	var iface int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM interfaces WHERE device_id = ? AND name = ?`, dev, MgmtInterface).Scan(&iface)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.QueryRowContext(ctx, `INSERT INTO interfaces (device_id, name, type, created, last_updated)
			VALUES (?, ?, 'virtual', ?, ?) RETURNING id`, dev, MgmtInterface, now, now).Scan(&iface)
	}
	if err != nil {
		return 0, err
	}
	var ip int64
	err = tx.QueryRowContext(ctx, `INSERT INTO ip_addresses (address, address_key, assigned_object_type, assigned_object_id,
		created, last_updated) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, address, addressKey(address), AssignedInterface, iface, now, now).Scan(&ip)
	return ip, err
}
