package devsim

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// state is a device configuration: the running one (shared by all
// sessions) or a session's candidate.
type state struct {
	hostname string
	ifaces   []Interface
	vlans    []VLAN
	clock    func() time.Time // Config.Clock
	console  string           // FortiOS console output: "more" (the default) or "standard"
}

func newState(v *vendor, cfg Config) *state {
	st := &state{hostname: cfg.Hostname, clock: cfg.Clock}
	if st.clock == nil {
		st.clock = time.Now
	}
	st.ifaces = slices.Clone(cfg.Interfaces)
	st.vlans = slices.Clone(cfg.VLANs)
	if len(st.ifaces) == 0 && v.ifaces != nil {
		st.ifaces = slices.Clone(v.ifaces)
	}
	if len(st.ifaces) == 0 {
		st.ifaces = defaultIfaces(v.ifNames)
	}
	if len(st.vlans) == 0 {
		st.vlans = []VLAN{{1, "default"}, {10, "USERS"}, {20, "VOICE"}}
	}
	for i := range st.ifaces {
		if st.ifaces[i].MAC == "" {
			st.ifaces[i].MAC = fmt.Sprintf("0050.56a1.%04x", i+1)
		}
	}
	st.sortVLANs()
	return st
}

// defaultIfaces seeds four interfaces: a trunk uplink, an access port in
// VLAN 10, a shut access port in VLAN 20 and a routed port with an address.
func defaultIfaces(names [4]string) []Interface {
	return []Interface{
		{Name: names[0], Description: "uplink to core-sw1", Enabled: true, Mode: "trunk"},
		{Name: names[1], Description: "user desk 12", Enabled: true, Mode: "access", VLAN: 10},
		{Name: names[2], Enabled: false, Mode: "access", VLAN: 20},
		{Name: names[3], Description: "mgmt", Enabled: true, IP: "192.0.2.10/24"},
	}
}

func (st *state) clone() *state {
	c := *st
	c.ifaces = slices.Clone(st.ifaces)
	c.vlans = slices.Clone(st.vlans)
	return &c
}

func (st *state) iface(name string) *Interface {
	for i := range st.ifaces {
		if st.ifaces[i].Name == name {
			return &st.ifaces[i]
		}
	}
	return nil
}

func (st *state) vlan(id int) *VLAN {
	for i := range st.vlans {
		if st.vlans[i].ID == id {
			return &st.vlans[i]
		}
	}
	return nil
}

func (st *state) addVLAN(id int, name string) *VLAN {
	if v := st.vlan(id); v != nil {
		return v
	}
	st.vlans = append(st.vlans, VLAN{id, name})
	st.sortVLANs()
	return st.vlan(id)
}

func (st *state) deleteVLAN(id int) {
	st.vlans = slices.DeleteFunc(st.vlans, func(v VLAN) bool { return v.ID == id })
}

func (st *state) sortVLANs() {
	slices.SortFunc(st.vlans, func(a, b VLAN) int { return a.ID - b.ID })
}

// findIface resolves an abbreviated interface name ("gi1/0/1", "Gi 1/0/1",
// "eth1/2", "et1") the way Cisco-like CLIs do. Loopback, Vlan and
// port-channel interfaces that do not exist yet are created when create is
// set. It returns "" when the name is invalid.
func (st *state) findIface(arg string, create bool, creatable []string) string {
	typ, num := splitIfName(arg)
	if typ == "" && num != "" {
		// Ports named by number alone (ProCurve "1", AOS-CX "1/1/1").
		if st.iface(num) != nil {
			return num
		}
		return ""
	}
	if typ == "" || num == "" {
		return ""
	}
	for _, ifc := range st.ifaces {
		t, n := splitIfName(ifc.Name)
		if n == num && strings.HasPrefix(strings.ToLower(t), strings.ToLower(typ)) {
			return ifc.Name
		}
	}
	if !create {
		return ""
	}
	for _, full := range creatable {
		if strings.HasPrefix(strings.ToLower(full), strings.ToLower(typ)) {
			name := full + num
			st.ifaces = append(st.ifaces, Interface{Name: name, Enabled: true,
				MAC: fmt.Sprintf("0050.56a1.%04x", len(st.ifaces)+1)})
			return name
		}
	}
	return ""
}

// splitIfName splits "GigabitEthernet1/0/1" into "GigabitEthernet" and
// "1/0/1".
func splitIfName(name string) (typ, num string) {
	name = strings.ReplaceAll(name, " ", "")
	i := strings.IndexAny(name, "0123456789")
	if i < 0 {
		return name, ""
	}
	return name[:i], name[i:]
}

// shortIf abbreviates an interface name with a vendor's table of prefixes.
func shortIf(name string, abbrev map[string]string) string {
	typ, num := splitIfName(name)
	if a, ok := abbrev[typ]; ok {
		return a + num
	}
	return name
}

// prefix parses "10.0.0.1/24"; ok is false for "" or garbage.
func prefix(ip string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(ip)
	return p, err == nil
}

// maskToPrefix turns "10.0.0.1" + "255.255.255.0" into "10.0.0.1/24".
func maskToPrefix(addr, mask string) (string, bool) {
	a, err1 := netip.ParseAddr(addr)
	m, err2 := netip.ParseAddr(mask)
	if err1 != nil || err2 != nil || !a.Is4() || !m.Is4() {
		return "", false
	}
	bits, ones := 0, true
	for _, b := range m.As4() {
		for i := 7; i >= 0; i-- {
			set := b&(1<<i) != 0
			if set && !ones {
				return "", false
			}
			ones = set
			if set {
				bits++
			}
		}
	}
	return netip.PrefixFrom(a, bits).String(), true
}

// prefixMask returns the address and dotted mask of "10.0.0.1/24".
func prefixMask(ip string) (addr, mask string) {
	p, ok := prefix(ip)
	if !ok {
		return "", ""
	}
	m := [4]byte{}
	for i := 0; i < p.Bits(); i++ {
		m[i/8] |= 0x80 >> (i % 8)
	}
	return p.Addr().String(), netip.AddrFrom4(m).String()
}

// neighbor is the simulated LLDP/CDP neighbor on an interface.
type neighbor struct {
	local, name, port, platform, chassis string
}

// neighbors puts one core device behind every enabled trunk port and
// every enabled routed uplink (description "uplink..." or "to ...").
func (st *state) neighbors() []neighbor {
	var ns []neighbor
	for i, ifc := range st.ifaces {
		uplink := strings.HasPrefix(ifc.Description, "uplink") || strings.HasPrefix(ifc.Description, "to ")
		if ifc.Enabled && (ifc.Mode == "trunk" || uplink) {
			ns = append(ns, neighbor{
				local: ifc.Name, name: fmt.Sprintf("core-sw%d", len(ns)+1),
				port:     fmt.Sprintf("GigabitEthernet1/0/%d", 24+i),
				platform: "WS-C3850-48T", chassis: fmt.Sprintf("00:1c:73:00:00:%02x", i+1),
			})
		}
	}
	return ns
}

// arpEntry is one simulated ARP entry: the device's own address and one
// neighbour per routed interface that is up.
type arpEntry struct {
	ip, mac, iface string
	own            bool
}

func (st *state) arp() []arpEntry {
	var es []arpEntry
	for i, ifc := range st.ifaces {
		p, ok := prefix(ifc.IP)
		if !ok || !ifc.Enabled {
			continue
		}
		es = append(es, arpEntry{ip: p.Addr().String(), mac: ifc.MAC, iface: ifc.Name, own: true})
		peer := p.Addr().Next()
		if !p.Contains(peer) {
			peer = p.Masked().Addr().Next()
		}
		es = append(es, arpEntry{ip: peer.String(), mac: fmt.Sprintf("0050.56a1.ff%02x", i+1), iface: ifc.Name})
	}
	return es
}

// macEntry is one learned MAC address.
type macEntry struct {
	vlan       int
	mac, iface string
}

// macTable learns one host behind every access port that is up and two
// behind every trunk.
func (st *state) macTable() []macEntry {
	var es []macEntry
	for i, ifc := range st.ifaces {
		if !ifc.Enabled {
			continue
		}
		switch ifc.Mode {
		case "access":
			es = append(es, macEntry{max(ifc.VLAN, 1), fmt.Sprintf("0050.56b2.%02x01", i+1), ifc.Name})
		case "trunk":
			es = append(es, macEntry{1, fmt.Sprintf("0050.56b2.%02x01", i+1), ifc.Name})
			for _, v := range st.vlans {
				if v.ID != 1 {
					es = append(es, macEntry{v.ID, fmt.Sprintf("0050.56b2.%02x%02x", i+1, v.ID%256), ifc.Name})
					break
				}
			}
		}
	}
	slices.SortFunc(es, func(a, b macEntry) int { return a.vlan - b.vlan })
	return es
}

// vlanPorts lists the access ports of a VLAN, short names.
func (st *state) vlanPorts(id int, abbrev map[string]string) []string {
	var ps []string
	for _, ifc := range st.ifaces {
		if ifc.Mode == "access" && max(ifc.VLAN, 1) == id {
			ps = append(ps, shortIf(ifc.Name, abbrev))
		}
	}
	return ps
}

// colonMAC turns "0050.56a1.0001" into "00:50:56:a1:00:01".
func colonMAC(m string) string {
	h := strings.ReplaceAll(m, ".", "")
	if len(h) != 12 {
		return m
	}
	var parts []string
	for i := 0; i < 12; i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}

func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}
