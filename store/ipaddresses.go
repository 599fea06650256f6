package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// IPAddresses is ipam.ipaddress: an address with its prefix length, assigned to an
// interface; a device's primary IP is how FieldKit reaches it.
var IPAddresses = declare(&Model{
	Type: TypeIPAddress, Name: "IPAddress", Table: "ip_addresses", DefaultOrder: "address",
	Fields: []Field{
		{Name: "family", Kind: KindInt, Access: ReadOnly, Nested: true, Compute: family, Schema: "IPFamily",
			Doc: `{"value": 4|6, "label": "IPv4"|"IPv6"}`},
		{Name: "address", Column: "address", Kind: KindString, Required: true, Check: checkAddress, Nested: true, Search: true,
			Doc: "address with prefix length, host bits kept (10.0.0.1/24)"},
		{Name: "address_key", Column: "address_key", Kind: KindString, Access: Internal},
		{Name: "status", Column: "status", Kind: KindString, Choices: IPStatuses, Default: "active", Labeled: true,
			Filter: FilterLookups, Sort: true},
		{Name: "dns_name", Column: "dns_name", Kind: KindString, MaxLen: 255, Check: checkDNSName, Filter: FilterLookups,
			Sort: true, Search: true, Label: "DNS name"},
		description(200),
		{Name: "assigned_object_type", Column: "assigned_object_type", Kind: KindString, Null: true,
			Choices: []Choice{{AssignedInterface, "Interface"}}, Filter: FilterLookups, Doc: "set together with assigned_object_id"},
		{Name: "assigned_object_id", Column: "assigned_object_id", Kind: KindInt, Null: true, Min: 1, Max: 1 << 53,
			Filter: FilterLookups, Label: "Interface", Doc: "interface id"},
		{Name: "assigned_object", Column: "assigned_object_id", Kind: KindInt, Rel: TypeInterface, Null: true,
			Access: ReadOnly, Doc: "the interface, with its device"},
		{Name: "interface", Column: "assigned_object_id", Kind: KindInt, Rel: TypeInterface, Access: Internal},
		tagsField("ip_address_tags", "ip_address_id"),
		customFields("", nil),
		netboxFields()[0], netboxFields()[1],
	},
	Filters: map[string]Filter{
		"address":      {SQL: addressFilter, Kind: KindString, Doc: "address with or without prefix length (10.0.0.1 matches 10.0.0.1/24)"},
		"family":       {SQL: familyFilter, Kind: KindInt, Doc: "4 or 6"},
		"interface_id": {Path: "interface", Lookups: true, Doc: "interface id"},
		"interface":    {Path: "interface__name", Lookups: true, Doc: "interface name"},
		"device_id":    {Path: "interface__device", Lookups: true, Doc: "id of the device the address is assigned to"},
		"device":       {Path: "interface__device__name", Lookups: true, Doc: "name of the device the address is assigned to"},
		"assigned":     {SQL: boolFilter("t.assigned_object_id IS NOT NULL"), Kind: KindBool, Doc: "true: assigned to an interface"},
		"assigned_to_interface": {SQL: boolFilter("t.assigned_object_id IS NOT NULL"), Kind: KindBool,
			Doc: "true: assigned to an interface (NetBox's name; every assignment here is to an interface)"},
		"tag":    {Path: "tags__slug", Lookups: true, Doc: "tag slug"},
		"tag_id": {Path: "tags", Lookups: true, Doc: "tag id"},
	},
	Orders: map[string]string{"address": "t.address_key"},
	Write:  writeIPAddress,
})

// IPStatuses are the values of an IP address's status.
var IPStatuses = []Choice{{"active", "Active"}, {"reserved", "Reserved"}, {"deprecated", "Deprecated"},
	{"dhcp", "DHCP"}, {"slaac", "SLAAC"}}

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

func checkAddress(v any) (any, error) {
	a, err := NormalizeAddress(strings.TrimSpace(v.(string)))
	if err != nil {
		return nil, Problem("Enter a valid IPv4 or IPv6 address with a prefix length (10.0.0.1/24).")
	}
	return a, nil
}

var dnsNameRE = regexp.MustCompile(`^([0-9A-Za-z_-]+|\*)(\.[0-9A-Za-z_-]+)*\.?$`)

func checkDNSName(v any) (any, error) {
	if s := v.(string); s != "" && !dnsNameRE.MatchString(s) {
		return nil, Problem("Only alphanumeric characters, asterisks, hyphens, periods, and underscores are allowed in DNS names.")
	}
	return v, nil
}

// family is NetBox's {"value": 4|6, "label": "IPv4"|"IPv6"} of an address.
func family(r Row) any {
	if a, _ := r["address"].(string); strings.Contains(a, ":") {
		return map[string]any{"value": 6, "label": "IPv6"}
	}
	return map[string]any{"value": 4, "label": "IPv4"}
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

func addressFilter(vals []string) (Expr, error) {
	var ors []Expr
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if strings.Contains(v, "/") {
			a, err := NormalizeAddress(v)
			if err != nil {
				return Expr{}, problemf("%q is not a valid IP address.", v)
			}
			ors = append(ors, Expr{SQL: "t.address = ?", Args: []any{a}})
			continue
		}
		ip, err := netip.ParseAddr(v)
		if err != nil || ip.Zone() != "" {
			return Expr{}, problemf("%q is not a valid IP address.", v)
		}
		ors = append(ors, Expr{SQL: "substr(t.address, 1, length(?)) = ?", Args: []any{ip.String() + "/", ip.String() + "/"}})
	}
	return Or(ors...), nil
}

func familyFilter(vals []string) (Expr, error) {
	var ors []Expr
	for _, v := range vals {
		switch strings.TrimSpace(v) {
		case "4":
			ors = append(ors, Expr{SQL: "instr(t.address, ':') = 0"})
		case "6":
			ors = append(ors, Expr{SQL: "instr(t.address, ':') > 0"})
		default:
			return Expr{}, problemf("%q is not a valid choice (4 or 6).", v)
		}
	}
	return Or(ors...), nil
}

// writeIPAddress keeps what follows from the address and the assignment (the sort key,
// the assigned object's type), and an address that is a device's primary IP on that
// device and in its family.
func writeIPAddress(ctx context.Context, tx *sql.Tx, id int64, v Values, old Row) error {
	var address string
	if err := tx.QueryRowContext(ctx, `SELECT address FROM ip_addresses WHERE id = ?`, id).Scan(&address); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE ip_addresses SET address_key = ?, assigned_object_type =
		CASE WHEN assigned_object_id IS NULL THEN NULL ELSE ? END WHERE id = ?`, addressKey(address), AssignedInterface, id)
	if err != nil || old == nil {
		return err
	}
	field := "address"
	if _, ok := v["assigned_object_id"]; ok {
		field = "assigned_object_id"
	}
	return checkStillPrimary(ctx, tx, id, field)
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
			fe.Err = Problem("The address is the primary IP of its device: unset it there first.")
		}
		return err
	}
	return nil
}
