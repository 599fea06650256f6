package store

// Object types NetBox has and FieldKit does not manage. NetBox clients read them before
// the ones they need (Ansible's nb_inventory lists regions, racks, roles, tenants,
// clusters and virtual machines on every run, and fails when one is missing), so each
// is served read-only at NetBox's path with NetBox's field names, and stays empty.

// The object types served read-only and empty.
const (
	TypeRegion         = "dcim.region"
	TypeSiteGroup      = "dcim.sitegroup"
	TypeLocation       = "dcim.location"
	TypeRack           = "dcim.rack"
	TypeDeviceRole     = "dcim.devicerole"
	TypeManufacturer   = "dcim.manufacturer"
	TypeDeviceType     = "dcim.devicetype"
	TypeTenant         = "tenancy.tenant"
	TypeCluster        = "virtualization.cluster"
	TypeVirtualMachine = "virtualization.virtualmachine"
	TypeVMInterface    = "virtualization.vminterface"
	TypeService        = "ipam.service"
	TypePrefix         = "ipam.prefix"
)

// readOnlyModel declares a model whose every field only the server writes.
func readOnlyModel(m *Model) *Model {
	for i := range m.Fields {
		if m.Fields[i].Access != Internal {
			m.Fields[i].Access = ReadOnly
		}
	}
	return declare(m)
}

// organizational is the shape of NetBox's simple named objects: name, slug, description.
func organizational(typ, name, table string, extra ...Field) *Model {
	return readOnlyModel(&Model{
		Type: typ, Name: name, Table: table, DefaultOrder: "name",
		Fields: append([]Field{nameField(100, ""), slugField}, append(extra, description(200))...),
	})
}

// The read-only object types.
var (
	Regions = organizational(TypeRegion, "Region", "regions",
		Field{Name: "parent", Column: "parent_id", Kind: KindInt, Rel: TypeRegion, Null: true, Sort: true})
	SiteGroups = organizational(TypeSiteGroup, "SiteGroup", "site_groups",
		Field{Name: "parent", Column: "parent_id", Kind: KindInt, Rel: TypeSiteGroup, Null: true, Sort: true})
	Locations = readOnlyModel(&Model{
		Type: TypeLocation, Name: "Location", Table: "locations", DefaultOrder: "name",
		Fields: []Field{nameField(100, "unique per site"), slugField,
			{Name: "site", Column: "site_id", Kind: KindInt, Rel: TypeSite, Sort: true},
			{Name: "parent", Column: "parent_id", Kind: KindInt, Rel: TypeLocation, Null: true, Sort: true},
			{Name: "status", Column: "status", Kind: KindString, Choices: LocationStatuses, Labeled: true, Filter: FilterLookups, Sort: true},
			description(200)},
		Filters: map[string]Filter{
			"site_id": {Path: "site", Lookups: true, Doc: "site id"},
			"site":    {Path: "site__slug", Lookups: true, Doc: "site slug"},
		},
	})
	Racks = readOnlyModel(&Model{
		Type: TypeRack, Name: "Rack", Table: "racks", DefaultOrder: "name",
		Fields: []Field{nameField(100, "unique per location"),
			{Name: "site", Column: "site_id", Kind: KindInt, Rel: TypeSite, Sort: true},
			{Name: "location", Column: "location_id", Kind: KindInt, Rel: TypeLocation, Null: true, Sort: true},
			{Name: "status", Column: "status", Kind: KindString, Choices: LocationStatuses, Labeled: true, Filter: FilterLookups, Sort: true},
			description(200)},
		Filters: map[string]Filter{
			"site_id":     {Path: "site", Lookups: true, Doc: "site id"},
			"site":        {Path: "site__slug", Lookups: true, Doc: "site slug"},
			"location_id": {Path: "location", Lookups: true, Doc: "location id"},
		},
	})
	DeviceRoles = organizational(TypeDeviceRole, "DeviceRole", "device_roles",
		Field{Name: "color", Column: "color", Kind: KindString, Nested: false, Filter: FilterLookups, Sort: true, Label: "Colour"})
	Manufacturers = organizational(TypeManufacturer, "Manufacturer", "manufacturers")
	DeviceTypes   = readOnlyModel(&Model{
		Type: TypeDeviceType, Name: "DeviceType", Table: "device_types", DefaultOrder: "model",
		Display: func(r Row) string { s, _ := r["model"].(string); return s },
		Fields: []Field{
			{Name: "manufacturer", Column: "manufacturer_id", Kind: KindInt, Rel: TypeManufacturer, Nested: true, Sort: true},
			{Name: "model", Column: "model", Kind: KindString, Nested: true, Filter: FilterLookups, Sort: true, Search: true},
			slugField, description(200)},
		Filters: map[string]Filter{
			"manufacturer_id": {Path: "manufacturer", Lookups: true, Doc: "manufacturer id"},
			"manufacturer":    {Path: "manufacturer__slug", Lookups: true, Doc: "manufacturer slug"},
		},
	})
	Tenants  = organizational(TypeTenant, "Tenant", "tenants")
	Clusters = readOnlyModel(&Model{
		Type: TypeCluster, Name: "Cluster", Table: "clusters", DefaultOrder: "name",
		Fields: []Field{nameField(100, ""),
			{Name: "status", Column: "status", Kind: KindString, Choices: LocationStatuses, Labeled: true, Filter: FilterLookups, Sort: true},
			description(200)},
	})
	VirtualMachines = readOnlyModel(&Model{
		Type: TypeVirtualMachine, Name: "VirtualMachine", Table: "virtual_machines", DefaultOrder: "name",
		Fields: []Field{nameField(64, ""),
			{Name: "status", Column: "status", Kind: KindString, Choices: VMStatuses, Labeled: true, Filter: FilterLookups, Sort: true},
			{Name: "site", Column: "site_id", Kind: KindInt, Rel: TypeSite, Null: true, Sort: true},
			{Name: "cluster", Column: "cluster_id", Kind: KindInt, Rel: TypeCluster, Null: true, Sort: true},
			{Name: "role", Column: "role_id", Kind: KindInt, Rel: TypeDeviceRole, Null: true, Sort: true},
			{Name: "tenant", Column: "tenant_id", Kind: KindInt, Rel: TypeTenant, Null: true, Sort: true},
			{Name: "platform", Column: "platform_id", Kind: KindInt, Rel: TypePlatform, Null: true, Sort: true},
			{Name: "primary_ip", Kind: KindInt, Rel: TypeIPAddress, Null: true, Compute: primaryIP},
			{Name: "primary_ip4", Column: "primary_ip4_id", Kind: KindInt, Rel: TypeIPAddress, Null: true},
			{Name: "primary_ip6", Column: "primary_ip6_id", Kind: KindInt, Rel: TypeIPAddress, Null: true},
			description(200), customFields("", nil)},
		Filters: map[string]Filter{
			"site_id":     {Path: "site", Lookups: true, Doc: "site id"},
			"site":        {Path: "site__slug", Lookups: true, Doc: "site slug"},
			"cluster_id":  {Path: "cluster", Lookups: true, Doc: "cluster id"},
			"role_id":     {Path: "role", Lookups: true, Doc: "role id"},
			"role":        {Path: "role__slug", Lookups: true, Doc: "role slug"},
			"tenant_id":   {Path: "tenant", Lookups: true, Doc: "tenant id"},
			"tenant":      {Path: "tenant__slug", Lookups: true, Doc: "tenant slug"},
			"platform_id": {Path: "platform", Lookups: true, Doc: "platform id"},
			"platform":    {Path: "platform__slug", Lookups: true, Doc: "platform slug"},
		},
	})
	VMInterfaces = readOnlyModel(&Model{
		Type: TypeVMInterface, Name: "VMInterface", Table: "vm_interfaces", DefaultOrder: "virtual_machine,name",
		Fields: []Field{
			{Name: "virtual_machine", Column: "virtual_machine_id", Kind: KindInt, Rel: TypeVirtualMachine, Nested: true, Sort: true},
			nameField(64, "unique per virtual machine"),
			{Name: "enabled", Column: "enabled", Kind: KindBool, Filter: FilterExact, Sort: true},
			description(200)},
		Filters: map[string]Filter{
			"virtual_machine_id": {Path: "virtual_machine", Lookups: true, Doc: "virtual machine id"},
			"virtual_machine":    {Path: "virtual_machine__name", Lookups: true, Doc: "virtual machine name"},
		},
	})
	Services = readOnlyModel(&Model{
		Type: TypeService, Name: "Service", Table: "services", DefaultOrder: "name",
		Fields: []Field{
			{Name: "device", Column: "device_id", Kind: KindInt, Rel: TypeDevice, Null: true, Sort: true},
			{Name: "virtual_machine", Column: "virtual_machine_id", Kind: KindInt, Rel: TypeVirtualMachine, Null: true, Sort: true},
			nameField(100, ""),
			{Name: "protocol", Column: "protocol", Kind: KindString, Choices: []Choice{{"tcp", "TCP"}, {"udp", "UDP"}, {"sctp", "SCTP"}},
				Labeled: true, Nested: true, Filter: FilterLookups, Sort: true},
			{Name: "ports", Column: "ports", Kind: KindJSON, Default: []any{}, Nested: true, Schema: "PortNumbers", Doc: "port numbers"},
			description(200)},
		Filters: map[string]Filter{
			"device_id":          {Path: "device", Lookups: true, Doc: "device id"},
			"device":             {Path: "device__name", Lookups: true, Doc: "device name"},
			"virtual_machine_id": {Path: "virtual_machine", Lookups: true, Doc: "virtual machine id"},
			"virtual_machine":    {Path: "virtual_machine__name", Lookups: true, Doc: "virtual machine name"},
		},
	})
	Prefixes = readOnlyModel(&Model{
		Type: TypePrefix, Name: "Prefix", Table: "prefixes", DefaultOrder: "prefix",
		Fields: []Field{
			{Name: "prefix", Column: "prefix", Kind: KindString, Nested: true, Filter: FilterLookups, Sort: true, Search: true},
			{Name: "site", Column: "site_id", Kind: KindInt, Rel: TypeSite, Null: true, Sort: true},
			{Name: "status", Column: "status", Kind: KindString, Choices: LocationStatuses, Labeled: true, Filter: FilterLookups, Sort: true},
			description(200)},
		Filters: map[string]Filter{
			"site_id": {Path: "site", Lookups: true, Doc: "site id"},
			"site":    {Path: "site__slug", Lookups: true, Doc: "site slug"},
		},
	})
)

// LocationStatuses are the statuses NetBox gives locations, racks, clusters and prefixes
// (each has a few of its own besides; these objects are never written here).
var LocationStatuses = choices("planned", "staging", "active", "decommissioning", "retired")

// VMStatuses are the values of a virtual machine's status.
var VMStatuses = choices("offline", "active", "planned", "staged", "failed", "decommissioning")

// ReadOnlyTypes lists the object types served read-only and empty, in the order their
// API sections list them.
func ReadOnlyTypes() []string {
	return []string{TypeRegion, TypeSiteGroup, TypeLocation, TypeRack, TypeDeviceRole, TypeManufacturer,
		TypeDeviceType, TypeTenant, TypeCluster, TypeVirtualMachine, TypeVMInterface, TypeService, TypePrefix}
}
