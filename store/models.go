package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Kind is the type of a field's value (of each element, for a relation or a list).
type Kind int

// The field kinds.
const (
	KindInt Kind = iota
	KindString
	KindBool
	KindTime
	KindFloat
	KindJSON    // a JSON value: custom fields, constraints
	KindStrings // a JSON list of strings: a permission's object types and actions
)

// Access says whether the API reads and writes a field.
type Access int

// The accesses.
const (
	ReadWrite  Access = iota
	ReadOnly          // shown, never written by a client
	WriteOnly         // written, never shown (a password)
	CreateOnly        // written on create only, shown only in the create response (a token key)
	Internal          // neither: loaded for Compute and Display, and named by constraints
)

// FilterMode makes a field a list filter under its own name.
type FilterMode int

// The filter modes.
const (
	NoFilter      FilterMode = iota
	FilterExact              // ?name=a&name=b
	FilterLookups            // also name__ic, name__n, vid__gte, …
)

// ExportMode says whether an export carries a field.
type ExportMode int

// The export modes.
const (
	NotExported     ExportMode = iota
	Exported                   // always
	ExportOnRequest            // when the export asks for it (a log's output: include_output)
)

// Choice is one allowed value of a field, with the label NetBox shows beside it.
type Choice struct{ Value, Label string }

// Field declares one attribute of an object type: how it is stored, read, written,
// filtered, sorted, searched and documented. Store, API, schema and the web UI's forms
// all read it from here.
type Field struct {
	Name   string // as the API spells it
	Column string // the column on the model's table; "" for a relation, children or a computed value
	Kind   Kind
	Rel    string // the object type a reference (Column) or a relation (Join) points to
	Join   *Join  // the link table of a many-to-many relation
	Child  *Model // rows owned by this object and written whole with it (a command's variables)

	Access   Access
	Required bool // sent on create and full update; never blank, null or an empty list
	Null     bool // may be null
	MaxLen   int  // most characters of a string
	Min, Max int64
	Default  any      // stored on create when the write leaves the field out
	Choices  []Choice // the allowed values, unless another package owns them (handlers' hooks)
	// OpenChoices makes Choices only the known values and their labels: any value that
	// passes Check is allowed.
	OpenChoices bool
	Labeled     bool // read as {"value", "label"}, as NetBox's choice fields
	// Check validates and normalises a value a client writes (after its kind, length and
	// choices were checked); its error text is the client's message.
	Check func(v any) (any, error)
	// Compute derives a read-only value from the loaded row (its columns, references and
	// relations).
	Compute func(r Row) any
	// Secret keeps an Internal column (a password's hash) out of every read: it is only
	// ever written.
	Secret bool
	// Lazy marks a large column (a log's output) that a list loads only when its page
	// shows the field (DB.RowsLeaving); Display and Compute must not read it.
	Lazy bool
	// Select computes a read-only value in SQL, on the row aliased t (a count of related
	// rows); it sorts like a column.
	Select string

	// KeptName makes a reference outlive its object: it names the Internal field that
	// keeps the referenced object's name as it was when the row was written (a log's
	// command). The reference reads as that name, with the id while the object exists;
	// once it is gone, as the name alone (or null, when the field is Null).
	KeptName string
	// Export places the field in the export of the model's rows (CSV and JSON), after id
	// and created, in declaration order.
	Export ExportMode

	// Local marks FieldKit's own settings of an object (a platform's SSH driver): a NetBox
	// sync never writes them, so they stay writable on objects that come from NetBox.
	Local bool

	Nested bool // part of the nested form shown wherever the object is referenced
	Brief  bool // part of ?brief=true besides the nested form
	Filter FilterMode
	Sort   bool // ?ordering=<name>
	Search bool // searched by ?q=
	Label  string
	Doc    string // the schema's description, the form's help
	Schema string // names a fixed component schema for a structured read-only value

	// SortIndex names an index that holds the rows in the field's order: the column, then
	// SortThen (a column that never holds NULL), then the id; ByRowid for the id, which
	// the table itself holds in order. Ordered by the field alone, ties are broken by
	// SortThen in the same direction, then by id, so that a page of a large table can be
	// read along the index rather than sorted (see Order.Index).
	SortIndex, SortThen string
}

// Join describes a many-to-many link table: Local refers to this model's id, Remote to
// the related model's id.
type Join struct {
	Table, Local, Remote string
}

// Filter is a named list filter that is not a field's own: a path through relations
// ("site__slug") or, for what no path expresses, SQL of its own.
type Filter struct {
	Path    string // "platform", "tags__slug", "device__site__slug"
	Lookups bool   // also <name>__ic, __n, __gte…
	// SQL builds the condition for the values given (several values OR together); its
	// error text is the client's message. Kind is then the values' kind.
	SQL  func(vals []string) (Expr, error)
	Kind Kind
	Doc  string
}

// Model declares one object type once: its table, fields, named filters, orderings and
// search. The store loads and writes its rows from it; the API parses, renders,
// filters and documents it from it.
type Model struct {
	Type  string // "dcim.device", as NetBox spells it
	Name  string // "Device", the schema's name
	Table string
	// Fields in the order the schema and the forms show them; "id", "created" and
	// "last_updated" are added by declare.
	Fields       []Field
	Filters      map[string]Filter // filters besides the fields' own
	Orders       map[string]string // orderings besides the fields' own: name → SQL on the row aliased t
	DefaultOrder string
	// Display is the object's "display"; nil shows its name (or username, or address).
	Display func(r Row) string
	// DisplayFields names the fields Display reads. A model that has them (or no
	// Display) and whose objects are their own columns is listed without a map per
	// object (DB.FlatRowsLeaving); Display then sees a Row of these fields alone.
	DisplayFields []string
	// TextSearch, when set, is the condition of ?q=s in place of LIKE on the Search
	// fields: for a table too large to scan, a full-text index (command logs), whose
	// SQL is the store's dialect's (and may read the store first).
	TextSearch func(ctx context.Context, db *DB, s string) (Expr, error)
	// SearchAlso, when set, is one more condition ?q=s matches by, beside the Search
	// fields': what no column of the row holds (a device's primary IP addresses).
	SearchAlso func(s string) Expr
	// List, when set, answers ListKeyed for the model: its count and pages, for a table
	// whose lists need more than SQL on the table (the command logs' counters).
	List func(ctx context.Context, db *DB, q Query) ([]int64, int, []any, error)
	// Prepare, when set, turns a write into what is stored before any of it is: a
	// password into its hash, a token's key into hash and prefix. It may add to v
	// (Internal fields, or a key it generated for the caller to show once).
	Prepare func(v Values, created bool) error
	// Write, when set, runs inside every create and update after the row, its relations
	// and children are written: the rules no column states (a device's primary IP is on
	// one of its interfaces). old is the row's columns before an update, nil on create.
	Write func(ctx context.Context, tx *sql.Tx, id int64, v Values, old Row) error
	// Deleted, when set, runs inside a delete after the row is gone, with its columns as
	// they were: a rule a delete may break (the last active superuser) refuses it there.
	Deleted func(ctx context.Context, tx *sql.Tx, old Row) error
	// Owner, Key and Position describe a child model (Field.Child): the column naming
	// its parent, the field a write matches existing children by, and the column
	// keeping their order. KeyTaken is the client's message when two children of one
	// write share a Key.
	Owner, Key, Position, KeyTaken string
	NoStamps                       bool // the table has no created and last_updated
	// OwnerColumn names the user a row belongs to, who may act on it without any
	// permission (an API token's owner).
	OwnerColumn string
	index       map[string]int
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

// models holds every declared object type by name.
var models = map[string]*Model{}

// declare completes a model (its id and time stamps, its field index) and records it.
func declare(m *Model) *Model {
	head := []Field{{Name: "id", Column: "id", Kind: KindInt, Access: ReadOnly, Filter: FilterLookups, Sort: true, SortIndex: ByRowid}}
	if m.Owner != "" {
		head[0].Filter, head[0].Sort = NoFilter, false
	}
	m.Fields = append(head, m.Fields...)
	if !m.NoStamps {
		m.Fields = append(m.Fields,
			Field{Name: "created", Column: "created", Kind: KindTime, Access: ReadOnly, Sort: true},
			Field{Name: "last_updated", Column: "last_updated", Kind: KindTime, Access: ReadOnly, Sort: true})
	}
	m.index = map[string]int{}
	for i, f := range m.Fields {
		m.index[f.Name] = i
	}
	if m.Owner == "" {
		models[m.Type] = m
	}
	return m
}

// ModelFor returns the model of an object type, or nil.
func ModelFor(objectType string) *Model { return models[objectType] }

// ObjectTypes lists every object type permissions can name.
func ObjectTypes() []string {
	return append([]string{TypeCommand, TypeCommandLog, TypeCredentialSet, TypeSite, TypePlatform,
		TypeDevice, TypeInterface, TypeVLAN, TypeIPAddress, TypeTag, TypeUser, TypeGroup,
		TypeToken, TypePermission, TypeSchedule, TypeWebhook, TypeEvent, TypeDelivery, TypeHubSite, TypeConfigVersion}, ReadOnlyTypes()...)
}

// Field returns the field named name ("pk" is "id").
func (m *Model) Field(name string) (*Field, bool) {
	if name == "pk" {
		name = "id"
	}
	i, ok := m.index[name]
	if !ok {
		return nil, false
	}
	return &m.Fields[i], true
}

// Readable reports whether the API shows the field.
func (f *Field) Readable() bool { return f.Access == ReadWrite || f.Access == ReadOnly }

// Writable reports whether a client may write the field (on create, when create).
func (f *Field) Writable(create bool) bool {
	return f.Access == ReadWrite || f.Access == WriteOnly || (create && f.Access == CreateOnly)
}

// Ref reports whether the field is a reference to one object (a foreign key, or a
// computed reference such as a device's primary_ip).
func (f *Field) Ref() bool { return f.Rel != "" && f.Join == nil }

// stored reports whether the field is a column of the row (and so loadable, sortable
// and comparable).
func (f *Field) stored() bool {
	return f.Column != "" && f.Access != WriteOnly && f.Access != CreateOnly && !f.Secret
}

// selected is the SQL that loads the field: its column, or its Select.
func (f *Field) selected() string {
	if f.Select != "" {
		return f.Select
	}
	return "t." + f.Column
}

// Now, as a field's Default, stores the time of the create.
var Now any = nowDefault{}

type nowDefault struct{}

// Filterable lists every filter of the model by name: the fields' own and the named ones.
func (m *Model) Filterable() map[string]Filter {
	out := map[string]Filter{}
	for _, f := range m.Fields {
		if f.Filter != NoFilter {
			out[f.Name] = Filter{Path: f.Name, Lookups: f.Filter == FilterLookups}
		}
	}
	for name, f := range m.Filters {
		out[name] = f
	}
	return out
}

// Sortable lists every ordering of the model: name → SQL on the row aliased t.
func (m *Model) Sortable() map[string]string {
	out := map[string]string{}
	for _, f := range m.Fields {
		if !f.Sort {
			continue
		}
		out[f.Name] = f.selected()
		if rm := models[f.Rel]; rm != nil && f.Ref() {
			// A reference sorts by what the related object sorts by first (its name).
			out[f.Name] = fmt.Sprintf("(SELECT %s FROM %s WHERE id = t.%s)", rm.sortColumn(), rm.Table, f.Column)
		}
	}
	for name, sql := range m.Orders {
		out[name] = sql
	}
	return out
}

// sortColumn is the column of the model's first default ordering term.
func (m *Model) sortColumn() string {
	first, _, _ := strings.Cut(strings.TrimPrefix(m.DefaultOrder, "-"), ",")
	if f, ok := m.Field(first); ok && f.stored() {
		return f.Column
	}
	return "id"
}

// Ordering parses "name,-created" (the default ordering when empty) into ORDER BY terms;
// an unknown name is an error whose text is the client's message.
func (m *Model) Ordering(spec string) ([]Order, error) {
	if strings.TrimSpace(spec) == "" {
		spec = m.DefaultOrder
	}
	sortable := m.Sortable()
	var out []Order
	then := "" // the SortThen of the last term's field
	for _, term := range strings.Split(spec, ",") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		name := strings.TrimPrefix(term, "-")
		sql, ok := sortable[name]
		if !ok {
			return nil, problemf("Unknown ordering field '%s'.", name)
		}
		o := Order{SQL: sql, Desc: strings.HasPrefix(term, "-")}
		then = ""
		if f, ok := m.Field(name); ok && sql == "t."+f.Column {
			o.NotNull = !f.Null && f.Rel == ""
			o.Index, then = f.SortIndex, f.SortThen
		}
		out = append(out, o)
	}
	switch {
	case len(out) > 1:
		for i := range out {
			out[i].Index = "" // an index holds the order of its own field alone
		}
	case len(out) == 1 && out[0].Index != "" && then != "":
		// Ordered by one field with an index of its own: its ties as that index holds them.
		out = append(out, Order{SQL: "t." + then, Desc: out[0].Desc, NotNull: true})
	}
	return out, nil
}

// Searchable reports whether the model answers ?q=.
func (m *Model) Searchable() bool {
	return slices.ContainsFunc(m.Fields, func(f Field) bool { return f.Search })
}

// Search is the condition of ?q=s: any searched field contains s, case-insensitively
// (or the model's TextSearch, in db's dialect).
func (m *Model) Search(ctx context.Context, db *DB, s string) (Expr, error) {
	if m.TextSearch != nil {
		return m.TextSearch(ctx, db, s)
	}
	var ors []Expr
	pat := "%" + likeEscape(s) + "%"
	for _, f := range m.Fields {
		if !f.Search {
			continue
		}
		col := "t." + f.Column
		if f.Kind != KindString {
			col = "CAST(" + col + " AS TEXT)"
		}
		ors = append(ors, Expr{SQL: col + ` LIKE ? ESCAPE '\'`, Args: []any{pat}})
	}
	if m.SearchAlso != nil {
		ors = append(ors, m.SearchAlso(s))
	}
	return Or(ors...), nil
}

// OwnedBy is the rows the user owns (see OwnerColumn), or false when rows have no owner.
func (m *Model) OwnedBy(userID int64) (Expr, bool) {
	if m.OwnerColumn == "" {
		return Expr{}, false
	}
	return Expr{SQL: "t." + m.OwnerColumn + " = ?", Args: []any{userID}}, true
}

// NameField is the field a reference to the model's objects is named by ("name",
// "username"): the one a kept reference (Field.KeptName) reads its name as.
func (m *Model) NameField() string { return m.nameField() }

// nameField is the name of the field that names an object in its nested form: the first
// nested string ("name", "username", "address").
func (m *Model) nameField() string {
	for _, f := range m.Fields {
		if f.Nested && f.Kind == KindString {
			return f.Name
		}
	}
	return "name"
}

// displayNames are the fields the "display" of a model without Display is taken from:
// the first of them that is a string.
var displayNames = []string{"name", "username", "address"}

// display is a row's "display".
func (m *Model) display(r Row) string {
	if m.Display != nil {
		return m.Display(r)
	}
	for _, k := range displayNames {
		if s, ok := r[k].(string); ok {
			return s
		}
	}
	return ""
}
