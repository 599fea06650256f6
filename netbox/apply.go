package netbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"fieldkit/store"
)

// apply writes what a run staged into the inventory, in one transaction: objects
// NetBox has are created or updated (an object made here with the same natural key —
// a site's slug, a device's site and name — is adopted rather than duplicated), then
// the synced objects NetBox no longer has are deleted, or kept as FieldKit's own when
// something here still uses them.
func apply(ctx context.Context, db *store.DB, runID int64, rep *Report, allowEmpty bool) error {
	a := &applier{db: db, run: runID, rep: rep, allowEmpty: allowEmpty, local: map[string]map[int64]int64{}}
	ctx = store.Syncing(ctx)
	return db.Batch(ctx, func(ctx context.Context) error {
		for _, step := range []func(context.Context) error{a.tags, a.sites, a.platforms, a.vlans, a.devices, a.interfaces,
			a.addresses, a.primaries, a.removeGone} {
			if err := step(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// applier is one apply under way.
type applier struct {
	db         *store.DB
	run        int64
	rep        *Report
	allowEmpty bool                       // a sync that finds no device may remove every synced one
	local      map[string]map[int64]int64 // object type → NetBox id → local id, of what NetBox has
}

func (a *applier) count(kind string) *Count {
	c, ok := a.rep.Objects[kind]
	if !ok {
		c = &Count{}
		a.rep.Objects[kind] = c
	}
	return c
}

func (a *applier) warn(format string, args ...any) {
	if len(a.rep.Warnings) < 100 {
		a.rep.Warnings = append(a.rep.Warnings, fmt.Sprintf(format, args...))
	}
}

// staged decodes what the run fetched of a kind.
func staged[T any](ctx context.Context, a *applier, kind string) ([]T, error) {
	objs, err := a.db.StagedObjects(ctx, a.run, kind)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		var v T
		if err := json.Unmarshal(o.Body, &v); err != nil {
			return nil, fmt.Errorf("%s %d: not NetBox's shape: %w", kind, o.NetBoxID, err)
		}
		out = append(out, v)
	}
	a.count(kind).Fetched = len(out)
	return out, nil
}

// existing indexes a type's objects: synced ones by NetBox id, and the ones made here
// by their natural keys (a site by its slug and by its name).
type existing struct {
	synced map[int64]store.Row
	byKey  map[string]store.Row
}

func (a *applier) existing(ctx context.Context, m *store.Model, keys func(store.Row) []string, fields ...string) (*existing, error) {
	rows, err := a.db.Keys(ctx, m, append([]string{"netbox_id", "netbox_updated"}, fields...)...)
	if err != nil {
		return nil, err
	}
	ex := &existing{synced: map[int64]store.Row{}, byKey: map[string]store.Row{}}
	for _, r := range rows {
		if nb, ok := r["netbox_id"].(int64); ok {
			ex.synced[nb] = r
			continue
		}
		for _, k := range keys(r) {
			ex.byKey[k] = r
		}
	}
	return ex, nil
}

// find is the object made here that a NetBox object's keys name.
func (ex *existing) find(keys []string) store.Row {
	for _, k := range keys {
		if r, ok := ex.byKey[k]; ok {
			return r
		}
	}
	return nil
}

// adopted takes an object out of the index: it is synced now.
func (ex *existing) adopted(r store.Row) {
	for k, r2 := range ex.byKey {
		if r2.ID() == r.ID() {
			delete(ex.byKey, k)
		}
	}
}

// one is a single natural key.
func one(k string) []string { return []string{k} }

// slugOrName are the keys of an object with a slug and a name: either may match.
func slugOrName(slug, name any) []string {
	return []string{"slug:" + fmt.Sprint(slug), "name:" + strings.ToLower(fmt.Sprint(name))}
}

// upsert writes one NetBox object: skipped when NetBox's last_updated is what the
// last sync saw, else an update of the synced object, else an adoption of a local one
// with the same key, else a create. It records the local id.
func (a *applier) upsert(ctx context.Context, m *store.Model, kind string, ex *existing, nbID int64, updated string, keys []string, v store.Values) (int64, error) {
	c := a.count(kind)
	if a.local[m.Type] == nil {
		a.local[m.Type] = map[int64]int64{}
	}
	cur, synced := ex.synced[nbID]
	if synced && cur["netbox_updated"] == updated && updated != "" {
		c.Unchanged++
		a.local[m.Type][nbID] = cur.ID()
		return cur.ID(), nil
	}
	adopt := ex.find(keys)
	var id int64
	var err error
	switch {
	case synced:
		id, err = cur.ID(), a.db.Update(ctx, m, cur.ID(), v, store.All)
	case adopt != nil:
		id, err = adopt.ID(), a.db.Update(ctx, m, adopt.ID(), v, store.All)
	default:
		id, err = a.db.Create(ctx, m, v, store.All)
	}
	var fe *store.FieldError
	if errors.As(err, &fe) && errors.Is(err, store.ErrConflict) {
		err = fmt.Errorf("another %s made here already has this %s", strings.TrimSuffix(kind, "s"), fe.Field)
	}
	if err != nil {
		return 0, fmt.Errorf("%s %d (%s): %w", strings.TrimSuffix(kind, "s"), nbID, describe(v), err)
	}
	if synced || adopt != nil {
		c.Updated++
	} else {
		c.Created++
	}
	if adopt != nil {
		ex.adopted(adopt)
	}
	a.local[m.Type][nbID] = id
	return id, a.db.SetNetBoxID(ctx, m, id, nbID, updated)
}

// describe names an object in a message.
func describe(v store.Values) string {
	for _, k := range []string{"name", "address", "vid"} {
		if s, ok := v[k]; ok {
			return fmt.Sprint(s)
		}
	}
	return "?"
}

// refs are the local ids of NetBox objects of a type that this sync brought.
func (a *applier) refs(typ string, nb []ref) []int64 {
	out := []int64{}
	for _, r := range nb {
		if id, ok := a.local[typ][r.ID]; ok {
			out = append(out, id)
		}
	}
	return out
}

// refOf is the local id of a NetBox reference, nil when none or not synced.
func (a *applier) refOf(typ string, r *ref) any {
	if r == nil {
		return nil
	}
	if id, ok := a.local[typ][r.ID]; ok {
		return id
	}
	return nil
}

func customFields(cf map[string]any) map[string]any {
	if cf == nil {
		return map[string]any{}
	}
	return cf
}

func (a *applier) tags(ctx context.Context) error {
	objs, err := staged[nbTag](ctx, a, "tags")
	if err != nil {
		return err
	}
	ex, err := a.existing(ctx, store.Tags, func(r store.Row) []string { return slugOrName(r["slug"], r["name"]) }, "slug", "name")
	if err != nil {
		return err
	}
	for _, t := range objs {
		color := strings.ToLower(t.Color)
		if color == "" {
			color = "9e9e9e"
		}
		v := store.Values{"name": t.Name, "slug": t.Slug, "color": color, "description": t.Description}
		if _, err := a.upsert(ctx, store.Tags, "tags", ex, t.ID, t.LastUpdated, slugOrName(t.Slug, t.Name), v); err != nil {
			return err
		}
	}
	return nil
}

// named writes the objects of a type with a name and a slug (sites, platforms).
func (a *applier) named(ctx context.Context, m *store.Model, kind string) error {
	objs, err := staged[nbSite](ctx, a, kind)
	if err != nil {
		return err
	}
	ex, err := a.existing(ctx, m, func(r store.Row) []string { return slugOrName(r["slug"], r["name"]) }, "slug", "name")
	if err != nil {
		return err
	}
	for _, o := range objs {
		v := store.Values{"name": o.Name, "slug": o.Slug, "description": o.Description,
			"tags": a.refs(store.TypeTag, o.Tags), "custom_fields": customFields(o.CustomFields)}
		if _, err := a.upsert(ctx, m, kind, ex, o.ID, o.LastUpdated, slugOrName(o.Slug, o.Name), v); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) sites(ctx context.Context) error { return a.named(ctx, store.Sites, "sites") }

func (a *applier) platforms(ctx context.Context) error {
	return a.named(ctx, store.Platforms, "platforms")
}

func (a *applier) vlans(ctx context.Context) error {
	objs, err := staged[nbVLAN](ctx, a, "vlans")
	if err != nil {
		return err
	}
	key := func(site, vid any) string { return fmt.Sprintf("%v/%v", site, vid) }
	ex, err := a.existing(ctx, store.VLANs, func(r store.Row) []string { return one(key(r["site"], r["vid"])) }, "site", "vid")
	if err != nil {
		return err
	}
	for _, o := range objs {
		site := a.refOf(store.TypeSite, o.Site)
		v := store.Values{"vid": o.VID, "name": o.Name, "site": site, "status": oneOf(o.Status.value(), store.VLANStatuses, "active"),
			"description": o.Description, "tags": a.refs(store.TypeTag, o.Tags), "custom_fields": customFields(o.CustomFields)}
		if _, err := a.upsert(ctx, store.VLANs, "vlans", ex, o.ID, o.LastUpdated, one(key(site, o.VID)), v); err != nil {
			return err
		}
	}
	return nil
}

// oneOf is a choice's value when FieldKit knows it, else def.
func oneOf(v string, choices []store.Choice, def string) string {
	if slices.ContainsFunc(choices, func(c store.Choice) bool { return c.Value == v }) {
		return v
	}
	return def
}

func (a *applier) devices(ctx context.Context) error {
	objs, err := staged[nbDevice](ctx, a, "devices")
	if err != nil {
		return err
	}
	key := func(site, name any) string { return fmt.Sprintf("%v/%v", site, name) }
	ex, err := a.existing(ctx, store.Devices, func(r store.Row) []string { return one(key(r["site"], r["name"])) }, "site", "name")
	if err != nil {
		return err
	}
	if len(objs) == 0 && len(ex.synced) > 0 {
		if !a.allowEmpty {
			return fmt.Errorf("%w: NetBox answered no device for the filter while %d devices here came from it; "+
				"check inventory.netbox_filter and that the token may still view them in NetBox. If NetBox really has none, "+
				"run `fieldkit inventory sync --allow-empty` to remove them", ErrEmpty, len(ex.synced))
		}
		a.warn("the device filter matched no device: every device synced before is gone from FieldKit")
	}
	for _, o := range objs {
		site := a.refOf(store.TypeSite, o.Site)
		switch {
		case o.Name == nil || *o.Name == "":
			a.warn("device %d has no name: not synced (FieldKit needs one)", o.ID)
			continue
		case site == nil:
			a.warn("device %s: its site was not readable: not synced", *o.Name)
			continue
		}
		status := oneOf(o.Status.value(), store.DeviceStatuses, "active")
		v := store.Values{"name": *o.Name, "site": site, "platform": a.refOf(store.TypePlatform, o.Platform), "status": status,
			"description": o.Description, "tags": a.refs(store.TypeTag, o.Tags), "custom_fields": customFields(o.CustomFields)}
		if _, err := a.upsert(ctx, store.Devices, "devices", ex, o.ID, o.LastUpdated, one(key(site, *o.Name)), v); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) interfaces(ctx context.Context) error {
	objs, err := staged[nbInterface](ctx, a, "interfaces")
	if err != nil {
		return err
	}
	key := func(dev, name any) string { return fmt.Sprintf("%v/%v", dev, name) }
	ex, err := a.existing(ctx, store.Interfaces, func(r store.Row) []string { return one(key(r["device"], r["name"])) }, "device", "name")
	if err != nil {
		return err
	}
	for _, o := range objs {
		dev := a.refOf(store.TypeDevice, o.Device)
		if dev == nil {
			continue // its device was not synced (no name, no site): warned there
		}
		mode := oneOf(o.Mode.value(), store.InterfaceModes, "")
		v := store.Values{"device": dev, "name": o.Name, "type": o.Type.value(), "enabled": o.Enabled == nil || *o.Enabled,
			"description": o.Description, "mode": mode, "untagged_vlan": a.refOf(store.TypeVLAN, o.UntaggedVLAN),
			"tagged_vlans": a.refs(store.TypeVLAN, o.TaggedVLANs), "tags": a.refs(store.TypeTag, o.Tags),
			"custom_fields": customFields(o.CustomFields)}
		if v["type"] == "" {
			v["type"] = "other"
		}
		_, err := a.upsert(ctx, store.Interfaces, "interfaces", ex, o.ID, o.LastUpdated, one(key(dev, o.Name)), v)
		var fe *store.FieldError
		if errors.As(err, &fe) && (fe.Field == "untagged_vlan" || fe.Field == "tagged_vlans") {
			// NetBox allows VLANs FieldKit's 802.1Q rules refuse (a VLAN group wider
			// than the device's site): the interface comes without them.
			a.warn("interface %d: %v: synced without its VLANs", o.ID, err)
			v["untagged_vlan"], v["tagged_vlans"] = nil, []int64{}
			_, err = a.upsert(ctx, store.Interfaces, "interfaces", ex, o.ID, o.LastUpdated, one(key(dev, o.Name)), v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) addresses(ctx context.Context) error {
	objs, err := staged[nbIPAddress](ctx, a, "ip-addresses")
	if err != nil {
		return err
	}
	key := func(addr, iface any) string { return fmt.Sprintf("%v/%v", addr, iface) }
	ex, err := a.existing(ctx, store.IPAddresses, func(r store.Row) []string { return one(key(r["address"], r["assigned_object_id"])) },
		"address", "assigned_object_id")
	if err != nil {
		return err
	}
	for _, o := range objs {
		addr, err := store.NormalizeAddress(o.Address)
		if err != nil {
			a.warn("IP address %d: %q is not an address with a prefix length: not synced", o.ID, o.Address)
			continue
		}
		var iface any
		if o.AssignedObjectType != nil && *o.AssignedObjectType == store.AssignedInterface && o.AssignedObjectID != nil {
			iface = a.refOf(store.TypeInterface, &ref{ID: *o.AssignedObjectID})
		}
		v := store.Values{"address": addr, "status": oneOf(o.Status.value(), store.IPStatuses, "active"), "dns_name": o.DNSName,
			"description": o.Description, "assigned_object_id": iface, "tags": a.refs(store.TypeTag, o.Tags),
			"custom_fields": customFields(o.CustomFields)}
		if _, err := a.upsert(ctx, store.IPAddresses, "ip-addresses", ex, o.ID, o.LastUpdated, one(key(addr, iface)), v); err != nil {
			return err
		}
	}
	return nil
}

// primaries points each synced device at its primary IPs, once they exist.
func (a *applier) primaries(ctx context.Context) error {
	objs, err := staged[nbDevice](ctx, a, "devices")
	if err != nil {
		return err
	}
	a.count("devices").Fetched = len(objs)
	rows, err := a.db.Keys(ctx, store.Devices, "primary_ip4", "primary_ip6")
	if err != nil {
		return err
	}
	cur := map[int64]store.Row{}
	for _, r := range rows {
		cur[r.ID()] = r
	}
	for _, o := range objs {
		id, ok := a.local[store.TypeDevice][o.ID]
		if !ok {
			continue
		}
		v := store.Values{}
		for _, p := range []struct {
			field string
			nb    *ref
		}{{"primary_ip4", o.PrimaryIP4}, {"primary_ip6", o.PrimaryIP6}} {
			want := a.refOf(store.TypeIPAddress, p.nb)
			if p.nb != nil && want == nil {
				a.warn("device %d: its %s (NetBox address %d) is not on one of its interfaces: not set", o.ID, p.field, p.nb.ID)
			}
			if fmt.Sprint(cur[id][p.field]) != fmt.Sprint(want) {
				v[p.field] = want
			}
		}
		if len(v) > 0 {
			if err := a.db.Update(ctx, store.Devices, id, v, store.All); err != nil {
				return fmt.Errorf("device %d: primary IP: %w", o.ID, err)
			}
		}
	}
	return nil
}

// removeGone deletes the synced objects NetBox no longer has (that the filter no longer
// selects), the dependents first; one that something here still uses is kept as
// FieldKit's own (see store.InUse), a device then offline.
func (a *applier) removeGone(ctx context.Context) error {
	for _, g := range []struct {
		m    *store.Model
		kind string
	}{{store.IPAddresses, "ip-addresses"}, {store.Interfaces, "interfaces"}, {store.Devices, "devices"},
		{store.VLANs, "vlans"}, {store.Platforms, "platforms"}, {store.Sites, "sites"}, {store.Tags, "tags"}} {
		rows, err := a.db.Keys(ctx, g.m, "netbox_id")
		if err != nil {
			return err
		}
		c := a.count(g.kind)
		for _, r := range rows {
			nb, synced := r["netbox_id"].(int64)
			if _, still := a.local[g.m.Type][nb]; !synced || still {
				continue
			}
			used, err := a.db.InUse(ctx, g.m.Type, r.ID())
			if err != nil {
				return err
			}
			if used {
				err, c.Kept = a.db.Unsync(ctx, g.m, r.ID()), c.Kept+1
			} else {
				err, c.Deleted = a.db.Delete(ctx, g.m, r.ID()), c.Deleted+1
			}
			if err != nil && !errors.Is(err, store.ErrNotFound) { // an address gone with its interface
				return fmt.Errorf("%s %d: %w", strings.TrimSuffix(g.kind, "s"), r.ID(), err)
			}
		}
	}
	return nil
}
