package store

// Kind is the type of a model field, used to convert filter and constraint values.
type Kind int

// The field kinds.
const (
	KindInt Kind = iota
	KindString
	KindBool
	KindTime
	KindFloat
)

// Field is one attribute of a model that filters, constraints and references can name.
// A plain field has Column. A foreign key has Column (the key column) and Rel. A
// many-to-many relation has Join and Rel.
type Field struct {
	Column string
	Kind   Kind
	Rel    string
	Join   *Join
}

// Join describes a many-to-many link table: Local refers to this model's id, Remote to
// the related model's id.
type Join struct {
	Table, Local, Remote string
}

// Model is a table seen as an object type ("dcim.device").
type Model struct {
	Name   string
	Table  string
	Fields map[string]Field
}

// The object type names, as NetBox spells them.
const (
	TypeCommand       = "netbox_toolkit_plugin.command"
	TypeCommandLog    = "netbox_toolkit_plugin.commandlog"
	TypeCredentialSet = "netbox_toolkit_plugin.devicecredentialset"
	TypeSite          = "dcim.site"
	TypePlatform      = "dcim.platform"
	TypeDevice        = "dcim.device"
	TypeInterface     = "dcim.interface"
	TypeVLAN          = "ipam.vlan"
	TypeIPAddress     = "ipam.ipaddress"
	TypeTag           = "extras.tag"
	TypeUser          = "users.user"
	TypeGroup         = "users.group"
	TypeToken         = "users.token"
	TypePermission    = "users.objectpermission"
)

func col(c string, k Kind) Field    { return Field{Column: c, Kind: k} }
func fk(c, rel string) Field        { return Field{Column: c, Kind: KindInt, Rel: rel} }
func m2m(t, l, r, rel string) Field { return Field{Kind: KindInt, Rel: rel, Join: &Join{t, l, r}} }

func stamps(f map[string]Field) map[string]Field {
	f["id"] = col("id", KindInt)
	f["created"] = col("created", KindTime)
	f["last_updated"] = col("last_updated", KindTime)
	return f
}

var models = map[string]*Model{
	TypeCommand: {Table: "commands", Fields: stamps(map[string]Field{
		"name": col("name", KindString), "command": col("command", KindString),
		"description": col("description", KindString), "command_type": col("command_type", KindString),
		"platforms": m2m("command_platforms", "command_id", "platform_id", TypePlatform),
		"tags":      m2m("command_tags", "command_id", "tag_id", TypeTag),
	})},
	TypeCommandLog: {Table: "command_logs", Fields: stamps(map[string]Field{
		"command": fk("command_id", TypeCommand), "device": fk("device_id", TypeDevice),
		"user": fk("user_id", TypeUser), "username": col("username", KindString),
		"command_name": col("command_name", KindString), "device_name": col("device_name", KindString),
		"command_type": col("command_type", KindString), "output": col("output", KindString),
		"success": col("success", KindBool), "error_message": col("error_message", KindString),
		"execution_duration": col("execution_duration", KindFloat), "execution_time": col("execution_time", KindTime),
	})},
	TypeCredentialSet: {Table: "credential_sets", Fields: stamps(map[string]Field{
		"name": col("name", KindString), "description": col("description", KindString),
		"owner": fk("owner_id", TypeUser), "is_active": col("is_active", KindBool),
		"username":  col("username", KindString),
		"platforms": m2m("credential_set_platforms", "credential_set_id", "platform_id", TypePlatform),
	})},
	TypeSite: {Table: "sites", Fields: stamps(map[string]Field{
		"name": col("name", KindString), "slug": col("slug", KindString), "description": col("description", KindString),
	})},
	TypePlatform: {Table: "platforms", Fields: stamps(map[string]Field{
		"name": col("name", KindString), "slug": col("slug", KindString),
		"description": col("description", KindString), "driver": col("driver", KindString),
	})},
	TypeDevice: {Table: "devices", Fields: stamps(map[string]Field{
		"name": col("name", KindString), "status": col("status", KindString),
		"description": col("description", KindString),
		"site":        fk("site_id", TypeSite), "platform": fk("platform_id", TypePlatform),
		"primary_ip4": fk("primary_ip4_id", TypeIPAddress), "primary_ip6": fk("primary_ip6_id", TypeIPAddress),
		"tags": m2m("device_tags", "device_id", "tag_id", TypeTag),
	})},
	TypeInterface: {Table: "interfaces", Fields: stamps(map[string]Field{
		"name": col("name", KindString), "type": col("type", KindString), "enabled": col("enabled", KindBool),
		"description": col("description", KindString), "mode": col("mode", KindString),
		"device": fk("device_id", TypeDevice), "untagged_vlan": fk("untagged_vlan_id", TypeVLAN),
		"tagged_vlans": m2m("interface_tagged_vlans", "interface_id", "vlan_id", TypeVLAN),
	})},
	TypeVLAN: {Table: "vlans", Fields: stamps(map[string]Field{
		"vid": col("vid", KindInt), "name": col("name", KindString), "status": col("status", KindString),
		"description": col("description", KindString), "site": fk("site_id", TypeSite),
	})},
	TypeIPAddress: {Table: "ip_addresses", Fields: stamps(map[string]Field{
		"address": col("address", KindString), "status": col("status", KindString),
		"dns_name": col("dns_name", KindString), "description": col("description", KindString),
		"assigned_object_type": col("assigned_object_type", KindString),
		"assigned_object_id":   col("assigned_object_id", KindInt),
		"interface":            fk("assigned_object_id", TypeInterface),
	})},
	TypeTag: {Table: "tags", Fields: stamps(map[string]Field{
		"name": col("name", KindString), "slug": col("slug", KindString),
		"color": col("color", KindString), "description": col("description", KindString),
	})},
	TypeUser: {Table: "users", Fields: stamps(map[string]Field{
		"username": col("username", KindString), "first_name": col("first_name", KindString),
		"last_name": col("last_name", KindString), "email": col("email", KindString),
		"is_active": col("is_active", KindBool), "is_superuser": col("is_superuser", KindBool),
		"date_joined": col("date_joined", KindTime), "last_login": col("last_login", KindTime),
		"groups": m2m("user_groups", "user_id", "group_id", TypeGroup),
	})},
	TypeGroup: {Table: "groups", Fields: stamps(map[string]Field{
		"name":  col("name", KindString),
		"users": m2m("user_groups", "group_id", "user_id", TypeUser),
	})},
	TypeToken: {Table: "tokens", Fields: stamps(map[string]Field{
		"user": fk("user_id", TypeUser), "description": col("description", KindString),
		"write_enabled": col("write_enabled", KindBool), "expires": col("expires", KindTime),
		"last_used": col("last_used", KindTime), "key_prefix": col("key_prefix", KindString),
	})},
	TypePermission: {Table: "object_permissions", Fields: stamps(map[string]Field{
		"name": col("name", KindString), "description": col("description", KindString),
		"enabled": col("enabled", KindBool),
		"users":   m2m("permission_users", "permission_id", "user_id", TypeUser),
		"groups":  m2m("permission_groups", "permission_id", "group_id", TypeGroup),
	})},
}

func init() {
	for name, m := range models {
		m.Name = name
	}
}

// ModelFor returns the model of an object type, or nil.
func ModelFor(objectType string) *Model { return models[objectType] }

// ObjectTypes lists every object type permissions can name.
func ObjectTypes() []string {
	return []string{TypeCommand, TypeCommandLog, TypeCredentialSet, TypeSite, TypePlatform,
		TypeDevice, TypeInterface, TypeVLAN, TypeIPAddress, TypeTag, TypeUser, TypeGroup,
		TypeToken, TypePermission}
}
