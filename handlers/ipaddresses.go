package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strings"

	"fieldkit/store"
)

// ipAddressResource: ipam.ipaddress, assigned to interfaces; a device's primary IP is
// how FieldKit reaches it.
var ipAddressResource = &Resource{
	Type: store.TypeIPAddress, Path: pathIPAddresses, Name: "IPAddress",
	Filters: map[string]Filter{
		"address": {Custom: addressFilter, Doc: "address with or without prefix length (10.0.0.1 matches 10.0.0.1/24)"},
		"family":  {Custom: familyFilter, Doc: "4 or 6"},
		"status":  {Path: "status", Lookups: true}, "dns_name": {Path: "dns_name", Lookups: true},
		"description":          {Path: "description", Lookups: true},
		"assigned_object_type": {Path: "assigned_object_type", Lookups: true},
		"assigned_object_id":   {Path: "assigned_object_id", Lookups: true},
		"interface_id":         {Path: "interface", Lookups: true, Doc: "interface id"},
		"interface":            {Path: "interface__name", Lookups: true, Doc: "interface name"},
		"device_id":            {Path: "interface__device", Lookups: true, Doc: "id of the device the address is assigned to"},
		"device":               {Path: "interface__device__name", Lookups: true, Doc: "name of the device the address is assigned to"},
		"assigned":             {Custom: assignedFilter, Doc: "true: assigned to an interface"},
	},
	Ordering: map[string]string{"id": "t.id", "address": "t.address_key", "status": "t.status", "dns_name": "t.dns_name",
		"created": "t.created", "last_updated": "t.last_updated"},
	DefaultOrder: "address",
	Search:       []string{"t.address", "t.dns_name", "t.description"},
	Fields: []FieldDoc{
		{Name: "id", Type: "integer", ReadOnly: true}, {Name: "url", Type: "string", ReadOnly: true},
		{Name: "display", Type: "string", ReadOnly: true},
		{Name: "family", Type: "object", ReadOnly: true, Doc: `{"value": 4|6, "label": "IPv4"|"IPv6"}`},
		{Name: "address", Type: "string", Required: true, Doc: "address with prefix length, host bits kept (10.0.0.1/24)"},
		{Name: "status", Type: "string", Enum: store.IPStatuses, Doc: `default "active"; read as {"value", "label"}`},
		{Name: "dns_name", Type: "string", MaxLength: 255},
		{Name: "description", Type: "string", MaxLength: 200},
		{Name: "assigned_object_type", Type: "string", Nullable: true, Enum: []string{store.AssignedInterface}, Doc: "set together with assigned_object_id"},
		{Name: "assigned_object_id", Type: "integer", Nullable: true, Doc: "interface id"},
		{Name: "assigned_object", Type: "object", Ref: "Interface", Nullable: true, ReadOnly: true, Doc: "the interface, with its device"},
		{Name: "tags", Type: "array", Items: "Tag", ReadOnly: true},
		{Name: "custom_fields", Type: "object", ReadOnly: true},
		{Name: "created", Type: "datetime", ReadOnly: true}, {Name: "last_updated", Type: "datetime", ReadOnly: true},
	},
}

func addressFilter(vals []string) (store.Expr, error) {
	var ors []store.Expr
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if strings.Contains(v, "/") {
			a, err := store.NormalizeAddress(v)
			if err != nil {
				return store.Expr{}, fmt.Errorf("%q is not a valid IP address.", v)
			}
			ors = append(ors, store.Expr{SQL: "t.address = ?", Args: []any{a}})
			continue
		}
		ip, err := netip.ParseAddr(v)
		if err != nil || ip.Zone() != "" {
			return store.Expr{}, fmt.Errorf("%q is not a valid IP address.", v)
		}
		ors = append(ors, store.Expr{SQL: "substr(t.address, 1, length(?)) = ?", Args: []any{ip.String() + "/", ip.String() + "/"}})
	}
	return store.Or(ors...), nil
}

func familyFilter(vals []string) (store.Expr, error) {
	var ors []store.Expr
	for _, v := range vals {
		switch strings.TrimSpace(v) {
		case "4":
			ors = append(ors, store.Expr{SQL: "instr(t.address, ':') = 0"})
		case "6":
			ors = append(ors, store.Expr{SQL: "instr(t.address, ':') > 0"})
		default:
			return store.Expr{}, fmt.Errorf("%q is not a valid choice (4 or 6).", v)
		}
	}
	return store.Or(ors...), nil
}

func assignedFilter(vals []string) (store.Expr, error) {
	b, err := boolParam(vals[0])
	if err != nil {
		return store.Expr{}, fmt.Errorf("%q is not a valid boolean (use true/false/1/0).", vals[0])
	}
	if b {
		return store.Expr{SQL: "t.assigned_object_id IS NOT NULL"}, nil
	}
	return store.Expr{SQL: "t.assigned_object_id IS NULL"}, nil
}

func (a *API) ipAddressCRUD() crudSet {
	wr := Writer{
		Fields: []string{"address", "status", "dns_name", "description", "assigned_object_type", "assigned_object_id",
			"tags", "custom_fields"},
		Create: func(ctx context.Context, f *form, guard store.Scope) (int64, error) {
			in, err := a.ipAddressInput(ctx, f, true)
			if err != nil {
				return 0, err
			}
			return a.DB.CreateIPAddress(ctx, in, guard)
		},
		Update: func(ctx context.Context, id int64, f *form, partial bool, guard store.Scope) error {
			in, err := a.ipAddressInput(ctx, f, !partial)
			if err != nil {
				return err
			}
			return a.DB.UpdateIPAddress(ctx, id, in, guard)
		},
		Delete: a.DB.DeleteIPAddress,
	}
	return crudOf(a, ipAddressResource, wr, a.DB.IPAddresses, func(ip store.IPAddress) int64 { return ip.ID }, renderIPAddress)
}

var dnsNameRE = regexp.MustCompile(`^([0-9A-Za-z_-]+|\*)(\.[0-9A-Za-z_-]+)*\.?$`)

func (a *API) ipAddressInput(ctx context.Context, f *form, create bool) (store.IPAddressInput, error) {
	var in store.IPAddressInput
	if s, ok := f.Str("address", create, 0); ok {
		addr, err := store.NormalizeAddress(strings.TrimSpace(s))
		if err != nil {
			f.Errs.Add("address", "Enter a valid IPv4 or IPv6 address with a prefix length (10.0.0.1/24).")
		}
		in.Address = &addr
	}
	in.Status = choicePtr(f, "status", false, store.IPStatuses...)
	if s, ok := f.Str("dns_name", false, 255); ok {
		if s != "" && !dnsNameRE.MatchString(s) {
			f.Errs.Add("dns_name", "Only alphanumeric characters, asterisks, hyphens, periods, and underscores are allowed in DNS names.")
		}
		in.DNSName = &s
	}
	in.Description = strPtr(f, "description", false, 200)
	iface, err := a.assignment(ctx, f, create)
	if err != nil {
		return in, err
	}
	in.Interface = iface
	return in, f.Err()
}

// assignment reads assigned_object_type and assigned_object_id, which NetBox sets as a
// pair; the only assignable type here is an interface.
func (a *API) assignment(ctx context.Context, f *form, create bool) (store.OptRef, error) {
	typeSent, idSent := f.Has("assigned_object_type"), f.Has("assigned_object_id")
	typeNull := f.IsNull("assigned_object_type")
	if typeSent && !typeNull {
		if _, ok := f.Choice("assigned_object_type", false, store.AssignedInterface); !ok {
			return store.OptRef{}, nil
		}
	}
	switch {
	case idSent && f.IsNull("assigned_object_id"):
		return store.OptRef{Set: true}, nil
	case idSent:
		id, ok := f.Integer("assigned_object_id", false, 1, 1<<53)
		if !ok {
			return store.OptRef{}, nil
		}
		if typeNull {
			f.Errs.Add("assigned_object_type", "This field is required when assigned_object_id is set.")
		}
		found, err := a.DB.Exists(ctx, store.TypeInterface, id)
		if err != nil {
			return store.OptRef{}, err
		}
		if !found {
			f.Errs.Add("assigned_object_id", refMessage(id, nil))
			return store.OptRef{}, nil
		}
		return store.OptRef{Set: true, ID: &id}, nil
	case typeSent && typeNull:
		return store.OptRef{Set: true}, nil
	case typeSent && create:
		f.Errs.Add("assigned_object_id", "This field is required when assigned_object_type is set.")
	}
	return store.OptRef{}, nil
}

func renderIPAddress(r *http.Request, ip store.IPAddress, brief bool) any {
	n := briefIP(r, ip.ID, ip.Address)
	n["description"] = ip.Description
	if brief {
		return n
	}
	n["status"] = choice(ip.Status)
	n["dns_name"] = ip.DNSName
	n["assigned_object_type"], n["assigned_object_id"], n["assigned_object"] = nil, nil, nil
	if ip.InterfaceID != nil {
		n["assigned_object_type"] = store.AssignedInterface
		n["assigned_object_id"] = *ip.InterfaceID
		n["assigned_object"] = briefInterface(r, *ip.InterfaceID, ip.InterfaceName, briefDevice(r, ip.DeviceID, ip.DeviceName))
	}
	n["tags"] = []any{}
	n["custom_fields"] = map[string]any{}
	n["created"] = stamp(ip.Created)
	n["last_updated"] = stamp(ip.LastUpdated)
	return n
}
