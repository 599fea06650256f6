package store

// Tags is extras.tag: labels put on sites, platforms, devices and commands.
var Tags = declare(&Model{
	Type: TypeTag, Name: "Tag", Table: "tags", DefaultOrder: "name",
	Fields: []Field{
		nameField(100, ""),
		slugField,
		{Name: "color", Column: "color", Kind: KindString, MaxLen: 6, Default: "9e9e9e", Check: checkColor, Nested: true,
			Filter: FilterLookups, Sort: true, Label: "Colour", Doc: "six hex digits"},
		description(200),
		netboxFields()[0], netboxFields()[1],
	},
})
