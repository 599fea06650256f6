package store

// Sites is dcim.site: where devices are.
var Sites = declare(&Model{
	Type: TypeSite, Name: "Site", Table: "sites", DefaultOrder: "name",
	Fields: []Field{
		nameField(100, ""),
		slugField,
		description(200),
		tagsField("site_tags", "site_id"),
		customFields(SiteBackupLimit+" (a number of hours) overrides backup.max_age for the site's devices", checkSiteFields),
		netboxFields()[0], netboxFields()[1],
		{Name: "prefix_count", Kind: KindInt, Access: ReadOnly, Select: "(SELECT count(*) FROM prefixes p WHERE p.site_id = t.id)",
			Doc: "prefixes at the site (FieldKit keeps none)"},
	},
	Filters: map[string]Filter{
		"tag":    {Path: "tags__slug", Lookups: true, Doc: "tag slug"},
		"tag_id": {Path: "tags", Lookups: true, Doc: "tag id"},
	},
})
