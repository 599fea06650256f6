package store

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Platforms is dcim.platform: what a device runs, which decides the SSH driver and the
// commands that apply. The driver's choices and the effective driver come from the exec
// package (see the API's hooks).
var Platforms = declare(&Model{
	Type: TypePlatform, Name: "Platform", Table: "platforms", DefaultOrder: "name",
	Fields: append([]Field{
		nameField(100, ""),
		slugField,
		description(200),
		{Name: "driver", Column: "driver", Kind: KindString, Filter: FilterLookups, Sort: true, Local: true, Label: "SSH driver",
			Doc: `SSH driver; "" infers it from the slug: a driver's name, or a common alias (ios, iosxe → cisco_ios; nxos; iosxr; eos; junos; asa; procurve, aruba-osswitch → hp_procurve; aoscx; os10; fastiron, icx; huawei, vrp; exos; fortios; panos; routeros, mikrotik), otherwise generic`},
		{Name: "effective_driver", Kind: KindString, Access: ReadOnly, Doc: "the driver actually used"},
		{Name: "legacy_algorithms", Column: "legacy_algorithms", Kind: KindBool, Local: true, Label: "Offer legacy SSH algorithms",
			Doc: "also offer legacy SSH algorithms (SHA-1 key exchange, CBC ciphers, ssh-rsa) to this platform's devices"},
		{Name: "config_command", Column: "config_command", Kind: KindString, MaxLen: 200, Local: true, Label: "Config backup command",
			Doc: "the command that prints this platform's running configuration for a config backup; empty: the driver's " +
				"(show running-config, display current-configuration, show configuration, /export …)"},
		{Name: "config_ignore", Column: "config_ignore", Kind: KindString, MaxLen: 4000, Local: true, Check: checkIgnoreRules,
			Label: "Config lines to ignore",
			Doc: "lines of this platform's configuration that change on every read and are no change, besides the driver's " +
				"(clock, uptime, NTP drift…): one regular expression (Go syntax) a line"},
	}, append(targetOverrides("this platform's devices (a device's own setting wins)"),
		tagsField("platform_tags", "platform_id"),
		customFields("", nil),
		netboxFields()[0], netboxFields()[1],
		// A hub keeps one platform of a slug, shared by the sites that have it (hub/apply.go).
		Field{Name: "sites", Kind: KindInt, Rel: TypeSite, Join: &Join{"platform_sites", "platform_id", "site_id"}, Access: ReadOnly,
			Doc: "at a hub, the FieldKit sites that have this platform (one platform of a slug, shared by the sites); " +
				"empty for the hub's own platforms and at a site"},
	)...),
	Filters: map[string]Filter{
		"site_id": {Path: "sites", Lookups: true, Doc: "site id (at a hub: a FieldKit site that has the platform)"},
		"site":    {Path: "sites__slug", Lookups: true, Doc: "site slug (at a hub: a FieldKit site that has the platform)"},
		"tag":     {Path: "tags__slug", Lookups: true, Doc: "tag slug"},
		"tag_id":  {Path: "tags", Lookups: true, Doc: "tag id"},
	},
})

// PlatformNamed finds the platform whose slug is key, else the one whose name is key
// (case ignored), among the platforms scope lets through; ErrNotFound when none is.
func (db *DB) PlatformNamed(ctx context.Context, key string, scope Expr) (Row, error) {
	for _, c := range []Cond{{Path: []string{"slug"}, Lookup: "exact"}, {Path: []string{"name"}, Lookup: "iexact"}} {
		c.Values = []any{key}
		e, err := Platforms.Compile(c)
		if err != nil {
			return nil, err
		}
		ids, _, err := db.ListIDs(ctx, Query{Model: TypePlatform, Where: []Expr{e, scope}, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			continue
		}
		rows, err := db.Rows(ctx, Platforms, ids)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			return rows[0], nil
		}
	}
	return nil, fmt.Errorf("platform %q: %w", key, ErrNotFound)
}

// checkIgnoreRules accepts lines of regular expressions Go can compile, naming the
// first that does not.
func checkIgnoreRules(v any) (any, error) {
	s := strings.ReplaceAll(v.(string), "\r\n", "\n")
	for i, line := range strings.Split(s, "\n") {
		if _, err := regexp.Compile(strings.TrimSpace(line)); err != nil {
			return nil, problemf("Line %d is not a valid regular expression: %v.", i+1, err)
		}
	}
	return s, nil
}
