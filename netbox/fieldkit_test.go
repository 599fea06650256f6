package netbox_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"fieldkit/handlers"
	"fieldkit/netbox"
	"fieldkit/store"
)

// TestSyncFromFieldKit: a FieldKit serves a NetBox-shaped /api/dcim/, so a site's
// FieldKit can sync from another (a regional one) as from NetBox.
func TestSyncFromFieldKit(t *testing.T) {
	ctx := context.Background()
	central := openDB(t)
	api := handlers.New(handlers.Options{DB: central, Logger: slog.New(slog.DiscardHandler), Version: "test"})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	name, super := "sync", true
	uid, err := central.CreateUser(ctx, store.UserInput{Username: &name, IsSuperuser: &super}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := central.CreateToken(ctx, store.TokenInput{UserID: uid}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	doc := `
tags: [{name: managed}]
sites: [{name: Paris 1}, {name: Lyon 2}]
platforms: [{name: Cisco IOS, slug: cisco_ios}]
vlans: [{vid: 10, name: users, site: paris-1}]
devices:
  - {name: r1, site: paris-1, platform: cisco_ios, mgmt_ip: 192.0.2.1/24, ssh_port: 2201, tags: [managed]}
  - {name: r2, site: paris-1, mgmt_ip: 2001:db8::2/64}
  - {name: r9, site: lyon-2, mgmt_ip: 198.51.100.9/24}
interfaces:
  - {device: r1, name: Gi0/1, mode: access, untagged_vlan: 10}
`
	if _, err := api.Import(ctx, store.Principal{ID: uid, Username: name, IsSuperuser: true}, handlers.ImportInput{Name: "site.yaml", Data: []byte(doc)}); err != nil {
		t.Fatal(err)
	}

	edge := openDB(t)
	s := netbox.NewSyncer(edge, netbox.Config{URL: srv.URL, Token: key, Filter: "site=paris-1", PageSize: 1}, nil)
	rep, err := s.Sync(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Objects["devices"]; c.Created != 2 {
		t.Errorf("devices: %+v", c)
	}
	r1 := device(t, edge, "r1")
	target, err := edge.DeviceTarget(ctx, r1.ID())
	if err != nil || target.Host != "192.0.2.1" || target.Port != 2201 || target.PlatformSlug != "cisco_ios" {
		t.Errorf("r1's target: %+v %v", target, err)
	}
	if r2 := device(t, edge, "r2"); addressOf(r2["primary_ip6"]) != "2001:db8::2/64" {
		t.Errorf("r2: %v", r2)
	}
	var vlan string
	edge.Reader().QueryRow(`SELECT v.name FROM interfaces i JOIN vlans v ON v.id = i.untagged_vlan_id WHERE i.name = 'Gi0/1'`).Scan(&vlan)
	if vlan != "users" || count(t, edge, "devices WHERE name = 'r9'") != 0 {
		t.Errorf("the VLAN %q; r9 from another site: %d", vlan, count(t, edge, "devices WHERE name = 'r9'"))
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings: %s", strings.Join(rep.Warnings, "; "))
	}
}
