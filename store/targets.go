package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
)

// Target is what the execution layer needs to reach a device.
type Target struct {
	ID               int64
	Name             string
	SiteID           int64
	Host             string // primary IP (IPv4 preferred) without prefix length; "" when none
	Port             int    // custom_fields.ssh_port, else 22
	PlatformID       *int64
	PlatformSlug     string
	PlatformName     string // the platform's name, which also selects TextFSM templates ("Cisco IOS")
	PlatformDriver   string // the platform's configured driver ("" = infer from the slug; exec.DriverFor decides)
	LegacyAlgorithms bool   // enabled on the device or on its platform
	// ConnectTimeout and CommandTimeout (seconds, 0: none) and PromptPattern ("": the
	// driver's) are the device's own, else its platform's.
	ConnectTimeout, CommandTimeout int
	PromptPattern                  string
	// ConfigCommand and ConfigIgnore are the platform's own running-config command and
	// lines to ignore in a config backup ("": the driver's alone).
	ConfigCommand, ConfigIgnore string
}

// DefaultSSHPort is the port of a device without custom_fields.ssh_port.
const DefaultSSHPort = 22

// DeviceTarget loads the connection details of a device. A device without a primary IP
// has an empty Host; the caller decides what that means. It is one query: every
// execution asks for it.
func (db *DB) DeviceTarget(ctx context.Context, id int64) (Target, error) {
	return cached(ctx, db, fmt.Sprint("target\x00", id), func() (Target, error) { return db.deviceTarget(ctx, id) })
}

func (db *DB) deviceTarget(ctx context.Context, id int64) (Target, error) {
	t := Target{ID: id}
	var cf, ip4, ip6, devPrompt, platPrompt string
	var devLegacy, platLegacy bool
	var devConnect, devCommand, platConnect, platCommand, platformID sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT d.name, d.site_id, d.custom_fields, d.legacy_algorithms, d.connect_timeout,
		d.command_timeout, d.prompt_pattern, p.id, coalesce(p.slug, ''), coalesce(p.name, ''), coalesce(p.driver, ''),
		coalesce(p.legacy_algorithms, 0), p.connect_timeout, p.command_timeout, coalesce(p.prompt_pattern, ''),
		coalesce(p.config_command, ''), coalesce(p.config_ignore, ''), coalesce(ip4.address, ''), coalesce(ip6.address, '')
		FROM devices d LEFT JOIN platforms p ON p.id = d.platform_id
		LEFT JOIN ip_addresses ip4 ON ip4.id = d.primary_ip4_id
		LEFT JOIN ip_addresses ip6 ON ip6.id = d.primary_ip6_id
		WHERE d.id = ?`, id).Scan(&t.Name, &t.SiteID, &cf, &devLegacy, &devConnect, &devCommand, &devPrompt, &platformID,
		&t.PlatformSlug, &t.PlatformName, &t.PlatformDriver, &platLegacy, &platConnect, &platCommand, &platPrompt, &t.ConfigCommand, &t.ConfigIgnore, &ip4, &ip6)
	if errors.Is(err, sql.ErrNoRows) {
		return Target{}, fmt.Errorf("device %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Target{}, fmt.Errorf("store: device %d: %w", id, err)
	}
	var fields map[string]any
	_ = json.Unmarshal([]byte(cf), &fields) // written as an object; anything else has no port
	t.Port = SSHPort(fields)
	if platformID.Valid {
		t.PlatformID = &platformID.Int64
	}
	t.LegacyAlgorithms = devLegacy || platLegacy
	t.ConnectTimeout, t.CommandTimeout = override(devConnect, platConnect), override(devCommand, platCommand)
	t.PromptPattern = devPrompt
	if t.PromptPattern == "" {
		t.PromptPattern = platPrompt
	}
	t.Host = PrimaryHost(ip4, ip6)
	return t, nil
}

// override is a device's own value of a setting, else its platform's, 0 when neither
// sets it.
func override(device, platform sql.NullInt64) int {
	for _, v := range []sql.NullInt64{device, platform} {
		if v.Valid {
			return int(v.Int64)
		}
	}
	return 0
}

// PrimaryHost is the address to connect to: the IPv4 primary if set, else the IPv6
// one, without prefix length.
func PrimaryHost(ip4, ip6 string) string {
	for _, a := range []string{ip4, ip6} {
		if p, err := netip.ParsePrefix(a); err == nil {
			return p.Addr().String()
		}
	}
	return ""
}

// SSHPort reads custom_fields.ssh_port (validated on write as 1–65535), else 22.
func SSHPort(cf map[string]any) int {
	if f, ok := cf["ssh_port"].(float64); ok && f == math.Trunc(f) && f >= 1 && f <= 65535 {
		return int(f)
	}
	return DefaultSSHPort
}

// KnownHostKey returns the device's trusted host key (an authorized_keys line), "" when
// none has been stored yet.
func (db *DB) KnownHostKey(ctx context.Context, deviceID int64) (string, error) {
	var key string
	err := db.r.QueryRowContext(ctx, `SELECT host_key FROM devices WHERE id = ?`, deviceID).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("device %d: %w", deviceID, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: host key of device %d: %w", deviceID, err)
	}
	return key, nil
}

// SaveHostKey stores the key seen on first use. It never replaces a different stored
// key: two first connections racing with different keys is exactly what TOFU must
// refuse, so the loser gets ErrConflict.
func (db *DB) SaveHostKey(ctx context.Context, deviceID int64, key string) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE devices SET host_key = ? WHERE id = ? AND (host_key = '' OR host_key = ?)`,
			key, deviceID, key)
		if err != nil {
			return fmt.Errorf("store: save host key of device %d: %w", deviceID, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return nil
		}
		ok, err := exists(ctx, tx, TypeDevice, deviceID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("device %d: %w", deviceID, ErrNotFound)
		}
		return fmt.Errorf("device %d: another host key is already stored: %w", deviceID, ErrConflict)
	})
}

// ClearHostKey forgets the device's trusted key, so the next connection trusts anew.
func (db *DB) ClearHostKey(ctx context.Context, deviceID int64) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE devices SET host_key = '' WHERE id = ?`, deviceID)
		if err != nil {
			return fmt.Errorf("store: clear host key of device %d: %w", deviceID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("device %d: %w", deviceID, ErrNotFound)
		}
		return nil
	})
}

// InterfaceChoice is one of a device's interfaces, for variable choices.
type InterfaceChoice struct {
	ID          int64
	Name        string
	Enabled     bool
	Description string
}

// VLANChoice is a VLAN usable on a device, for variable choices.
type VLANChoice struct {
	ID, VID int64
	Name    string
}

// IPChoice is an address of a device, for variable choices.
type IPChoice struct {
	ID      int64
	Address string // with prefix length
	Status  string
}

func (db *DB) deviceExists(ctx context.Context, id int64) error {
	ok, err := db.Exists(ctx, TypeDevice, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("device %d: %w", id, ErrNotFound)
	}
	return nil
}

// DeviceInterfaces lists a device's interfaces by name. It and DeviceVLANs and
// DeviceIPs are an inventory variable's choices, checked by every execute that has one,
// and kept by the check cache.
func (db *DB) DeviceInterfaces(ctx context.Context, deviceID int64) ([]InterfaceChoice, error) {
	out, err := cached(ctx, db, fmt.Sprint("interfaces\x00", deviceID), func() ([]InterfaceChoice, error) { return db.deviceInterfaces(ctx, deviceID) })
	return slices.Clip(out), err
}

func (db *DB) deviceInterfaces(ctx context.Context, deviceID int64) ([]InterfaceChoice, error) {
	if err := db.deviceExists(ctx, deviceID); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, enabled, description FROM interfaces
		WHERE device_id = ? ORDER BY name, id`, deviceID)
	if err != nil {
		return nil, fmt.Errorf("store: device interfaces: %w", err)
	}
	defer rows.Close()
	out := []InterfaceChoice{}
	for rows.Next() {
		var c InterfaceChoice
		if err := rows.Scan(&c.ID, &c.Name, &c.Enabled, &c.Description); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DeviceVLANs lists the VLANs on a device's interfaces (untagged and tagged); when its
// interfaces carry none, the VLANs of its site. Ordered by VID.
func (db *DB) DeviceVLANs(ctx context.Context, deviceID int64) ([]VLANChoice, error) {
	out, err := cached(ctx, db, fmt.Sprint("vlans\x00", deviceID), func() ([]VLANChoice, error) { return db.deviceVLANs(ctx, deviceID) })
	return slices.Clip(out), err
}

func (db *DB) deviceVLANs(ctx context.Context, deviceID int64) ([]VLANChoice, error) {
	if err := db.deviceExists(ctx, deviceID); err != nil {
		return nil, err
	}
	out, err := db.vlanChoices(ctx, `SELECT v.id, v.vid, v.name FROM vlans v WHERE v.id IN (
		SELECT i.untagged_vlan_id FROM interfaces i WHERE i.device_id = ?
		UNION SELECT l.vlan_id FROM interface_tagged_vlans l JOIN interfaces i ON i.id = l.interface_id WHERE i.device_id = ?)
		ORDER BY v.vid, v.id`, deviceID, deviceID)
	if err != nil || len(out) > 0 {
		return out, err
	}
	return db.vlanChoices(ctx, `SELECT v.id, v.vid, v.name FROM vlans v JOIN devices d ON d.site_id = v.site_id
		WHERE d.id = ? ORDER BY v.vid, v.id`, deviceID)
}

func (db *DB) vlanChoices(ctx context.Context, query string, args ...any) ([]VLANChoice, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: device vlans: %w", err)
	}
	defer rows.Close()
	out := []VLANChoice{}
	for rows.Next() {
		var c VLANChoice
		if err := rows.Scan(&c.ID, &c.VID, &c.Name); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DeviceIPs lists the addresses on a device's interfaces plus its primary IPs, in
// address order.
func (db *DB) DeviceIPs(ctx context.Context, deviceID int64) ([]IPChoice, error) {
	out, err := cached(ctx, db, fmt.Sprint("ips\x00", deviceID), func() ([]IPChoice, error) { return db.deviceIPs(ctx, deviceID) })
	return slices.Clip(out), err
}

func (db *DB) deviceIPs(ctx context.Context, deviceID int64) ([]IPChoice, error) {
	if err := db.deviceExists(ctx, deviceID); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT ip.id, ip.address, ip.status FROM ip_addresses ip WHERE ip.id IN (
		SELECT a.id FROM ip_addresses a JOIN interfaces i ON i.id = a.assigned_object_id WHERE i.device_id = ?
		UNION SELECT primary_ip4_id FROM devices WHERE id = ?
		UNION SELECT primary_ip6_id FROM devices WHERE id = ?)
		ORDER BY ip.address_key, ip.id`, deviceID, deviceID, deviceID)
	if err != nil {
		return nil, fmt.Errorf("store: device ips: %w", err)
	}
	defer rows.Close()
	out := []IPChoice{}
	for rows.Next() {
		var c IPChoice
		if err := rows.Scan(&c.ID, &c.Address, &c.Status); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
