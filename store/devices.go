package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"net/netip"
	"strings"
)

// Devices is dcim.device: the targets of command execution.
var Devices = declare(&Model{
	Type: TypeDevice, Name: "Device", Table: "devices", DefaultOrder: "name",
	Fields: append([]Field{
		nameField(64, "unique per site"),
		{Name: "site", Column: "site_id", Kind: KindInt, Rel: TypeSite, Required: true, Sort: true},
		{Name: "platform", Column: "platform_id", Kind: KindInt, Rel: TypePlatform, Null: true, Sort: true,
			Doc: "decides the SSH driver and which commands can run"},
		{Name: "status", Column: "status", Kind: KindString, Choices: DeviceStatuses, Default: "active", Labeled: true,
			Filter: FilterLookups, Sort: true},
		mgmtIPField,
		sshPortField,
		{Name: "primary_ip4", Column: "primary_ip4_id", Kind: KindInt, Rel: TypeIPAddress, Null: true, Label: "Primary IPv4",
			Doc: "an IPv4 address assigned to one of this device's interfaces"},
		{Name: "primary_ip6", Column: "primary_ip6_id", Kind: KindInt, Rel: TypeIPAddress, Null: true, Label: "Primary IPv6",
			Doc: "an IPv6 address assigned to one of this device's interfaces"},
		{Name: "primary_ip", Kind: KindInt, Rel: TypeIPAddress, Null: true, Access: ReadOnly, Compute: primaryIP,
			Doc: "primary_ip4 if set, else primary_ip6: the address SSH connects to"},
		description(200),
		tagsField("device_tags", "device_id"),
		customFields("ssh_port (an integer 1–65535) sets the SSH port, default 22", checkSSHPort),
		{Name: "legacy_algorithms", Column: "legacy_algorithms", Kind: KindBool, Local: true, Label: "Offer legacy SSH algorithms",
			Doc: "also offer legacy SSH algorithms to this device (its platform's setting also counts)"},
		{Name: "host_key", Column: "host_key", Kind: KindString, Access: Internal},
		{Name: "host_key_fingerprint", Kind: KindString, Access: ReadOnly, Compute: hostKeyFingerprint,
			Doc: `SHA256 fingerprint of the SSH host key trusted on first use, "" when none; clear it with DELETE …/host-key/`},
	}, append(targetOverrides("this device (over its platform's)"), netboxFields()...)...),
	Filters: map[string]Filter{
		"site_id":        {Path: "site", Lookups: true, Doc: "site id"},
		"site":           {Path: "site__slug", Lookups: true, Doc: "site slug"},
		"platform_id":    {Path: "platform", Lookups: true, Doc: "platform id (null for none)"},
		"platform":       {Path: "platform__slug", Lookups: true, Doc: "platform slug"},
		"tag":            {Path: "tags__slug", Lookups: true, Doc: "tag slug"},
		"tag_id":         {Path: "tags", Lookups: true, Doc: "tag id"},
		"primary_ip4_id": {Path: "primary_ip4", Doc: "primary IPv4 address id"},
		"primary_ip6_id": {Path: "primary_ip6", Doc: "primary IPv6 address id"},
		"has_primary_ip": {SQL: boolFilter("(t.primary_ip4_id IS NOT NULL OR t.primary_ip6_id IS NOT NULL)"), Kind: KindBool,
			Doc: "true: devices with a primary IPv4 or IPv6 address"},
		"mgmt_ip": {SQL: mgmtIPFilter, Kind: KindString,
			Doc: "management (primary) IP address, with or without its prefix length: 192.0.2.11 or 192.0.2.11/24"},
	},
	// A person looks a device up by the address they reach it at, as NetBox's device
	// search does: ?q= matches the start of its primary IP addresses too.
	SearchAlso: func(s string) Expr {
		return primaryIPWhere(`ip.address LIKE ? ESCAPE '\'`, likeEscape(s)+"%")
	},
	Write: writeDevice,
	// Its logs keep no device: their counters move to key 0 with them.
	Deleted: func(ctx context.Context, tx *sql.Tx, old Row) error {
		return logKeyGone(ctx, tx, "device_key", old.ID())
	},
})

// primaryIPWhere is the condition that one of a device's primary IP addresses (ip)
// meets cond.
func primaryIPWhere(cond string, args ...any) Expr {
	return Expr{SQL: `EXISTS (SELECT 1 FROM ip_addresses ip WHERE ip.id IN (t.primary_ip4_id, t.primary_ip6_id) AND ` + cond + `)`, Args: args}
}

// mgmtIPFilter is ?mgmt_ip=: a primary IP address equal to the value, its prefix length
// given or not. Several values OR together.
func mgmtIPFilter(vals []string) (Expr, error) {
	var ors []Expr
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if a, err := netip.ParseAddr(v); err == nil {
			ors = append(ors, primaryIPWhere(`(ip.address = ? OR ip.address LIKE ? ESCAPE '\')`, a.String(), likeEscape(a.String())+"/%"))
			continue
		}
		if p, err := netip.ParsePrefix(v); err == nil {
			ors = append(ors, primaryIPWhere(`ip.address = ?`, p.String()))
			continue
		}
		return Expr{}, problemf("%q is not an IP address (192.0.2.11, or with its prefix length, 192.0.2.11/24).", v)
	}
	return Or(ors...), nil
}

// DeviceStatuses are the values of a device's status.
var DeviceStatuses = choices("active", "offline", "planned", "staged", "failed", "inventory", "decommissioning")

// primaryIP is the address SSH connects to: the IPv4 primary if set, else the IPv6 one.
func primaryIP(r Row) any {
	for _, k := range []string{"primary_ip4", "primary_ip6"} {
		if ip, ok := r[k].(Row); ok {
			return ip
		}
	}
	return nil
}

func hostKeyFingerprint(r Row) any {
	line, _ := r["host_key"].(string)
	return HostKeyFingerprint(line)
}

// HostKeyFingerprint is OpenSSH's SHA256 fingerprint of a host key (an authorized_keys
// line), "" when none.
func HostKeyFingerprint(line string) string {
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return ""
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(blob)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// checkPrimaryIPs makes sure the primary IPs a write sets are assigned to one of the
// device's interfaces, each in its family.
func checkPrimaryIPs(ctx context.Context, tx *sql.Tx, id int64, v Values, _ Row) error {
	for _, p := range []struct {
		field  string
		family int
	}{{"primary_ip4", 4}, {"primary_ip6", 6}} {
		if ip, ok := v[p.field].(int64); ok {
			if err := checkPrimaryIP(ctx, tx, id, ip, p.family, p.field); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPrimaryIP makes sure an address can be the device's primary of that family: it
// must be assigned to one of the device's interfaces.
func checkPrimaryIP(ctx context.Context, q rowQueryer, deviceID, ipID int64, family int, field string) error {
	var address string
	var owner sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT ip.address, i.device_id FROM ip_addresses ip
		LEFT JOIN interfaces i ON i.id = ip.assigned_object_id WHERE ip.id = ?`, ipID).Scan(&address, &owner)
	if errors.Is(err, sql.ErrNoRows) {
		return &FieldError{Field: field, Err: problemf("Related object not found using the provided numeric ID: %d", ipID)}
	}
	if err != nil {
		return err
	}
	if AddressFamily(address) != family {
		return &FieldError{Field: field, Err: problemf("%s is not an IPv%d address.", address, family)}
	}
	if !owner.Valid || owner.Int64 != deviceID {
		return &FieldError{Field: field, Err: problemf("The specified IP address (%s) is not assigned to this device.", address)}
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
