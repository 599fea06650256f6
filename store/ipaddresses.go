package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// IPAddress is an ipam.ipaddress; InterfaceID is nil when it is not assigned.
type IPAddress struct {
	ID                           int64
	Address                      string // CIDR with host bits, "10.0.0.1/24"
	Status, DNSName, Description string
	InterfaceID                  *int64
	InterfaceName                string
	DeviceID                     int64
	DeviceName                   string
	Created, LastUpdated         time.Time
}

// IPAddressInput is a create or a partial update: nil (or unset) fields are left as
// they are. Address must already be normalised (see NormalizeAddress).
type IPAddressInput struct {
	Address, Status, DNSName, Description *string
	Interface                             OptRef
}

// IPStatuses are the values of an IP address's status.
var IPStatuses = []string{"active", "reserved", "deprecated", "dhcp", "slaac"}

// AssignedInterface is the assigned_object_type of an address on an interface.
const AssignedInterface = "dcim.interface"

// NormalizeAddress parses an address with its prefix length, keeping the host bits
// ("10.0.0.1/24" stays as is), and returns its canonical text.
func NormalizeAddress(s string) (string, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return "", fmt.Errorf("%w: %q is not an address with a prefix length", ErrBadValue, s)
	}
	return p.String(), nil
}

// addressKey orders addresses numerically: IPv4 before IPv6, then address, then length.
func addressKey(address string) string {
	p, err := netip.ParsePrefix(address)
	if err != nil {
		return ""
	}
	a := p.Addr()
	if a.Is4() {
		b := a.As4()
		return fmt.Sprintf("4%s%02x", hex.EncodeToString(b[:]), p.Bits())
	}
	b := a.As16()
	return fmt.Sprintf("6%s%02x", hex.EncodeToString(b[:]), p.Bits())
}

// IPAddresses loads addresses by id, with their interface and its device.
func (db *DB) IPAddresses(ctx context.Context, ids []int64) ([]IPAddress, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT ip.id, ip.address, ip.status, ip.dns_name, ip.description,
		i.id, i.name, d.id, d.name, ip.created, ip.last_updated
		FROM ip_addresses ip LEFT JOIN interfaces i ON i.id = ip.assigned_object_id
		LEFT JOIN devices d ON d.id = i.device_id
		WHERE ip.id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: ip addresses: %w", err)
	}
	defer rows.Close()
	var out []IPAddress
	for rows.Next() {
		var ip IPAddress
		var iid, did sql.NullInt64
		var iname, dname sql.NullString
		var c, u string
		if err := rows.Scan(&ip.ID, &ip.Address, &ip.Status, &ip.DNSName, &ip.Description, &iid, &iname, &did, &dname, &c, &u); err != nil {
			return nil, fmt.Errorf("store: ip addresses: %w", err)
		}
		ip.InterfaceID, ip.InterfaceName = idPtr(iid), iname.String
		ip.DeviceID, ip.DeviceName = did.Int64, dname.String
		ip.Created, ip.LastUpdated = ParseStamp(c), ParseStamp(u)
		out = append(out, ip)
	}
	return out, rows.Err()
}

// CreateIPAddress inserts an address that must fall within guard.
func (db *DB) CreateIPAddress(ctx context.Context, in IPAddressInput, guard Scope) (int64, error) {
	status := "active"
	if in.Status != nil {
		status = *in.Status
	}
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		addr := deref(in.Address)
		res, err := tx.ExecContext(ctx, `INSERT INTO ip_addresses (address, address_key, status, dns_name, description,
			assigned_object_type, assigned_object_id, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			addr, addressKey(addr), status, deref(in.DNSName), deref(in.Description),
			assignedType(in.Interface.ID), in.Interface.ID, now, now)
		if err != nil {
			return constraintErr(err, "ip address")
		}
		id, _ = res.LastInsertId()
		return CheckScope(ctx, tx, TypeIPAddress, id, guard)
	})
	return id, err
}

func assignedType(iface *int64) any {
	if iface == nil {
		return nil
	}
	return AssignedInterface
}

// UpdateIPAddress changes the fields set in in; the result must stay within guard. An
// address that is a device's primary IP must stay on that device and in its family.
func (db *DB) UpdateIPAddress(ctx context.Context, id int64, in IPAddressInput, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		if in.Address != nil {
			set.Val("address", *in.Address)
			set.Val("address_key", addressKey(*in.Address))
		}
		set.Str("status", in.Status)
		set.Str("dns_name", in.DNSName)
		set.Str("description", in.Description)
		if in.Interface.Set {
			set.Val("assigned_object_type", assignedType(in.Interface.ID))
			set.Val("assigned_object_id", in.Interface.ID)
		}
		if err := set.Apply(ctx, tx, "ip_addresses", id, db.now()); err != nil {
			return constraintErr(err, "ip address")
		}
		field := "address"
		if in.Interface.Set {
			field = "assigned_object_id"
		}
		if err := checkStillPrimary(ctx, tx, id, field); err != nil {
			return err
		}
		return CheckScope(ctx, tx, TypeIPAddress, id, guard)
	})
}

func checkStillPrimary(ctx context.Context, tx *sql.Tx, ipID int64, field string) error {
	var devID int64
	var family int
	err := tx.QueryRowContext(ctx, `SELECT id, CASE WHEN primary_ip4_id = ? THEN 4 ELSE 6 END FROM devices
		WHERE primary_ip4_id = ? OR primary_ip6_id = ? LIMIT 1`, ipID, ipID, ipID).Scan(&devID, &family)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := checkPrimaryIP(ctx, tx, devID, ipID, family, field); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Err = errors.New("The address is the primary IP of its device: unset it there first.")
		}
		return err
	}
	return nil
}

// DeleteIPAddress deletes an address; a device it was the primary IP of loses it.
func (db *DB) DeleteIPAddress(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "ip_addresses", id)
}
