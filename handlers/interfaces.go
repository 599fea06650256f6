package handlers

import (
	"context"
	"net/http"

	"fieldkit/store"
)

// interfaceResource: dcim.interface, a device's ports with their 802.1Q VLANs.
var interfaceResource = &Resource{
	Type: store.TypeInterface, Path: pathInterfaces, Name: "Interface",
	Filters: map[string]Filter{
		"name": {Path: "name", Lookups: true}, "description": {Path: "description", Lookups: true},
		"type": {Path: "type", Lookups: true}, "enabled": {Path: "enabled"},
		"mode":             {Path: "mode", Lookups: true, Doc: `access, tagged or tagged-all ("" for none)`},
		"device_id":        {Path: "device", Lookups: true, Doc: "device id"},
		"device":           {Path: "device__name", Lookups: true, Doc: "device name"},
		"site_id":          {Path: "device__site", Lookups: true, Doc: "site id of the device"},
		"site":             {Path: "device__site__slug", Lookups: true, Doc: "site slug of the device"},
		"untagged_vlan_id": {Path: "untagged_vlan", Doc: "untagged VLAN id"},
		"vlan_id":          {Custom: interfaceVLAN, Doc: "VLAN id, untagged or tagged"},
	},
	Ordering: map[string]string{"id": "t.id", "name": "t.name", "type": "t.type", "enabled": "t.enabled",
		"mode": "t.mode", "device": subName("devices", "name", "device_id"),
		"created": "t.created", "last_updated": "t.last_updated"},
	DefaultOrder: "device,name",
	Search:       []string{"t.name", "t.description"},
	Fields: []FieldDoc{
		{Name: "id", Type: "integer", ReadOnly: true}, {Name: "url", Type: "string", ReadOnly: true},
		{Name: "display", Type: "string", ReadOnly: true},
		{Name: "device", Type: "object", Ref: "Device", Required: true, Doc: "write: an id or {\"name\": …}"},
		{Name: "name", Type: "string", Required: true, MaxLength: 64, Doc: "unique per device"},
		{Name: "type", Type: "string", MaxLength: 50, Doc: `NetBox interface type slug (1000base-t, virtual, lag, …), default "other"; read as {"value", "label"}`},
		{Name: "enabled", Type: "boolean", Doc: "default true"},
		{Name: "description", Type: "string", MaxLength: 200},
		{Name: "mode", Type: "string", Nullable: true, Enum: enumOf(store.InterfaceModes), Doc: `802.1Q mode; null or "" for none; read as {"value", "label"} or null`},
		{Name: "untagged_vlan", Type: "object", Ref: "VLAN", Nullable: true, Doc: "needs mode access or tagged; the VLAN must be global or at the device's site"},
		{Name: "tagged_vlans", Type: "array", Items: "VLAN", Doc: "needs mode tagged; each VLAN global or at the device's site"},
		{Name: "tags", Type: "array", Items: "Tag", ReadOnly: true},
		{Name: "custom_fields", Type: "object", ReadOnly: true},
		{Name: "created", Type: "datetime", ReadOnly: true}, {Name: "last_updated", Type: "datetime", ReadOnly: true},
	},
}

func interfaceVLAN(vals []string) (store.Expr, error) {
	args, err := intArgs(vals)
	if err != nil {
		return store.Expr{}, err
	}
	in := "(" + placeholderList(len(args)) + ")"
	return store.Expr{SQL: `(t.untagged_vlan_id IN ` + in + ` OR EXISTS (SELECT 1 FROM interface_tagged_vlans l
		WHERE l.interface_id = t.id AND l.vlan_id IN ` + in + `))`, Args: append(args, args...)}, nil
}

func (a *API) interfaceCRUD() crudSet {
	wr := formWriter([]string{"device", "name", "type", "enabled", "description", "mode", "untagged_vlan", "tagged_vlans",
		"tags", "custom_fields"},
		a.interfaceInput, a.DB.CreateInterface, a.DB.UpdateInterface, a.DB.DeleteInterface)
	return crudOf(a, interfaceResource, wr, a.DB.Interfaces, func(i store.Interface) int64 { return i.ID }, renderInterface)
}

func (a *API) interfaceInput(ctx context.Context, f *form, create bool) store.InterfaceInput {
	var in store.InterfaceInput
	in.DeviceID, _ = a.ref(ctx, f, "device", store.TypeDevice, create)
	if f.Has("device") && f.IsNull("device") && !f.Errs.Has("device") {
		f.Errs.Add("device", "This field may not be null.")
	}
	in.Name = strPtr(f, "name", create, 64)
	unwrapChoice(f, "type")
	if s, ok := f.Str("type", false, 50); ok {
		if !validSlug(s) {
			f.Errs.Add("type", "Enter a valid interface type (a slug such as 1000base-t or virtual).")
		}
		in.Type = &s
	}
	in.Enabled = boolPtr(f, "enabled")
	in.Description = strPtr(f, "description", false, 200)
	if f.IsNull("mode") {
		empty := ""
		in.Mode = &empty
	} else {
		in.Mode = choicePtr(f, "mode", false, store.InterfaceModes...)
	}
	in.UntaggedVLAN = a.optRef(ctx, f, "untagged_vlan", store.TypeVLAN)
	if ids, ok := a.refs(ctx, f, "tagged_vlans", store.TypeVLAN); ok {
		in.TaggedVLANs = &ids
	}
	return in
}

func renderInterface(r *http.Request, it store.Interface, brief bool) any {
	dev := briefDevice(r, it.DeviceID, it.DeviceName)
	n := briefInterface(r, it.ID, it.Name, dev)
	n["description"] = it.Description
	if brief {
		return n
	}
	n["type"] = choice(it.Type)
	n["enabled"] = it.Enabled
	n["mode"] = choice(it.Mode)
	n["untagged_vlan"] = nil
	if v := it.UntaggedVLAN; v != nil {
		n["untagged_vlan"] = briefVLAN(r, v.ID, v.VID, v.Name)
	}
	tagged := make([]any, 0, len(it.TaggedVLANs))
	for _, v := range it.TaggedVLANs {
		tagged = append(tagged, briefVLAN(r, v.ID, v.VID, v.Name))
	}
	n["tagged_vlans"] = tagged
	n["tags"] = []any{}
	n["custom_fields"] = map[string]any{}
	n["created"] = stamp(it.Created)
	n["last_updated"] = stamp(it.LastUpdated)
	return n
}
