package handlers

import (
	"context"
	"net/http"

	"fieldkit/store"
)

// vlanResource: ipam.vlan, global or at one site.
var vlanResource = &Resource{
	Type: store.TypeVLAN, Path: pathVLANs, Name: "VLAN",
	Filters: map[string]Filter{
		"vid": {Path: "vid", Lookups: true}, "name": {Path: "name", Lookups: true},
		"status": {Path: "status", Lookups: true}, "description": {Path: "description", Lookups: true},
		"site_id":   {Path: "site", Lookups: true, Doc: "site id (null for global VLANs)"},
		"site":      {Path: "site__slug", Lookups: true, Doc: "site slug"},
		"device_id": {Custom: vlanOnDevice, Doc: "VLANs on the interfaces (untagged or tagged) of these devices"},
	},
	Ordering: map[string]string{"id": "t.id", "vid": "t.vid", "name": "t.name", "status": "t.status",
		"site": subName("sites", "name", "site_id"), "created": "t.created", "last_updated": "t.last_updated"},
	DefaultOrder: "vid",
	Search:       []string{"t.name", "t.description", "CAST(t.vid AS TEXT)"},
	Fields: []FieldDoc{
		{Name: "id", Type: "integer", ReadOnly: true}, {Name: "url", Type: "string", ReadOnly: true},
		{Name: "display", Type: "string", ReadOnly: true},
		{Name: "vid", Type: "integer", Required: true, Doc: "1–4094"},
		{Name: "name", Type: "string", Required: true, MaxLength: 64},
		{Name: "site", Type: "object", Ref: "Site", Nullable: true, Doc: "null for a global VLAN; write: an id or {\"slug\": …}"},
		{Name: "status", Type: "string", Enum: store.VLANStatuses, Doc: `default "active"; read as {"value", "label"}`},
		{Name: "description", Type: "string", MaxLength: 200},
		{Name: "tags", Type: "array", Items: "Tag", ReadOnly: true},
		{Name: "custom_fields", Type: "object", ReadOnly: true},
		{Name: "created", Type: "datetime", ReadOnly: true}, {Name: "last_updated", Type: "datetime", ReadOnly: true},
	},
}

func vlanOnDevice(vals []string) (store.Expr, error) {
	args, err := intArgs(vals)
	if err != nil {
		return store.Expr{}, err
	}
	in := "(" + placeholderList(len(args)) + ")"
	return store.Expr{SQL: `t.id IN (SELECT i.untagged_vlan_id FROM interfaces i WHERE i.device_id IN ` + in + `
		UNION SELECT l.vlan_id FROM interface_tagged_vlans l JOIN interfaces i ON i.id = l.interface_id WHERE i.device_id IN ` + in + `)`,
		Args: append(args, args...)}, nil
}

func (a *API) vlanCRUD() crudSet {
	wr := formWriter([]string{"vid", "name", "site", "status", "description", "tags", "custom_fields"},
		a.vlanInput, a.DB.CreateVLAN, a.DB.UpdateVLAN, a.DB.DeleteVLAN)
	return crudOf(a, vlanResource, wr, a.DB.VLANs, func(v store.VLAN) int64 { return v.ID }, renderVLAN(a))
}

func (a *API) vlanInput(ctx context.Context, f *form, create bool) store.VLANInput {
	var in store.VLANInput
	if n, ok := f.Integer("vid", create, 1, 4094); ok {
		in.VID = &n
	}
	in.Name = strPtr(f, "name", create, 64)
	in.Site = a.optRef(ctx, f, "site", store.TypeSite)
	in.Status = choicePtr(f, "status", false, store.VLANStatuses...)
	in.Description = strPtr(f, "description", false, 200)
	return in
}

func renderVLAN(a *API) Renderer[store.VLAN] {
	return func(r *http.Request, v store.VLAN, brief bool) any {
		n := briefVLAN(r, v.ID, v.VID, v.Name)
		n["description"] = v.Description
		if brief {
			return n
		}
		n["site"] = nil
		if v.SiteID != nil {
			n["site"] = a.briefSite(r, *v.SiteID, v.SiteName, v.SiteSlug)
		}
		n["status"] = choice(v.Status)
		n["tags"] = []any{}
		n["custom_fields"] = map[string]any{}
		n["created"] = stamp(v.Created)
		n["last_updated"] = stamp(v.LastUpdated)
		return n
	}
}
