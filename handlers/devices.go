package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"strings"

	"fieldkit/store"
)

// deviceResource: dcim.device, the targets of command execution.
var deviceResource = &Resource{
	Type: store.TypeDevice, Path: pathDevices, Name: "Device",
	Filters: map[string]Filter{
		"name": {Path: "name", Lookups: true}, "description": {Path: "description", Lookups: true},
		"status":         {Path: "status", Lookups: true},
		"site_id":        {Path: "site", Lookups: true, Doc: "site id"},
		"site":           {Path: "site__slug", Lookups: true, Doc: "site slug"},
		"platform_id":    {Path: "platform", Lookups: true, Doc: "platform id (null for none)"},
		"platform":       {Path: "platform__slug", Lookups: true, Doc: "platform slug"},
		"tag":            {Path: "tags__slug", Lookups: true, Doc: "tag slug"},
		"tag_id":         {Path: "tags", Lookups: true, Doc: "tag id"},
		"primary_ip4_id": {Path: "primary_ip4", Doc: "primary IPv4 address id"},
		"primary_ip6_id": {Path: "primary_ip6", Doc: "primary IPv6 address id"},
		"has_primary_ip": {Custom: hasPrimaryIP, Doc: "true: devices with a primary IPv4 or IPv6 address"},
	},
	Ordering: map[string]string{"id": "t.id", "name": "t.name", "status": "t.status",
		"site": subName("sites", "name", "site_id"), "platform": subName("platforms", "name", "platform_id"),
		"created": "t.created", "last_updated": "t.last_updated"},
	DefaultOrder: "name",
	Search:       []string{"t.name", "t.description"},
	Fields: []FieldDoc{
		{Name: "id", Type: "integer", ReadOnly: true}, {Name: "url", Type: "string", ReadOnly: true},
		{Name: "display", Type: "string", ReadOnly: true},
		{Name: "name", Type: "string", Required: true, MaxLength: 64, Doc: "unique per site"},
		{Name: "site", Type: "object", Ref: "Site", Required: true, Doc: "write: an id or {\"slug\": …}"},
		{Name: "platform", Type: "object", Ref: "Platform", Nullable: true, Doc: "write: an id or {\"slug\": …}"},
		{Name: "status", Type: "string", Enum: store.DeviceStatuses, Doc: `default "active"; read as {"value", "label"}`},
		{Name: "primary_ip4", Type: "object", Ref: "IPAddress", Nullable: true, Doc: "an IPv4 address assigned to one of this device's interfaces"},
		{Name: "primary_ip6", Type: "object", Ref: "IPAddress", Nullable: true, Doc: "an IPv6 address assigned to one of this device's interfaces"},
		{Name: "primary_ip", Type: "object", Ref: "IPAddress", Nullable: true, ReadOnly: true, Doc: "primary_ip4 if set, else primary_ip6: the address SSH connects to"},
		{Name: "description", Type: "string", MaxLength: 200},
		{Name: "tags", Type: "array", Items: "Tag", Doc: "write: ids or {\"slug\": …} / {\"name\": …}"},
		{Name: "custom_fields", Type: "object", Doc: "free-form; ssh_port (integer 1–65535) sets the SSH port, default 22. PATCH merges keys, PUT replaces"},
		{Name: "legacy_algorithms", Type: "boolean", Doc: "also offer legacy SSH algorithms to this device (its platform's setting also counts)"},
		{Name: "host_key_fingerprint", Type: "string", ReadOnly: true, Doc: `SHA256 fingerprint of the SSH host key trusted on first use, "" when none; clear it with DELETE …/host-key/`},
		{Name: "created", Type: "datetime", ReadOnly: true}, {Name: "last_updated", Type: "datetime", ReadOnly: true},
	},
}

func hasPrimaryIP(vals []string) (store.Expr, error) {
	b, err := boolParam(vals[0])
	if err != nil {
		return store.Expr{}, fmt.Errorf("%q is not a valid boolean (use true/false/1/0).", vals[0])
	}
	e := store.Expr{SQL: "(t.primary_ip4_id IS NOT NULL OR t.primary_ip6_id IS NOT NULL)"}
	if !b {
		return store.Not(e), nil
	}
	return e, nil
}

func (a *API) deviceCRUD() crudSet {
	wr := formWriter([]string{"name", "site", "platform", "status", "primary_ip4", "primary_ip6", "description", "tags",
		"custom_fields", "legacy_algorithms"},
		a.deviceInput, a.DB.CreateDevice, a.DB.UpdateDevice, a.DB.DeleteDevice)
	return crudOf(a, deviceResource, wr, a.DB.Devices, func(d store.Device) int64 { return d.ID }, renderDevice(a))
}

func (a *API) deviceInput(ctx context.Context, f *form, create bool) store.DeviceInput {
	var in store.DeviceInput
	in.Name = strPtr(f, "name", create, 64)
	in.SiteID, _ = a.ref(ctx, f, "site", store.TypeSite, create)
	in.Platform = a.optRef(ctx, f, "platform", store.TypePlatform)
	in.Status = choicePtr(f, "status", false, store.DeviceStatuses...)
	in.PrimaryIP4 = a.optRef(ctx, f, "primary_ip4", store.TypeIPAddress)
	in.PrimaryIP6 = a.optRef(ctx, f, "primary_ip6", store.TypeIPAddress)
	in.Description = strPtr(f, "description", false, 200)
	if ids, ok := a.refs(ctx, f, "tags", store.TypeTag); ok {
		in.Tags = &ids
	}
	in.LegacyAlgorithms = boolPtr(f, "legacy_algorithms")
	if cf, ok := f.Object("custom_fields"); ok {
		merge := !create && cf != nil // a PATCH merges
		if cf == nil {
			cf = map[string]any{} // null clears them, PATCH or not
		}
		checkCustomFields(f, cf)
		in.CustomFields, in.MergeCustomFields = cf, merge
	}
	if f.Has("site") && f.IsNull("site") && !f.Errs.Has("site") {
		f.Errs.Add("site", "This field may not be null.")
	}
	return in
}

// checkCustomFields validates the custom fields FieldKit itself reads.
func checkCustomFields(f *form, cf map[string]any) {
	v, ok := cf["ssh_port"]
	if !ok || v == nil {
		return
	}
	n, isNum := v.(float64)
	if !isNum || n != math.Trunc(n) || n < 1 || n > 65535 {
		f.Errs.Add("custom_fields", "ssh_port: Ensure this value is an integer between 1 and 65535.")
	}
}

func renderDevice(a *API) Renderer[store.Device] {
	return func(r *http.Request, d store.Device, brief bool) any {
		n := briefDevice(r, d.ID, d.Name)
		n["description"] = d.Description
		if brief {
			return n
		}
		n["site"] = a.briefSite(r, d.SiteID, d.SiteName, d.SiteSlug)
		n["platform"] = nil
		if d.PlatformID != nil {
			n["platform"] = briefPlatform(r, *d.PlatformID, d.PlatformName, d.PlatformSlug)
		}
		n["status"] = choice(d.Status)
		n["primary_ip4"], n["primary_ip6"], n["primary_ip"] = nil, nil, nil
		if d.PrimaryIP6ID != nil {
			n["primary_ip6"] = briefIP(r, *d.PrimaryIP6ID, d.PrimaryIP6)
			n["primary_ip"] = n["primary_ip6"]
		}
		if d.PrimaryIP4ID != nil {
			n["primary_ip4"] = briefIP(r, *d.PrimaryIP4ID, d.PrimaryIP4)
			n["primary_ip"] = n["primary_ip4"]
		}
		n["tags"] = renderTags(r, d.Tags)
		n["custom_fields"] = d.CustomFields
		n["legacy_algorithms"] = d.LegacyAlgorithms
		n["host_key_fingerprint"] = hostKeyFingerprint(d.HostKey)
		n["created"] = stamp(d.Created)
		n["last_updated"] = stamp(d.LastUpdated)
		return n
	}
}

// hostKeyFingerprint is OpenSSH's SHA256 fingerprint of an authorized_keys line.
func hostKeyFingerprint(line string) string {
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

// clearHostKey serves DELETE /api/dcim/devices/{id}/host-key/: it forgets the SSH host
// key trusted on first use (after a device was replaced or re-keyed), so the next
// connection trusts the key it is shown. Needs change on the device; 204.
func (a *API) clearHostKey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if _, err := changeable(a, r, deviceResource, id, "change", a.DB.Devices); err != nil {
		return err
	}
	if err := a.DB.ClearHostKey(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
