package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"fieldkit/store"
	"fieldkit/web"
)

// An import writes the objects of a file as the API would write each (the same parsing,
// checks and permissions), all in one transaction: any problem and nothing is written.
// References name related objects as a person does — a site by its name or slug, a
// device by its name, an interface by its device and name, a VLAN by its VID — and a
// record that names an existing object (the same slug, the same device at the same
// site…) updates it, so that importing a file twice changes nothing.

// importKind is an object type an import file may hold.
type importKind struct {
	name    string   // as files, documents and the API name it: "devices"
	aliases []string // other spellings of it in file names and documents
	res     *Resource
	// ignored are NetBox import columns FieldKit keeps no field for: reported, not refused.
	ignored []string
	// renames maps a column to the field it writes.
	renames map[string]string
	// context are columns read to find related objects rather than written as fields.
	context []string
	// key names the object a record describes (for duplicates within a file) once its
	// references are resolved; match finds it among existing objects (0: none).
	key   func(v map[string]any) string
	match func(ctx context.Context, im *importer, c *converted) (int64, error)
	// prepare adjusts a record's values before they are parsed (an address's
	// assignment from its device and interface); done runs after the write.
	prepare func(ctx context.Context, im *importer, c *converted) error
	done    func(ctx context.Context, im *importer, c *converted, id int64) error
}

// netboxOnly are columns of NetBox's import forms for objects FieldKit has no field for
// (ignoredColumns drops any that becomes one).
var netboxOnly = map[string][]string{
	"sites": {"status", "region", "group", "tenant", "facility", "time_zone", "physical_address", "shipping_address",
		"latitude", "longitude", "comments", "asns", "owner"},
	"platforms": {"manufacturer", "config_template", "parent", "comments", "owner"},
	"devices": {"role", "device_role", "device_type", "manufacturer", "tenant", "location", "rack", "face", "position",
		"serial", "asset_tag", "airflow", "latitude", "longitude", "comments", "cluster", "virtual_chassis",
		"vc_position", "vc_priority", "config_template", "parent", "device_bay", "owner", "oob_ip"},
	"interfaces": {"label", "parent", "bridge", "lag", "mtu", "mac_address", "speed", "duplex", "wwn", "mgmt_only",
		"rf_role", "rf_channel", "poe_mode", "poe_type", "vrf", "module", "mark_connected", "vdcs", "owner"},
	"vlans":        {"group", "tenant", "role", "qinq_role", "qinq_svlan", "comments", "owner"},
	"ip-addresses": {"vrf", "tenant", "role", "nat_inside", "comments", "owner", "virtual_machine", "fhrp_group"},
	"tags":         {"object_types", "weight"},
}

// importOrder is every kind, in the order a document holding several imports them:
// each after the ones it may refer to.
var importOrder []*importKind

func init() {
	nameKey := func(v map[string]any) string { return fmt.Sprint(v["slug"]) }
	importOrder = []*importKind{
		{name: "tags", aliases: []string{"tag"}, res: tagResource, key: nameKey, match: matchSlug(store.TypeTag)},
		{name: "sites", aliases: []string{"site"}, res: siteResource, key: nameKey, match: matchSlug(store.TypeSite)},
		{name: "platforms", aliases: []string{"platform"}, res: platformResource, key: nameKey, match: matchSlug(store.TypePlatform)},
		{name: "vlans", aliases: []string{"vlan"}, res: vlanResource, key: vlanKey, match: matchVLAN},
		{name: "devices", aliases: []string{"device"}, res: deviceResource,
			renames: map[string]string{"primary_ip": "mgmt_ip", "primary_ip4": "mgmt_ip", "primary_ip6": "mgmt_ip", "cf_ssh_port": "ssh_port"},
			key:     func(v map[string]any) string { return fmt.Sprintf("%v/%v", v["site"], v["name"]) }, match: matchDevice},
		{name: "interfaces", aliases: []string{"interface"}, res: interfaceResource, context: []string{"site"},
			key: func(v map[string]any) string { return fmt.Sprintf("%v/%v", v["device"], v["name"]) }, match: matchInterface},
		{name: "ip-addresses", aliases: []string{"ip-address", "ip_addresses", "ipaddresses", "ip-addresses", "ips", "addresses"},
			res: ipAddressResource, context: []string{"site", "device", "interface", "is_primary"},
			key: ipKey, match: matchIP, prepare: assignIP, done: makePrimary},
	}
	for _, k := range importOrder {
		k.ignored = ignoredColumns(k.res.Model, netboxOnly[k.name])
	}
}

// ignoredColumns are the NetBox columns an import skips: those of cols that are no
// field of the model a client may write. A NetBox field FieldKit gains is imported from
// then on, though netboxOnly still names it.
func ignoredColumns(m *store.Model, cols []string) []string {
	var out []string
	for _, c := range cols {
		if f, ok := m.Field(c); ok && f.Writable(true) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// importKindNamed finds a kind by its name or an alias ("" or unknown: nil).
func importKindNamed(name string) *importKind {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, k := range importOrder {
		if name == k.name || slices.Contains(k.aliases, name) {
			return k
		}
	}
	return nil
}

func importKindNames() []string {
	var out []string
	for _, k := range importOrder {
		out = append(out, k.name)
	}
	return out
}

// kindFromName tells the kind from a file name: "devices.csv", "paris-devices.yaml",
// "devices (1).csv" (a browser's second download), "devices-badcol.csv". The last word
// of the name that names a kind wins ("site-devices.csv" holds devices).
func kindFromName(name string) *importKind {
	base := strings.ToLower(name)
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if i := strings.Index(base, "."); i >= 0 {
		base = base[:i]
	}
	if k := importKindNamed(base); k != nil {
		return k
	}
	words := strings.FieldsFunc(base, func(r rune) bool { return !unicode.IsLetter(r) })
	for i := len(words) - 1; i >= 0; i-- {
		if k := importKindNamed(words[i]); k != nil {
			return k
		}
	}
	return nil
}

// kindFromColumns tells the kind from a file's columns (a CSV header, the keys of a
// list's items) when its name does not: the kinds that have a field, or a column
// they read, for most of the columns and whose required fields are all there. It
// returns the kind, or nil with the kinds that fit as well as each other.
func kindFromColumns(cols []string) (*importKind, []*importKind) {
	best, most := []*importKind(nil), 0
	for _, k := range importOrder {
		n := k.knownColumns(cols)
		if n == 0 || !k.hasRequired(cols) {
			continue
		}
		switch {
		case n > most:
			best, most = []*importKind{k}, n
		case n == most:
			best = append(best, k)
		}
	}
	if len(best) == 1 {
		return best[0], nil
	}
	return nil, best
}

// knownColumns counts the columns k reads: its writable fields, renamed and context
// columns, custom fields and ids.
func (k *importKind) knownColumns(cols []string) int {
	n := 0
	for _, col := range cols {
		name := col
		if to, ok := k.renames[col]; ok {
			name = to
		}
		f, ok := k.res.Model.Field(name)
		if ok && f.Writable(true) || name == "id" || strings.HasPrefix(col, "cf_") ||
			slices.Contains(k.context, col) || slices.Contains(k.ignored, col) {
			n++
		}
	}
	return n
}

// hasRequired reports whether the columns hold every field a create requires (a slug
// is made from the name, so it is not).
func (k *importKind) hasRequired(cols []string) bool {
	for _, f := range k.res.Model.Fields {
		if !f.Required || f.Name == "slug" || !f.Writable(true) {
			continue
		}
		if !slices.ContainsFunc(cols, func(c string) bool { return c == f.Name || k.renames[c] == f.Name }) {
			return false
		}
	}
	return true
}

// ImportProblem is one reason an import wrote nothing: where in the file, and why.
type ImportProblem struct {
	Type    string `json:"type"`
	Row     int    `json:"row,omitempty"`  // a CSV row, the header being row 1
	Item    int    `json:"item,omitempty"` // an item of a YAML or JSON list
	Column  string `json:"column,omitempty"`
	Message string `json:"message"`
}

func (p ImportProblem) String() string {
	var b strings.Builder
	b.WriteString(p.Type)
	switch {
	case p.Row > 0:
		fmt.Fprintf(&b, " row %d", p.Row)
	case p.Item > 0:
		fmt.Fprintf(&b, " item %d", p.Item)
	}
	if p.Column != "" {
		fmt.Fprintf(&b, ", column %s", p.Column)
	}
	return b.String() + ": " + p.Message
}

// ImportReport is what an import did, or would do when it is a dry run.
type ImportReport struct {
	DryRun    bool              `json:"dry_run"`
	Created   int               `json:"created"`
	Updated   int               `json:"updated"`
	Unchanged int               `json:"unchanged"`
	Types     []ImportTypeCount `json:"types"`
	Rows      []ImportRow       `json:"rows"` // [] when none, never null
}

// ImportTypeCount is one object type's share of an import.
type ImportTypeCount struct {
	Type           string   `json:"type"`
	Created        int      `json:"created"`
	Updated        int      `json:"updated"`
	Unchanged      int      `json:"unchanged"`
	IgnoredColumns []string `json:"ignored_columns"`
}

// ImportRow is what became of one record.
type ImportRow struct {
	Type    string `json:"type"`
	Row     int    `json:"row,omitempty"`
	Item    int    `json:"item,omitempty"`
	Action  string `json:"action"` // create, update or unchanged
	ID      int64  `json:"id,omitempty"`
	Display string `json:"display"`
}

// ImportError is a refused import: every problem found, in file order.
type ImportError struct{ Problems []ImportProblem }

func (e *ImportError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// maxImportProblems bounds the problems an import reports: past that many the file is
// probably not what it was meant to be.
const maxImportProblems = 100

// ImportInput is a file to import.
type ImportInput struct {
	Name   string // the file name: its extension tells the format, its stem the object type
	Data   []byte
	Type   string // the object type of a list ("" to tell from the name)
	Format string // csv, yaml or json ("" to tell from the name or the content)
	DryRun bool
}

// errDryRun ends a dry run's transaction without committing it.
var errDryRun = errors.New("dry run")

// Import writes the objects of a file as p, all or nothing. A refused import is an
// *ImportError (or a permission error); a dry run reports what it would do and writes
// nothing.
func (a *API) Import(ctx context.Context, p store.Principal, in ImportInput) (*ImportReport, error) {
	sets, err := decodeImport(in.Name, in.Data, in.Type, in.Format)
	if err != nil {
		return nil, &ImportError{Problems: []ImportProblem{{Type: in.Type, Message: err.Error()}}}
	}
	im := &importer{a: a, p: p, report: &ImportReport{DryRun: in.DryRun, Rows: []ImportRow{}}, scopes: map[string]store.Scope{}}
	ctx = web.ContextWithUser(ctx, p)
	err = a.DB.Batch(ctx, func(ctx context.Context) error {
		for _, set := range sets {
			if err := im.run(ctx, set); err != nil {
				return err
			}
		}
		if len(im.problems) > 0 {
			return &ImportError{Problems: im.problems}
		}
		if in.DryRun {
			return errDryRun
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return nil, err
	}
	return im.report, nil
}

// importer is one import under way, inside its transaction.
type importer struct {
	a        *API
	p        store.Principal
	report   *ImportReport
	problems []ImportProblem
	scopes   map[string]store.Scope // "dcim.device add" → scope
	idx      map[string]*keyIndex   // object type → its objects by key
}

// run imports the records of one kind.
func (im *importer) run(ctx context.Context, set importSet) error {
	k := set.kind
	count := ImportTypeCount{Type: k.name, IgnoredColumns: []string{}}
	seen := map[string]*importRecord{}
	for _, rec := range set.recs {
		if len(im.problems) >= maxImportProblems {
			break
		}
		for _, c := range rec.cols {
			if slices.Contains(k.ignored, c) && !slices.Contains(count.IgnoredColumns, c) {
				count.IgnoredColumns = append(count.IgnoredColumns, c)
			}
		}
		row, err := im.record(ctx, k, rec, seen)
		if err != nil {
			return err
		}
		if row == nil {
			continue
		}
		switch row.Action {
		case "create":
			count.Created++
		case "update":
			count.Updated++
		default:
			count.Unchanged++
		}
		im.report.Rows = append(im.report.Rows, *row)
	}
	im.report.Created += count.Created
	im.report.Updated += count.Updated
	im.report.Unchanged += count.Unchanged
	im.report.Types = append(im.report.Types, count)
	return nil
}

// problem records a problem of a record; the import goes on to find the others.
func (im *importer) problem(k *importKind, rec *importRecord, column, format string, args ...any) {
	p := ImportProblem{Type: k.name, Column: column, Message: fmt.Sprintf(format, args...)}
	if rec.item {
		p.Item = rec.pos
	} else {
		p.Row = rec.pos
	}
	im.problems = append(im.problems, p)
}

// record imports one record: its values converted, its object found or made. It
// returns nil (and records the problem) when the record cannot be written; an error
// ends the import (a failure of the store, or a permission the user lacks).
func (im *importer) record(ctx context.Context, k *importKind, rec *importRecord, seen map[string]*importRecord) (*ImportRow, error) {
	m := k.res.Model
	c, ok := im.convert(ctx, k, rec)
	if !ok {
		im.checkRest(ctx, k, rec, c)
		return nil, nil
	}
	raw, colOf := c.raw, c.col
	if k.prepare != nil {
		if err := k.prepare(ctx, im, c); err != nil {
			im.refProblem(k, rec, c, err)
			return nil, nil
		}
	}
	id, err := im.target(ctx, k, rec, c)
	if err != nil || id < 0 {
		return nil, err
	}
	key := k.key(raw)
	if first, dup := seen[key]; dup {
		im.problem(k, rec, "", "the same %s as %s", strings.TrimSuffix(k.name, "s"), first.where())
		return nil, nil
	}
	seen[key] = rec
	row := &ImportRow{Type: k.name, Display: displayOf(k, raw), Action: "create"}
	if rec.item {
		row.Item = rec.pos
	} else {
		row.Row = rec.pos
	}
	if id != 0 && c.autoSlug {
		delete(raw, "slug") // an update keeps the slug the object has
	}
	form := web.NewForm(jsonFields(raw), writableNames(m, id == 0)...)
	if id == 0 {
		scope, err := im.scope(ctx, k, "add")
		if err != nil {
			return nil, err
		}
		v, err := im.a.parseBody(ctx, k.res, m, form, true, nil)
		if im.fieldProblems(k, rec, err, colOf) {
			return nil, nil
		}
		if id, err = im.a.DB.Create(ctx, m, v, scope); im.fieldProblems(k, rec, err, colOf) {
			return nil, nil
		}
		im.index(ctx, k.res.Type()).add(id, v)
	} else {
		row.Action, row.ID = "update", id
		cur, err := im.current(ctx, k, rec, id)
		if err != nil || cur == nil {
			return nil, err
		}
		scope, err := im.scope(ctx, k, "change")
		if err != nil {
			return nil, err
		}
		v, err := im.a.parseBody(ctx, k.res, m, form, false, cur)
		if im.fieldProblems(k, rec, err, colOf) {
			return nil, nil
		}
		if unchanged(m, v, cur) {
			row.Action = "unchanged"
		} else if err := im.a.DB.Update(ctx, m, id, v, scope); im.fieldProblems(k, rec, err, colOf) {
			return nil, nil
		}
	}
	if !im.report.DryRun {
		row.ID = id
	}
	if k.done != nil {
		if err := k.done(ctx, im, c, id); im.fieldProblems(k, rec, err, colOf) {
			return nil, nil
		}
	}
	return row, nil
}

// checkRest reports the problems of a record's other columns once one could not be
// read, so that a file is fixed in one pass: they are parsed as an update would parse
// them (nothing required).
func (im *importer) checkRest(ctx context.Context, k *importKind, rec *importRecord, c *converted) {
	reported := map[string]bool{}
	for _, p := range im.problems {
		if p.Type == k.name && (p.Row == rec.pos && !rec.item || p.Item == rec.pos && rec.item) {
			reported[p.Column] = true
		}
	}
	raw := map[string]any{}
	for f, v := range c.raw {
		if !reported[c.col[f]] && f != "id" {
			raw[f] = v
		}
	}
	_, err := im.a.parseBody(ctx, k.res, k.res.Model, web.NewForm(jsonFields(raw), writableNames(k.res.Model, false)...), false, store.Row{})
	var he *web.Error
	if errors.As(err, &he) {
		im.httpProblems(k, rec, he.Body, c.col)
	}
}

// target is the object a record updates (0: it creates one; -1: a problem recorded).
func (im *importer) target(ctx context.Context, k *importKind, rec *importRecord, c *converted) (int64, error) {
	if v, ok := c.raw["id"]; ok {
		delete(c.raw, "id")
		id, err := strconv.ParseInt(strings.TrimSpace(fmt.Sprint(v)), 10, 64)
		if err != nil || id <= 0 {
			im.problem(k, rec, "id", "%q is not an id", fmt.Sprint(v))
			return -1, nil
		}
		return id, nil
	}
	id, err := k.match(ctx, im, c)
	var p store.Problem
	if errors.As(err, &p) {
		im.problem(k, rec, "", "%s", p)
		return -1, nil
	}
	return id, err
}

// current loads the object a record updates, which the user must be allowed to change.
func (im *importer) current(ctx context.Context, k *importKind, rec *importRecord, id int64) (store.Row, error) {
	view, err := im.scope(ctx, k, "view")
	if err != nil {
		return nil, err
	}
	ok, err := im.a.DB.Exists(ctx, k.res.Type(), id, view.Expr)
	if err != nil {
		return nil, err
	}
	if ok && view.Granted {
		rows, err := im.a.DB.Rows(ctx, k.res.Model, []int64{id})
		if err != nil || len(rows) == 1 {
			return rows[0], err
		}
	}
	im.problem(k, rec, "id", "no %s with id %d", strings.TrimSuffix(k.name, "s"), id)
	return nil, nil
}

// scope is the user's scope for an action on a kind's objects; lacking the permission
// ends the import with a 403.
func (im *importer) scope(ctx context.Context, k *importKind, action string) (store.Scope, error) {
	key := k.res.Type() + " " + action
	if s, ok := im.scopes[key]; ok {
		return s, nil
	}
	s, err := im.a.DB.Scope(ctx, im.p, k.res.Type(), action)
	if err != nil {
		return s, err
	}
	if !s.Granted {
		return s, web.Forbidden(fmt.Sprintf("You do not have permission to %s %s.", action, k.name))
	}
	im.scopes[key] = s
	return s, nil
}

// fieldProblems records the 400 of a parse or a write against the record's columns and
// reports whether there was one.
func (im *importer) fieldProblems(k *importKind, rec *importRecord, err error, colOf map[string]string) bool {
	if err == nil {
		return false
	}
	var fe *store.FieldError
	var he *web.Error
	var p store.Problem
	switch {
	case errors.As(err, &fe):
		msg := fe.Err.Error()
		if errors.Is(err, store.ErrConflict) {
			msg = "another object already has this value"
		}
		im.problem(k, rec, columnOf(colOf, fe.Field), "%s", msg)
	case errors.As(err, &he) && he.Status == 400:
		im.httpProblems(k, rec, he.Body, colOf)
	case errors.As(err, &p):
		im.problem(k, rec, "", "%s", p)
	case errors.Is(err, store.ErrInUse):
		im.problem(k, rec, "", "a related object is missing or in use")
	default:
		im.problem(k, rec, "", "%s", err) // a failure of the store: the transaction is undone
	}
	return true
}

func (im *importer) httpProblems(k *importKind, rec *importRecord, body any, colOf map[string]string) {
	b, _ := json.Marshal(body)
	var fields map[string]any
	if json.Unmarshal(b, &fields) != nil {
		im.problem(k, rec, "", "%s", b)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		im.problem(k, rec, columnOf(colOf, name), "%s", flatten(fields[name]))
	}
}

func columnOf(colOf map[string]string, field string) string {
	if c, ok := colOf[field]; ok {
		return c
	}
	if field == "non_field_errors" || field == "detail" {
		return ""
	}
	return field
}

// flatten joins DRF's lists of messages.
func flatten(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, flatten(e))
		}
		return strings.Join(parts, " ")
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, k+": "+flatten(x[k]))
		}
		return strings.Join(parts, "; ")
	}
	return fmt.Sprint(v)
}

func jsonFields(raw map[string]any) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(raw))
	for k, v := range raw {
		out[k] = mustJSON(v)
	}
	return out
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}

// displayOf is how the report names a record's object.
func displayOf(k *importKind, raw map[string]any) string {
	for _, f := range []string{"name", "address"} {
		if s, ok := raw[f].(string); ok && s != "" {
			return s
		}
	}
	if vid, ok := raw["vid"]; ok {
		return fmt.Sprintf("VLAN %v", vid)
	}
	return k.name
}
