package netbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"fieldkit/netbox"
	"fieldkit/netbox/fakenetbox"
)

// bigNetBox is the fake NetBox grown to n devices at its two sites, each with two
// interfaces and an address on the first, made from the recorded objects' shapes.
func bigNetBox(b *testing.B, n int) *fakenetbox.NetBox {
	nb := fakenetbox.Start(b, fixtures, false)
	var dev, iface, ip map[string]any
	nb.Change("devices", func(ds []map[string]any) []map[string]any { dev = ds[0]; return ds })
	nb.Change("interfaces", func(is []map[string]any) []map[string]any { iface = is[0]; return is })
	nb.Change("ip-addresses", func(ips []map[string]any) []map[string]any { ip = ips[0]; return ips })
	clone := func(m map[string]any) map[string]any {
		var out map[string]any
		raw, _ := json.Marshal(m)
		_ = json.Unmarshal(raw, &out)
		return out
	}
	var devs, ifs, ips []map[string]any
	for i := range n {
		d := clone(dev)
		d["id"], d["name"] = float64(1000+i), fmt.Sprintf("dev-%04d", i)
		if i%2 == 1 {
			d["site"] = map[string]any{"id": 2.0, "name": "Lyon 2", "slug": "lyon-2"}
		}
		for j := range 2 {
			f := clone(iface)
			f["id"], f["name"] = float64(10000+2*i+j), fmt.Sprintf("Gi0/%d", j)
			f["device"] = map[string]any{"id": d["id"], "name": d["name"]}
			f["mode"], f["untagged_vlan"], f["tagged_vlans"] = nil, nil, []any{}
			ifs = append(ifs, f)
		}
		a := clone(ip)
		a["id"], a["address"] = float64(50000+i), fmt.Sprintf("10.%d.%d.1/24", i/250, i%250)
		a["assigned_object_id"] = float64(10000 + 2*i)
		a["assigned_object"] = map[string]any{"id": a["assigned_object_id"], "name": "Gi0/0", "device": map[string]any{"id": d["id"], "name": d["name"]}}
		d["primary_ip4"] = map[string]any{"id": a["id"], "address": a["address"]}
		devs, ips = append(devs, d), append(ips, a)
	}
	nb.Change("devices", func([]map[string]any) []map[string]any { return devs })
	nb.Change("interfaces", func([]map[string]any) []map[string]any { return ifs })
	nb.Change("ip-addresses", func([]map[string]any) []map[string]any { return ips })
	return nb
}

// BenchmarkSync500Devices syncs 500 devices (1,000 interfaces, 500 addresses, their
// sites, platforms and tags) from a NetBox on loopback into an empty inventory, then
// again with nothing changed:
//
//	go test ./netbox -run '^$' -bench Sync500Devices -benchtime 3x
func BenchmarkSync500Devices(b *testing.B) {
	nb := bigNetBox(b, 500)
	for _, again := range []bool{false, true} {
		name := "first"
		if again {
			name = "unchanged"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				db := openDB(b)
				s := netbox.NewSyncer(db, netbox.Config{URL: nb.URL, Token: fakenetbox.Token}, nil)
				if again {
					if _, err := s.Sync(context.Background(), nil); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				rep, err := s.Sync(context.Background(), nil)
				if err != nil || rep.Objects["devices"].Fetched != 500 {
					b.Fatalf("%+v %v", rep, err)
				}
			}
		})
	}
}
