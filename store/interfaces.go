package store

import (
	"context"
	"database/sql"
	"strings"
)

// Interfaces is dcim.interface: a device's ports, with their 802.1Q VLANs.
var Interfaces = declare(&Model{
	Type: TypeInterface, Name: "Interface", Table: "interfaces", DefaultOrder: "device,name",
	Fields: []Field{
		{Name: "device", Column: "device_id", Kind: KindInt, Rel: TypeDevice, Required: true, Nested: true, Sort: true},
		nameField(64, "unique per device"),
		{Name: "type", Column: "type", Kind: KindString, MaxLen: 50, Default: "other", Choices: InterfaceTypes, OpenChoices: true,
			Labeled: true, Check: checkInterfaceType, Filter: FilterLookups, Sort: true,
			Doc: "NetBox's type slug: 1000base-t, virtual, lag…"},
		{Name: "enabled", Column: "enabled", Kind: KindBool, Default: true, Filter: FilterExact, Sort: true},
		description(200),
		{Name: "mode", Column: "mode", Kind: KindString, Null: true, Default: "", Choices: InterfaceModes, Labeled: true,
			Filter: FilterLookups, Sort: true, Label: "802.1Q mode", Doc: `none (null or "") for a routed port`},
		{Name: "untagged_vlan", Column: "untagged_vlan_id", Kind: KindInt, Rel: TypeVLAN, Null: true,
			Doc: "needs mode access or tagged; the VLAN must be global or at the device's site"},
		{Name: "tagged_vlans", Kind: KindInt, Rel: TypeVLAN, Join: &Join{"interface_tagged_vlans", "interface_id", "vlan_id"},
			Doc: "needs mode tagged; each VLAN global or at the device's site"},
		tagsField("interface_tags", "interface_id"),
		customFields("", nil),
		netboxFields()[0], netboxFields()[1],
		{Name: "count_ipaddresses", Kind: KindInt, Access: ReadOnly,
			Select: "(SELECT count(*) FROM ip_addresses a WHERE a.assigned_object_id = t.id)", Doc: "addresses assigned to the interface"},
	},
	Filters: map[string]Filter{
		"device_id":        {Path: "device", Lookups: true, Doc: "device id"},
		"device":           {Path: "device__name", Lookups: true, Doc: "device name"},
		"site_id":          {Path: "device__site", Lookups: true, Doc: "site id of the device"},
		"site":             {Path: "device__site__slug", Lookups: true, Doc: "site slug of the device"},
		"untagged_vlan_id": {Path: "untagged_vlan", Doc: "untagged VLAN id"},
		"vlan_id":          {SQL: interfaceVLAN, Kind: KindInt, Doc: "VLAN id, untagged or tagged"},
		"tag":              {Path: "tags__slug", Lookups: true, Doc: "tag slug"},
		"tag_id":           {Path: "tags", Lookups: true, Doc: "tag id"},
	},
	Write: check8021Q,
})

// InterfaceModes are the 802.1Q modes of an interface; none is stored as "".
var InterfaceModes = []Choice{{"access", "Access"}, {"tagged", "Tagged"}, {"tagged-all", "Tagged (All)"}}

// InterfaceTypes are the labels of the common interface types; any slug is accepted.
var InterfaceTypes = []Choice{{"virtual", "Virtual"}, {"bridge", "Bridge"}, {"lag", "Link Aggregation Group (LAG)"},
	{"100base-tx", "100BASE-TX (10/100ME)"}, {"1000base-t", "1000BASE-T (1GE)"}, {"10gbase-t", "10GBASE-T (10GE)"},
	{"1000base-x-sfp", "SFP (1GE)"}, {"10gbase-x-sfpp", "SFP+ (10GE)"}, {"25gbase-x-sfp28", "SFP28 (25GE)"},
	{"40gbase-x-qsfpp", "QSFP+ (40GE)"}, {"100gbase-x-qsfp28", "QSFP28 (100GE)"}, {"other", "Other"}}

func checkInterfaceType(v any) (any, error) {
	if !slugRE.MatchString(v.(string)) {
		return nil, Problem("Enter a valid interface type (a slug such as 1000base-t or virtual).")
	}
	return v, nil
}

func interfaceVLAN(vals []string) (Expr, error) {
	args, err := intArgs(vals)
	if err != nil {
		return Expr{}, err
	}
	in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(args)), ",") + ")"
	return Expr{SQL: `(t.untagged_vlan_id IN ` + in + ` OR EXISTS (SELECT 1 FROM interface_tagged_vlans l
		WHERE l.interface_id = t.id AND l.vlan_id IN ` + in + `))`, Args: append(args, args...)}, nil
}

// check8021Q enforces NetBox's 802.1Q rules on the interface as written: an untagged
// VLAN needs a mode, tagged VLANs need mode "tagged", and every VLAN must be global or
// at the device's site. VLANs a mode change makes meaningless are dropped, as NetBox
// does; VLANs the write itself sets are refused instead.
func check8021Q(ctx context.Context, tx *sql.Tx, id int64, v Values, _ Row) error {
	var mode string
	var site int64
	var untagged sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT i.mode, d.site_id, i.untagged_vlan_id FROM interfaces i
		JOIN devices d ON d.id = i.device_id WHERE i.id = ?`, id).Scan(&mode, &site, &untagged)
	if err != nil {
		return err
	}
	_, untaggedSent := v["untagged_vlan"]
	_, taggedSent := v["tagged_vlans"]
	if mode == "" && untagged.Valid {
		if untaggedSent {
			return &FieldError{Field: "untagged_vlan", Err: Problem("An untagged VLAN needs the interface's mode set to access or tagged.")}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE interfaces SET untagged_vlan_id = NULL WHERE id = ?`, id); err != nil {
			return err
		}
		untagged.Valid = false
	}
	tagged, err := linkedIDs(ctx, tx, "interface_tagged_vlans", "interface_id", "vlan_id", id)
	if err != nil {
		return err
	}
	if mode != "tagged" && len(tagged) > 0 {
		if taggedSent {
			return &FieldError{Field: "tagged_vlans", Err: Problem("Tagged VLANs need the interface's mode set to tagged.")}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM interface_tagged_vlans WHERE interface_id = ?`, id); err != nil {
			return err
		}
		tagged = nil
	}
	if untagged.Valid {
		if err := checkVLANSite(ctx, tx, "untagged_vlan", untagged.Int64, site); err != nil {
			return err
		}
	}
	for _, vlan := range tagged {
		if err := checkVLANSite(ctx, tx, "tagged_vlans", vlan, site); err != nil {
			return err
		}
	}
	return nil
}

// checkVLANSite makes sure a VLAN is global or at the site.
func checkVLANSite(ctx context.Context, tx *sql.Tx, field string, vlan, site int64) error {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM vlans WHERE id = ? AND (site_id IS NULL OR site_id = ?)`, vlan, site).Scan(&n)
	if err == nil && n == 0 {
		err = &FieldError{Field: field, Err: problemf("VLAN %d must belong to the interface's device's site or be global.", vlan)}
	}
	return err
}

// linkedIDs reads one owner's rows of a link table inside a transaction.
func linkedIDs(ctx context.Context, tx *sql.Tx, table, local, remote string, id int64) ([]int64, error) {
	return scalars[int64](ctx, tx, `SELECT `+remote+` FROM `+table+` WHERE `+local+` = ? ORDER BY `+remote, id)
}
