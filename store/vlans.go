package store

import (
	"fmt"
	"strings"
)

// VLANs is ipam.vlan: an 802.1Q VLAN, global or at one site.
var VLANs = declare(&Model{
	Type: TypeVLAN, Name: "VLAN", Table: "vlans", DefaultOrder: "vid",
	Display: func(r Row) string { return fmt.Sprintf("%s (%d)", r["name"], r["vid"]) },
	Fields: []Field{
		{Name: "vid", Column: "vid", Kind: KindInt, Required: true, Min: 1, Max: 4094, Nested: true, Filter: FilterLookups,
			Sort: true, Search: true, Label: "VLAN id", Doc: "1–4094"},
		nameField(64, ""),
		{Name: "site", Column: "site_id", Kind: KindInt, Rel: TypeSite, Null: true, Sort: true,
			Doc: "none for a global VLAN"},
		{Name: "status", Column: "status", Kind: KindString, Choices: VLANStatuses, Default: "active", Labeled: true,
			Filter: FilterLookups, Sort: true},
		description(200),
		tagsField("vlan_tags", "vlan_id"),
		customFields("", nil),
		netboxFields()[0], netboxFields()[1],
	},
	Filters: map[string]Filter{
		"site_id":   {Path: "site", Lookups: true, Doc: "site id (null for global VLANs)"},
		"site":      {Path: "site__slug", Lookups: true, Doc: "site slug"},
		"device_id": {SQL: vlanOnDevice, Kind: KindInt, Doc: "VLANs on the interfaces (untagged or tagged) of these devices"},
		"tag":       {Path: "tags__slug", Lookups: true, Doc: "tag slug"},
		"tag_id":    {Path: "tags", Lookups: true, Doc: "tag id"},
	},
})

// VLANStatuses are the values of a VLAN's status.
var VLANStatuses = choices("active", "reserved", "deprecated")

func vlanOnDevice(vals []string) (Expr, error) {
	args, err := intArgs(vals)
	if err != nil {
		return Expr{}, err
	}
	in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(args)), ",") + ")"
	return Expr{SQL: `t.id IN (SELECT i.untagged_vlan_id FROM interfaces i WHERE i.device_id IN ` + in + `
		UNION SELECT l.vlan_id FROM interface_tagged_vlans l JOIN interfaces i ON i.id = l.interface_id WHERE i.device_id IN ` + in + `)`,
		Args: append(args, args...)}, nil
}
