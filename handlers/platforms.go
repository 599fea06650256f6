package handlers

import (
	"context"
	"net/http"

	"fieldkit/exec"
	"fieldkit/store"
)

// platformResource: dcim.platform, whose driver chooses how devices are driven over SSH.
var platformResource = &Resource{
	Type: store.TypePlatform, Path: pathPlatforms, Name: "Platform",
	Filters: map[string]Filter{
		"name": {Path: "name", Lookups: true}, "slug": {Path: "slug", Lookups: true},
		"description": {Path: "description", Lookups: true},
		"driver":      {Path: "driver", Lookups: true, Doc: "the configured driver (empty = inferred from the slug)"},
	},
	Ordering: map[string]string{"id": "t.id", "name": "t.name", "slug": "t.slug", "driver": "t.driver",
		"created": "t.created", "last_updated": "t.last_updated"},
	DefaultOrder: "name",
	Search:       []string{"t.name", "t.slug", "t.description"},
	Fields: []FieldDoc{
		{Name: "id", Type: "integer", ReadOnly: true}, {Name: "url", Type: "string", ReadOnly: true},
		{Name: "display", Type: "string", ReadOnly: true},
		{Name: "name", Type: "string", Required: true, MaxLength: 100},
		{Name: "slug", Type: "string", Required: true, MaxLength: 100},
		{Name: "description", Type: "string", MaxLength: 200},
		{Name: "driver", Type: "string", Enum: append([]string{""}, exec.Drivers()...),
			Doc: `SSH driver; "" infers it from the slug (ios, iosxe, cisco_xe → cisco_ios; nxos → cisco_nxos; iosxr, cisco_xr → cisco_iosxr; eos → arista_eos; junos → juniper_junos; otherwise generic)`},
		{Name: "effective_driver", Type: "string", ReadOnly: true, Enum: exec.Drivers(), Doc: "the driver actually used"},
		{Name: "legacy_algorithms", Type: "boolean", Doc: "also offer legacy SSH algorithms (SHA-1 key exchange, CBC ciphers, ssh-rsa) to this platform's devices"},
		{Name: "tags", Type: "array", Items: "Tag", ReadOnly: true},
		{Name: "custom_fields", Type: "object", ReadOnly: true},
		{Name: "created", Type: "datetime", ReadOnly: true}, {Name: "last_updated", Type: "datetime", ReadOnly: true},
	},
}

func (a *API) platformCRUD() crudSet {
	wr := formWriter([]string{"name", "slug", "description", "driver", "legacy_algorithms", "tags", "custom_fields"},
		platformInput, a.DB.CreatePlatform, a.DB.UpdatePlatform, a.DB.DeletePlatform)
	return crudOf(a, platformResource, wr, a.DB.Platforms, func(p store.Platform) int64 { return p.ID }, renderPlatform)
}

func platformInput(_ context.Context, f *form, create bool) store.PlatformInput {
	var in store.PlatformInput
	in.Name = strPtr(f, "name", create, 100)
	in.Slug = slugField(f, create)
	in.Description = strPtr(f, "description", false, 200)
	in.Driver = choicePtr(f, "driver", false, append([]string{""}, exec.Drivers()...)...)
	in.LegacyAlgorithms = boolPtr(f, "legacy_algorithms")
	return in
}

func renderPlatform(r *http.Request, p store.Platform, brief bool) any {
	n := briefPlatform(r, p.ID, p.Name, p.Slug)
	n["description"] = p.Description
	if brief {
		return n
	}
	n["driver"] = p.Driver
	n["effective_driver"] = exec.DriverFor(p.Driver, p.Slug)
	n["legacy_algorithms"] = p.LegacyAlgorithms
	n["tags"] = []any{}
	n["custom_fields"] = map[string]any{}
	n["created"] = stamp(p.Created)
	n["last_updated"] = stamp(p.LastUpdated)
	return n
}
