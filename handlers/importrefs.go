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

	"fieldkit/store"
)

// converted is a record turned into what the API takes: references resolved to ids,
// choices to their values, CSV text to numbers and booleans where the field wants one.
type converted struct {
	rec      *importRecord
	raw      map[string]any    // field → value
	col      map[string]string // field → the column it came from, for problems
	extra    map[string]string // the kind's context columns (an address's device)
	autoSlug bool              // the slug was made from the name
}

// convert reads a record's columns; a problem is recorded and ok is false when one
// cannot be read.
func (im *importer) convert(ctx context.Context, k *importKind, rec *importRecord) (*converted, bool) {
	m := k.res.Model
	c := &converted{rec: rec, raw: map[string]any{}, col: map[string]string{}, extra: map[string]string{}}
	cf := map[string]any{}
	var refs []string
	ok := true
	for _, col := range rec.cols {
		val := rec.vals[col]
		if val == nil || val == "" || slices.Contains(k.ignored, col) {
			continue
		}
		if slices.Contains(k.context, col) {
			c.extra[col] = fmt.Sprint(val)
			continue
		}
		if name, isCF := strings.CutPrefix(col, "cf_"); isCF && k.renames[col] == "" {
			cf[name] = typedCell(val)
			continue
		}
		name := col
		if to, ok := k.renames[col]; ok {
			name = to
		}
		if prev, dup := c.col[name]; dup {
			im.problem(k, rec, col, "column %s writes %s too", prev, name)
			ok = false
			continue
		}
		c.col[name] = col
		if name == "id" {
			c.raw["id"] = val
			continue
		}
		f, known := m.Field(name)
		if !known || !f.Writable(true) {
			im.problem(k, rec, col, "unknown column (the columns are the API's field names: %s)", strings.Join(writableNames(m, true), ", "))
			ok = false
			continue
		}
		if f.Rel != "" {
			refs = append(refs, name)
			continue
		}
		v, err := cell(k.res, f, val)
		if err != nil {
			im.problem(k, rec, col, "%s", err)
			ok = false
			continue
		}
		c.raw[name] = v
	}
	if len(cf) > 0 {
		if cur, isMap := c.raw["custom_fields"].(map[string]any); isMap {
			maps.Copy(cur, cf)
		} else {
			c.raw["custom_fields"] = cf
		}
	}
	// References after the other columns, in the declaration's order: a device's site
	// before it, an interface's device before its VLANs.
	for _, f := range m.Fields {
		if !slices.Contains(refs, f.Name) {
			continue
		}
		v, err := im.ref(ctx, &f, rec.vals[c.col[f.Name]], c)
		if err != nil {
			im.refProblem(k, rec, c, &refErr{column: c.col[f.Name], err: err})
			ok = false
			continue
		}
		c.raw[f.Name] = v
	}
	if _, hasSlug := m.Field("slug"); hasSlug && c.raw["slug"] == nil && c.raw["name"] != nil {
		c.raw["slug"], c.autoSlug = store.Slugify(fmt.Sprint(c.raw["name"])), true
	}
	return c, ok
}

// refErr is a reference a column names that cannot be found.
type refErr struct {
	column string
	err    error
}

func (e *refErr) Error() string { return e.err.Error() }
func (e *refErr) Unwrap() error { return e.err }

// refProblem records a reference that cannot be resolved; anything else is the store's.
func (im *importer) refProblem(k *importKind, rec *importRecord, c *converted, err error) {
	var re *refErr
	col := ""
	if errors.As(err, &re) {
		col = re.column
	}
	im.problem(k, rec, col, "%s", err)
}

// cell converts a value of a non-reference field: CSV text to the field's kind, a
// choice's label to its value.
func cell(res *Resource, f *store.Field, val any) (any, error) {
	s, isText := val.(string)
	switch {
	case f.Kind == store.KindJSON && isText:
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, errors.New("not valid JSON")
		}
		return v, nil
	case f.Kind == store.KindBool && isText:
		switch strings.ToLower(s) {
		case "true", "yes", "y", "1", "on":
			return true, nil
		case "false", "no", "n", "0", "off":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false", s)
	case f.Kind == store.KindString && !isText:
		if _, scalar := val.(map[string]any); !scalar {
			s = fmt.Sprint(val)
		}
	}
	if f.Kind != store.KindString {
		return val, nil
	}
	for _, ch := range res.choicesOf(f) {
		if strings.EqualFold(ch.Value, s) || strings.EqualFold(ch.Label, s) {
			return ch.Value, nil
		}
	}
	return s, nil
}

// typedCell is a custom field's value: a number or a boolean when the text is one.
func typedCell(val any) any {
	s, isText := val.(string)
	if !isText {
		return val
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(n, 10) == s {
		return n
	}
	switch strings.ToLower(s) {
	case "true":
		return true
	case "false":
		return false
	}
	return s
}

// ref resolves a reference column: a number is an id (a VLAN's VID, for a VLAN) and an
// object a dict of unique fields (as the API takes them); text names the object as a
// person does. A list field takes a list, or comma-separated text.
func (im *importer) ref(ctx context.Context, f *store.Field, val any, c *converted) (any, error) {
	if f.Join == nil {
		return im.refOne(ctx, f.Rel, val, c)
	}
	var items []any
	switch x := val.(type) {
	case []any:
		items = x
	case string:
		for _, part := range strings.Split(x, ",") {
			if p := strings.TrimSpace(part); p != "" {
				items = append(items, p)
			}
		}
	default:
		items = []any{x}
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		id, err := im.refOne(ctx, f.Rel, it, c)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func (im *importer) refOne(ctx context.Context, typ string, val any, c *converted) (any, error) {
	if n, isNum := val.(float64); isNum && typ == store.TypeVLAN {
		val = strconv.FormatFloat(n, 'f', -1, 64) // a VLAN is named by its VID
	}
	if n, isInt := val.(int); isInt && typ == store.TypeVLAN {
		val = strconv.Itoa(n)
	}
	s, isText := val.(string)
	if !isText {
		return val, nil // an id or a dict of unique fields, checked as the API checks them
	}
	s = strings.TrimSpace(s)
	switch typ {
	case store.TypeDevice:
		return im.device(ctx, s, c.extra["site"])
	case store.TypeVLAN:
		return im.vlan(ctx, s, c)
	}
	ix, err := im.keys(ctx, typ)
	if err != nil {
		return nil, err
	}
	if id, ok := ix.bySlugOrName(s); ok {
		return id, nil
	}
	return nil, store.Problem(fmt.Sprintf("no %s named or with slug %q", typeWord(typ), s))
}

// device finds a device by its name, at a site (name or slug) when given.
func (im *importer) device(ctx context.Context, name, site string) (int64, error) {
	ix, err := im.keys(ctx, store.TypeDevice)
	if err != nil {
		return 0, err
	}
	var siteID int64
	if site != "" {
		id, err := im.refOne(ctx, store.TypeSite, site, &converted{})
		if err != nil {
			return 0, err
		}
		siteID, _ = id.(int64)
	}
	var found []int64
	for _, r := range ix.rows[strings.ToLower(name)] {
		if siteID == 0 || r["site"] == siteID {
			found = append(found, r.ID())
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		if site != "" {
			return 0, store.Problem(fmt.Sprintf("no device named %q at site %q", name, site))
		}
		return 0, store.Problem(fmt.Sprintf("no device named %q", name))
	}
	return 0, store.Problem(fmt.Sprintf("%d devices are named %q: add a site column", len(found), name))
}

// vlan finds a VLAN by its VID (or name) at the record's site — its own site, or its
// device's — else a global one.
func (im *importer) vlan(ctx context.Context, s string, c *converted) (int64, error) {
	ix, err := im.keys(ctx, store.TypeVLAN)
	if err != nil {
		return 0, err
	}
	site, _ := c.raw["site"].(int64)
	if dev, ok := c.raw["device"].(int64); ok && site == 0 {
		site = im.siteOfDevice(ctx, dev)
	}
	for _, at := range []int64{site, 0} {
		var found []int64
		for _, r := range ix.all {
			rs, _ := r["site"].(int64)
			if rs == at && (fmt.Sprint(r["vid"]) == s || strings.EqualFold(fmt.Sprint(r["name"]), s)) {
				found = append(found, r.ID())
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if len(found) > 1 {
			return 0, store.Problem(fmt.Sprintf("%d VLANs match %q", len(found), s))
		}
	}
	return 0, store.Problem(fmt.Sprintf("no VLAN %q at the site or global", s))
}

func (im *importer) siteOfDevice(ctx context.Context, dev int64) int64 {
	ix, err := im.keys(ctx, store.TypeDevice)
	if err != nil {
		return 0
	}
	for _, r := range ix.all {
		if r.ID() == dev {
			s, _ := r["site"].(int64)
			return s
		}
	}
	return 0
}

// typeWord is how a problem names an object type: "site", "platform".
func typeWord(typ string) string {
	_, after, _ := strings.Cut(typ, ".")
	return after
}

// keyIndex is the objects of a type by what identifies them: all of them, and by
// lower-cased name (or slug, or address).
type keyIndex struct {
	fields []string
	all    []store.Row
	rows   map[string][]store.Row
	byID   map[int64]store.Row
}

// keyFields are the fields an import finds objects of a type by.
var keyFields = map[string][]string{
	store.TypeSite: {"name", "slug"}, store.TypePlatform: {"name", "slug"}, store.TypeTag: {"name", "slug"},
	store.TypeDevice: {"name", "site"}, store.TypeInterface: {"name", "device"}, store.TypeVLAN: {"vid", "name", "site"},
	store.TypeIPAddress: {"address", "assigned_object_id"},
}

// keys is the index of a type's objects, loaded at its first use (inside the import's
// transaction, so it sees what the import made so far) and kept up to date.
func (im *importer) keys(ctx context.Context, typ string) (*keyIndex, error) {
	if ix, ok := im.idx[typ]; ok {
		return ix, nil
	}
	fields, ok := keyFields[typ]
	if !ok {
		return nil, fmt.Errorf("import: no key fields for %s", typ)
	}
	rows, err := im.a.DB.Keys(ctx, store.ModelFor(typ), fields...)
	if err != nil {
		return nil, err
	}
	ix := &keyIndex{fields: fields, rows: map[string][]store.Row{}, byID: map[int64]store.Row{}}
	for _, r := range rows {
		ix.put(r)
	}
	if im.idx == nil {
		im.idx = map[string]*keyIndex{}
	}
	im.idx[typ] = ix
	return ix, nil
}

// index is keys for a type whose index must exist (after a write, to add to it).
func (im *importer) index(ctx context.Context, typ string) *keyIndex {
	ix, err := im.keys(ctx, typ)
	if err != nil {
		return &keyIndex{rows: map[string][]store.Row{}, byID: map[int64]store.Row{}}
	}
	return ix
}

func (ix *keyIndex) put(r store.Row) {
	ix.all = append(ix.all, r)
	ix.byID[r.ID()] = r
	for _, f := range []string{"name", "slug", "address"} {
		if s, ok := r[f].(string); ok && slices.Contains(ix.fields, f) {
			ix.rows[strings.ToLower(s)] = append(ix.rows[strings.ToLower(s)], r)
		}
	}
}

// add records an object the import made.
func (ix *keyIndex) add(id int64, v store.Values) {
	r := store.Row{"id": id}
	for _, f := range ix.fields {
		r[f] = v[f]
	}
	ix.put(r)
}

// bySlugOrName finds the one object with this slug, else this name.
func (ix *keyIndex) bySlugOrName(s string) (int64, bool) {
	for _, f := range []string{"slug", "name"} {
		for _, r := range ix.rows[strings.ToLower(s)] {
			if v, _ := r[f].(string); v == s {
				return r.ID(), true
			}
		}
	}
	if rs := ix.rows[strings.ToLower(s)]; len(rs) == 1 {
		return rs[0].ID(), true // the name or slug in another case
	}
	return 0, false
}

// matchSlug finds the existing object with the record's slug, else its name.
func matchSlug(typ string) func(ctx context.Context, im *importer, c *converted) (int64, error) {
	return func(ctx context.Context, im *importer, c *converted) (int64, error) {
		ix, err := im.keys(ctx, typ)
		if err != nil {
			return 0, err
		}
		for _, f := range []string{"slug", "name"} {
			s, _ := c.raw[f].(string)
			for _, r := range ix.rows[strings.ToLower(s)] {
				if r[f] == s && s != "" {
					return r.ID(), nil
				}
			}
		}
		return 0, nil
	}
}

func matchDevice(ctx context.Context, im *importer, c *converted) (int64, error) {
	return matchBy(ctx, im, store.TypeDevice, c, "name", "site")
}

func matchInterface(ctx context.Context, im *importer, c *converted) (int64, error) {
	return matchBy(ctx, im, store.TypeInterface, c, "name", "device")
}

// matchBy finds the existing object whose fields equal the record's.
func matchBy(ctx context.Context, im *importer, typ string, c *converted, fields ...string) (int64, error) {
	ix, err := im.keys(ctx, typ)
	if err != nil {
		return 0, err
	}
	name, _ := c.raw[fields[0]].(string)
	for _, r := range ix.rows[strings.ToLower(name)] {
		same := true
		for _, f := range fields {
			same = same && fmt.Sprint(r[f]) == fmt.Sprint(c.raw[f])
		}
		if same {
			return r.ID(), nil
		}
	}
	return 0, nil
}

func vlanKey(v map[string]any) string { return fmt.Sprintf("%v/%v", v["site"], v["vid"]) }

// matchVLAN finds the VLAN with the record's VID at its site (or global).
func matchVLAN(ctx context.Context, im *importer, c *converted) (int64, error) {
	ix, err := im.keys(ctx, store.TypeVLAN)
	if err != nil {
		return 0, err
	}
	site, _ := c.raw["site"].(int64)
	var found []int64
	for _, r := range ix.all {
		rs, _ := r["site"].(int64)
		if rs == site && fmt.Sprint(r["vid"]) == strings.TrimSpace(fmt.Sprint(c.raw["vid"])) {
			found = append(found, r.ID())
		}
	}
	if len(found) > 1 {
		return 0, store.Problem(fmt.Sprintf("%d VLANs have VID %v there: give the id column", len(found), c.raw["vid"]))
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return 0, nil
}

func ipKey(v map[string]any) string {
	return fmt.Sprintf("%v/%v", normalAddress(v["address"]), v["assigned_object_id"])
}

func normalAddress(v any) string {
	if a, err := store.NormalizeAddress(strings.TrimSpace(fmt.Sprint(v))); err == nil {
		return a
	}
	return fmt.Sprint(v)
}

// matchIP finds the address on the same interface (or unassigned, as the record is),
// else the same address on the device's mgmt0, which the record then moves to the
// interface it names: a management address that an import of devices (mgmt_ip) put on
// mgmt0 and a later file puts on the interface it really is on stays one address, and
// the device's primary IP, rather than becoming two. An address on any other interface
// is another address (the same one in two VRFs).
func matchIP(ctx context.Context, im *importer, c *converted) (int64, error) {
	ix, err := im.keys(ctx, store.TypeIPAddress)
	if err != nil {
		return 0, err
	}
	addr := normalAddress(c.raw["address"])
	iface, _ := c.raw["assigned_object_id"].(int64)
	var ifx *keyIndex
	if iface != 0 {
		if ifx, err = im.keys(ctx, store.TypeInterface); err != nil {
			return 0, err
		}
	}
	var moved store.Row
	for _, r := range ix.rows[strings.ToLower(addr)] {
		ri, _ := r["assigned_object_id"].(int64)
		switch {
		case r["address"] != addr:
		case ri == iface:
			return r.ID(), nil
		case moved == nil && iface != 0 && ri != 0:
			from, to := ifx.byID[ri], ifx.byID[iface]
			if from != nil && to != nil && from["name"] == store.MgmtInterface && from["device"] == to["device"] {
				moved = r
			}
		}
	}
	if moved == nil {
		return 0, nil
	}
	moved["assigned_object_id"] = iface // where it is once this record is written
	return moved.ID(), nil
}

// assignIP assigns an address to the interface its device and interface columns name.
func assignIP(ctx context.Context, im *importer, c *converted) error {
	dev, iface := c.extra["device"], c.extra["interface"]
	switch {
	case dev == "" && iface == "":
		return nil
	case dev == "":
		return &refErr{column: "device", err: store.Problem("needed with the interface column")}
	case iface == "":
		return &refErr{column: "interface", err: store.Problem("needed with the device column")}
	}
	devID, err := im.device(ctx, dev, c.extra["site"])
	if err != nil {
		return &refErr{column: "device", err: err}
	}
	ix, err := im.keys(ctx, store.TypeInterface)
	if err != nil {
		return err
	}
	for _, r := range ix.rows[strings.ToLower(iface)] {
		if r["name"] == iface && r["device"] == devID {
			c.raw["assigned_object_type"], c.raw["assigned_object_id"] = store.AssignedInterface, r.ID()
			c.col["assigned_object_id"] = "interface"
			return nil
		}
	}
	return &refErr{column: "interface", err: store.Problem(fmt.Sprintf("device %q has no interface %q", dev, iface))}
}

// makePrimary makes an address its device's primary IP when the record's is_primary
// says so.
func makePrimary(ctx context.Context, im *importer, c *converted, id int64) error {
	v, set := c.extra["is_primary"]
	if !set {
		return nil
	}
	primary, err := cell(deviceResource, &store.Field{Kind: store.KindBool}, v)
	if err != nil {
		return &store.FieldError{Field: "is_primary", Err: store.Problem(err.Error())}
	}
	iface, _ := c.raw["assigned_object_id"].(int64)
	if primary != true {
		return nil
	}
	if iface == 0 {
		return &store.FieldError{Field: "is_primary", Err: store.Problem("an address must be on a device's interface to be its primary IP")}
	}
	var dev int64
	ix, err := im.keys(ctx, store.TypeInterface)
	if err != nil {
		return err
	}
	for _, r := range ix.all {
		if r.ID() == iface {
			dev, _ = r["device"].(int64)
		}
	}
	field := fmt.Sprintf("primary_ip%d", store.AddressFamily(normalAddress(c.raw["address"])))
	scope, err := im.scope(ctx, importKindNamed("devices"), "change")
	if err != nil {
		return err
	}
	return im.a.DB.Update(ctx, store.Devices, dev, store.Values{field: id}, scope)
}

// unchanged reports whether a parsed update would leave the object as it is.
func unchanged(m *store.Model, v store.Values, cur store.Row) bool {
	for name, val := range v {
		f, ok := m.Field(name)
		if !ok || !sameField(f, val, cur[name]) {
			return false
		}
	}
	return true
}

// sameField compares a parsed value with the loaded one.
func sameField(f *store.Field, val, cur any) bool {
	switch {
	case f.Join != nil:
		ids, _ := val.([]int64)
		rows, _ := cur.([]store.Row)
		have := make([]int64, len(rows))
		for i, r := range rows {
			have[i] = r.ID()
		}
		slices.Sort(have)
		want := slices.Clone(ids)
		slices.Sort(want)
		return slices.Equal(have, want)
	case f.Ref():
		r, _ := cur.(store.Row)
		if val == nil {
			return r == nil
		}
		return r != nil && r.ID() == val
	case f.Kind == store.KindJSON:
		var have map[string]any
		if raw, ok := cur.(json.RawMessage); ok {
			_ = json.Unmarshal(raw, &have)
		}
		var want map[string]any
		switch x := val.(type) {
		case store.Patch:
			for k, v := range x {
				if fmt.Sprint(have[k]) != fmt.Sprint(v) {
					return false
				}
			}
			return true
		case map[string]any:
			want = x
		}
		return fmt.Sprint(have) == fmt.Sprint(want)
	}
	if val == nil || val == "" {
		return cur == nil || cur == ""
	}
	return fmt.Sprint(val) == fmt.Sprint(cur)
}
