package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func openInvDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustID[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// lab is one site with a device on an EOS platform, two interfaces, VLANs and
// addresses.
type lab struct {
	site, other, platform, device, gi1, gi2 int64
	vlanSite, vlanGlobal, vlanOther         int64
	ip4, ip6, loose                         int64
}

func newLab(t *testing.T, db *DB) lab {
	ctx := context.Background()
	id := mustID[int64](t)
	var l lab
	l.site = id(db.Create(ctx, Sites, Values{"name": "North", "slug": "north"}, All))
	l.other = id(db.Create(ctx, Sites, Values{"name": "South", "slug": "south"}, All))
	l.platform = id(db.Create(ctx, Platforms, Values{"name": "EOS", "slug": "eos"}, All))
	l.device = id(db.Create(ctx, Devices, Values{"name": "sw1", "site": l.site, "platform": l.platform,
		"custom_fields": map[string]any{"ssh_port": 2222.0}}, All))
	l.gi1 = id(db.Create(ctx, Interfaces, Values{"device": l.device, "name": "Gi0/1"}, All))
	l.gi2 = id(db.Create(ctx, Interfaces, Values{"device": l.device, "name": "Gi0/2", "enabled": false}, All))
	l.vlanSite = id(db.Create(ctx, VLANs, Values{"vid": int64(30), "name": "users", "site": l.site}, All))
	l.vlanGlobal = id(db.Create(ctx, VLANs, Values{"vid": int64(20), "name": "voice"}, All))
	l.vlanOther = id(db.Create(ctx, VLANs, Values{"vid": int64(10), "name": "south", "site": l.other}, All))
	l.ip4 = id(db.Create(ctx, IPAddresses, Values{"address": "192.0.2.10/24", "assigned_object_id": l.gi1}, All))
	l.ip6 = id(db.Create(ctx, IPAddresses, Values{"address": "2001:db8::1/64", "assigned_object_id": l.gi2}, All))
	l.loose = id(db.Create(ctx, IPAddresses, Values{"address": "192.0.2.9/24"}, All))
	return l
}

func TestDeviceTarget(t *testing.T) {
	db := openInvDB(t)
	ctx := context.Background()
	l := newLab(t, db)
	tg, err := db.DeviceTarget(ctx, l.device)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Host != "" || tg.Port != 2222 || tg.PlatformDriver != "" || tg.PlatformSlug != "eos" || *tg.PlatformID != l.platform || tg.LegacyAlgorithms {
		t.Fatalf("target without primary: %+v", tg)
	}
	// IPv6 alone is used; IPv4 wins once set; the platform's legacy flag counts
	if err := db.Update(ctx, Devices, l.device, Values{"primary_ip6": l.ip6}, All); err != nil {
		t.Fatal(err)
	}
	if tg, _ = db.DeviceTarget(ctx, l.device); tg.Host != "2001:db8::1" {
		t.Fatalf("ip6 host: %+v", tg)
	}
	if err := db.Update(ctx, Devices, l.device, Values{"primary_ip4": l.ip4,
		"custom_fields": Patch{"ssh_port": nil}}, All); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, Platforms, l.platform, Values{"legacy_algorithms": true, "driver": "linux"}, All); err != nil {
		t.Fatal(err)
	}
	if tg, _ = db.DeviceTarget(ctx, l.device); tg.Host != "192.0.2.10" || tg.Port != 22 || !tg.LegacyAlgorithms || tg.PlatformDriver != "linux" {
		t.Fatalf("ip4 host: %+v", tg)
	}
	if err := db.Delete(ctx, Platforms, l.platform); err != nil {
		t.Fatal(err)
	}
	if tg, _ = db.DeviceTarget(ctx, l.device); tg.PlatformID != nil || tg.PlatformDriver != "" || tg.LegacyAlgorithms {
		t.Fatalf("without platform: %+v", tg)
	}
	if _, err := db.DeviceTarget(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown device: %v", err)
	}
}

func TestPrimaryIPRules(t *testing.T) {
	db := openInvDB(t)
	ctx := context.Background()
	l := newLab(t, db)
	var fe *FieldError
	for _, c := range []struct {
		in    Values
		field string
	}{
		{Values{"primary_ip4": l.ip6}, "primary_ip4"},
		{Values{"primary_ip6": l.ip4}, "primary_ip6"},
		{Values{"primary_ip4": l.loose}, "primary_ip4"},
	} {
		err := db.Update(ctx, Devices, l.device, c.in, All)
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: %v", c.in, err)
		}
	}
	if err := db.Update(ctx, Devices, l.device, Values{"primary_ip4": l.ip4}, All); err != nil {
		t.Fatal(err)
	}
	err := db.Update(ctx, IPAddresses, l.ip4, Values{"assigned_object_id": nil, "assigned_object_type": nil}, All)
	if !errors.As(err, &fe) || fe.Field != "assigned_object_id" {
		t.Fatalf("unassigning a primary: %v", err)
	}
	// deleting the interface unassigns its address and clears the assignment type
	if err := db.Delete(ctx, Interfaces, l.gi1); err != nil {
		t.Fatal(err)
	}
	var typ *string
	if err := db.Reader().QueryRowContext(ctx, `SELECT assigned_object_type FROM ip_addresses WHERE id = ?`, l.ip4).Scan(&typ); err != nil || typ != nil {
		t.Fatalf("assigned_object_type after interface delete: %v %v", typ, err)
	}
}

func TestHostKeys(t *testing.T) {
	db := openInvDB(t)
	ctx := context.Background()
	l := newLab(t, db)
	if k, err := db.KnownHostKey(ctx, l.device); err != nil || k != "" {
		t.Fatalf("no key yet: %q %v", k, err)
	}
	const k1, k2 = "ssh-ed25519 AAAAone", "ssh-ed25519 AAAAtwo"
	if err := db.SaveHostKey(ctx, l.device, k1); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveHostKey(ctx, l.device, k1); err != nil {
		t.Fatalf("saving the same key again: %v", err)
	}
	if err := db.SaveHostKey(ctx, l.device, k2); !errors.Is(err, ErrConflict) {
		t.Fatalf("a different key must not replace the trusted one: %v", err)
	}
	if k, _ := db.KnownHostKey(ctx, l.device); k != k1 {
		t.Fatalf("stored key: %q", k)
	}
	if err := db.ClearHostKey(ctx, l.device); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveHostKey(ctx, l.device, k2); err != nil {
		t.Fatalf("after clear: %v", err)
	}
	for _, err := range []error{db.ClearHostKey(ctx, 999), db.SaveHostKey(ctx, 999, k1)} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown device: %v", err)
		}
	}
	if _, err := db.KnownHostKey(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown device: %v", err)
	}
}

func TestDeviceChoices(t *testing.T) {
	db := openInvDB(t)
	ctx := context.Background()
	l := newLab(t, db)
	ifs, err := db.DeviceInterfaces(ctx, l.device)
	if err != nil || len(ifs) != 2 || ifs[0].Name != "Gi0/1" || !ifs[0].Enabled || ifs[1].Enabled {
		t.Fatalf("interfaces: %+v %v", ifs, err)
	}
	// no VLANs on interfaces: the site's VLANs (not the global or the other site's)
	vl, err := db.DeviceVLANs(ctx, l.device)
	if err != nil || len(vl) != 1 || vl[0].VID != 30 || vl[0].Name != "users" {
		t.Fatalf("site vlans: %+v %v", vl, err)
	}
	err = db.Update(ctx, Interfaces, l.gi2, Values{"mode": "tagged", "untagged_vlan": l.vlanGlobal,
		"tagged_vlans": []int64{l.vlanSite, l.vlanGlobal}}, All)
	if err != nil {
		t.Fatal(err)
	}
	vl, _ = db.DeviceVLANs(ctx, l.device)
	if len(vl) != 2 || vl[0].VID != 20 || vl[1].VID != 30 {
		t.Fatalf("interface vlans: %+v", vl)
	}
	var fe *FieldError
	err = db.Update(ctx, Interfaces, l.gi1, Values{"mode": "access", "untagged_vlan": l.vlanOther}, All)
	if !errors.As(err, &fe) || fe.Field != "untagged_vlan" {
		t.Fatalf("other site's VLAN: %v", err)
	}
	// addresses on interfaces plus the primary, in address order
	ips, err := db.DeviceIPs(ctx, l.device)
	if err != nil || len(ips) != 2 || ips[0].Address != "192.0.2.10/24" || ips[1].Address != "2001:db8::1/64" || ips[0].Status != "active" {
		t.Fatalf("ips: %+v %v", ips, err)
	}
	for _, f := range []func() error{
		func() error { _, err := db.DeviceInterfaces(ctx, 999); return err },
		func() error { _, err := db.DeviceVLANs(ctx, 999); return err },
		func() error { _, err := db.DeviceIPs(ctx, 999); return err },
	} {
		if err := f(); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown device: %v", err)
		}
	}
}

func TestNegatedLookupAcrossRelation(t *testing.T) {
	db := openInvDB(t)
	ctx := context.Background()
	l := newLab(t, db)
	bare := mustID[int64](t)(db.Create(ctx, Devices, Values{"name": "bare", "site": l.site}, All))
	e, err := ModelFor(TypeDevice).Compile(Cond{Path: []string{"platform", "slug"}, Lookup: "n", Values: []any{"eos"}})
	if err != nil {
		t.Fatal(err)
	}
	ids, _, err := db.ListIDs(ctx, Query{Model: TypeDevice, Where: []Expr{e}, Limit: 10})
	if err != nil || len(ids) != 1 || ids[0] != bare {
		t.Fatalf("platform__slug__n=eos: %v %v", ids, err)
	}
}

func TestAddressOrder(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"10.0.0.2/24", "10.0.0.10/24"}, {"9.0.0.1/8", "10.0.0.1/8"}, {"255.0.0.1/32", "::1/128"},
		{"10.0.0.1/8", "10.0.0.1/24"},
	} {
		if addressKey(c.a) >= addressKey(c.b) {
			t.Errorf("%s should sort before %s", c.a, c.b)
		}
	}
	if a, err := NormalizeAddress("2001:DB8:0::1/64"); err != nil || a != "2001:db8::1/64" {
		t.Errorf("normalize: %q %v", a, err)
	}
	if _, err := NormalizeAddress("10.0.0.1"); err == nil {
		t.Error("an address without prefix length must be refused")
	}
}
