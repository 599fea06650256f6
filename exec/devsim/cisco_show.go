package devsim

import (
	"fmt"
	"strings"
)

// Show renderers for IOS, NX-OS and EOS, in each platform's column layout
// so that parsers written for the real devices (TextFSM templates) work.

// clock is the device time as IOS prints it.
func clock(st *state) string {
	return st.clock().UTC().Format("*15:04:05.000 MST Mon Jan 2 2006")
}

func ifStatus(i Interface) (status, proto string) {
	if !i.Enabled {
		return "administratively down", "down"
	}
	return "up", "up"
}

func ipIntBrief(v *vendor, st *state) []string {
	switch v.name {
	case "cisco_nxos":
		out := []string{"IP Interface Status for VRF \"default\"(1)",
			fmt.Sprintf("%-20s %-15s %s", "Interface", "IP Address", "Interface Status")}
		for _, i := range st.ifaces {
			if p, ok := prefix(i.IP); ok {
				state := "protocol-up/link-up/admin-up"
				if !i.Enabled {
					state = "protocol-down/link-down/admin-down"
				}
				out = append(out, fmt.Sprintf("%-20s %-15s %s", shortIf(i.Name, v.abbrev), p.Addr(), state))
			}
		}
		return out
	case "arista_eos":
		out := []string{
			fmt.Sprintf("%79s", "Address"),
			fmt.Sprintf("%-17s %-21s %-12s %-14s %10s %-7s", "Interface", "IP Address", "Status", "Protocol", "MTU", "Owner"),
			"----------------- --------------------- ------------ -------------- ---------- -------",
		}
		for _, i := range st.ifaces {
			ip := "unassigned"
			if i.IP != "" {
				ip = i.IP
			} else if i.Mode != "" {
				continue
			}
			status, proto := ifStatus(i)
			out = append(out, fmt.Sprintf("%-17s %-21s %-12s %-14s %10d %-7s", i.Name, ip, status, proto, 1500, ""))
		}
		return out
	}
	out := []string{fmt.Sprintf("%-22s %-15s %-3s %-6s %-21s %s", "Interface", "IP-Address", "OK?", "Method", "Status", "Protocol")}
	for _, i := range st.ifaces {
		ip, method := "unassigned", "unset"
		if p, ok := prefix(i.IP); ok {
			ip, method = p.Addr().String(), "NVRAM"
		}
		status, proto := ifStatus(i)
		out = append(out, fmt.Sprintf("%-22s %-15s %-3s %-6s %-21s %-8s", i.Name, ip, "YES", method, status, proto))
	}
	return out
}

// portState is the Status column of "show interfaces status".
func portState(i Interface) string {
	switch {
	case !i.Enabled:
		return "disabled"
	case i.Mode == "access" && i.VLAN == 20 && i.Description == "":
		return "notconnect"
	}
	return "connected"
}

func portVlan(i Interface) string {
	switch i.Mode {
	case "trunk":
		return "trunk"
	case "access":
		return fmt.Sprint(max(i.VLAN, 1))
	}
	return "routed"
}

func intStatus(v *vendor, st *state) []string {
	var out []string
	switch v.name {
	case "cisco_nxos":
		rule := strings.Repeat("-", 80)
		out = append(out, rule, fmt.Sprintf("%-13s %-18s %-9s %-9s %-7s %-7s %s", "Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type"), rule)
		for _, i := range st.ifaces {
			name := i.Description
			if name == "" {
				name = "--"
			}
			out = append(out, fmt.Sprintf("%-13s %-18.18s %-9s %-9s %-7s %-7s %s", shortIf(i.Name, v.abbrev), name, portState(i), portVlan(i), "full", "10G", "10Gbase-SR"))
		}
	case "arista_eos":
		out = append(out, fmt.Sprintf("%-10s %-11s %-12s %-8s %-6s %-6s %-12s %-5s %s", "Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type", "Flags", "Encapsulation"))
		for _, i := range st.ifaces {
			out = append(out, fmt.Sprintf("%-10s %-11.11s %-12s %-8s %-6s %-6s %-12s %-5s", shortIf(i.Name, v.abbrev), i.Description, portState(i), portVlan(i), "full", "10G", "10GBASE-SR", ""))
		}
	default:
		out = append(out, "", fmt.Sprintf("%-9s %-18s %-12s %-10s %6s %5s %s", "Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type"))
		for _, i := range st.ifaces {
			duplex, speed := "a-full", "a-1000"
			if portState(i) != "connected" {
				duplex, speed = "auto", "auto"
			}
			out = append(out, fmt.Sprintf("%-9s %-18.18s %-12s %-10s %6s %5s %s", shortIf(i.Name, v.abbrev), i.Description, portState(i), portVlan(i), duplex, speed, "10/100/1000BaseTX"))
		}
	}
	return out
}

func intDescription(v *vendor, st *state) []string {
	out := []string{fmt.Sprintf("%-30s %-14s %-8s %s", "Interface", "Status", "Protocol", "Description")}
	for _, i := range st.ifaces {
		status, proto := ifStatus(i)
		if status != "up" {
			status = "admin down"
		}
		out = append(out, fmt.Sprintf("%-30s %-14s %-8s %s", shortIf(i.Name, v.abbrev), status, proto, i.Description))
	}
	return out
}

// vlanBrief is "show vlan brief": ports wrap four to a line under the
// Ports column, as on the real switches.
func vlanBrief(v *vendor, st *state) []string {
	idw := 4
	if v.name == "arista_eos" {
		idw = 5
	}
	out := []string{""}
	if v.name == "arista_eos" {
		out = nil
	}
	out = append(out,
		fmt.Sprintf("%-*s %-32s %-9s %s", idw, "VLAN", "Name", "Status", "Ports"),
		fmt.Sprintf("%s %s %s %s", strings.Repeat("-", idw), strings.Repeat("-", 32), strings.Repeat("-", 9), strings.Repeat("-", 31)))
	for _, vl := range st.vlans {
		ports := st.vlanPorts(vl.ID, v.abbrev)
		first := ""
		for len(ports) > 0 || first == "" {
			n := min(4, len(ports))
			chunk := strings.Join(ports[:n], ", ")
			ports = ports[n:]
			if len(ports) > 0 {
				chunk += ","
			}
			if first == "" {
				first = "x"
				out = append(out, strings.TrimRight(fmt.Sprintf("%-*d %-32s %-9s %s", idw, vl.ID, vl.Name, "active", chunk), " "))
			} else {
				out = append(out, strings.Repeat(" ", idw+44)+chunk)
			}
		}
	}
	if v.name == "cisco_ios" {
		for _, d := range []string{"1002 fddi-default", "1003 token-ring-default", "1004 fddinet-default", "1005 trnet-default"} {
			id, name, _ := strings.Cut(d, " ")
			out = append(out, fmt.Sprintf("%-4s %-32s %-9s", id, name, "act/unsup"))
		}
	}
	return out
}

// vlanFull is "show vlan": the brief table plus the per-VLAN type table.
func vlanFull(v *vendor, st *state) []string {
	out := vlanBrief(v, st)
	switch v.name {
	case "arista_eos":
		return out
	case "cisco_nxos":
		out = append(out, "", "VLAN Type         Vlan-mode", "---- -----        ----------")
		for _, vl := range st.vlans {
			out = append(out, fmt.Sprintf("%-4d %-12s %s", vl.ID, "enet", "CE"))
		}
		return append(out, "", "Remote SPAN VLANs", "-------------------------------------------------------------------------------", "", "Primary  Secondary  Type             Ports", "-------  ---------  ---------------  -------------------------------------------")
	}
	out = append(out, "", "VLAN Type  SAID       MTU   Parent RingNo BridgeNo Stp  BrdgMode Trans1 Trans2",
		"---- ----- ---------- ----- ------ ------ -------- ---- -------- ------ ------")
	for _, vl := range st.vlans {
		out = append(out, fmt.Sprintf("%-4d %-5s %-10d %-5d %-6s %-6s %-8s %-4s %-8s %-6d %-6d", vl.ID, "enet", 100000+vl.ID, 1500, "-", "-", "-", "-", "-", 0, 0))
	}
	return append(out, "", "Remote SPAN VLANs", "------------------------------------------------------------------------------", "",
		"", "Primary Secondary Type              Ports", "------- --------- ----------------- ------------------------------------------")
}

func cdpNeighbors(v *vendor, st *state) []string {
	ns := st.neighbors()
	out := []string{
		"Capability Codes: R - Router, T - Trans-Bridge, B - Source-Route-Bridge",
		"                  S - Switch, H - Host, I - IGMP, r - Repeater, P - Phone, ",
		"                  D - Remote, C - CVTA, M - Two-port Mac Relay ",
		"",
	}
	if v.name == "cisco_nxos" {
		out = append(out, fmt.Sprintf("%-20s %-16s %-6s %-16s %-19s %s", "Device-ID", "Local Intrfce", "Hldtme", "Capability", "Platform", "Port ID"))
		for _, n := range ns {
			out = append(out, fmt.Sprintf("%-20s %-16s %-6d %-16s %-19s %s", n.name, shortIf(n.local, v.abbrev), 163, "R S I", n.platform, n.port))
		}
		return append(out, "", fmt.Sprintf("Total entries displayed: %d", len(ns)))
	}
	out = append(out, "Device ID        Local Intrfce     Holdtme    Capability  Platform  Port ID")
	for _, n := range ns {
		typ, num := splitIfName(n.local)
		rtyp, rnum := splitIfName(n.port)
		out = append(out, fmt.Sprintf("%-16s %-17s %-10d %10s  %-9.9s %s", n.name, typ[:min(3, len(typ))]+" "+num, 163, "R S I", n.platform, rtyp[:3]+" "+rnum))
	}
	return append(out, "", fmt.Sprintf("Total cdp entries displayed : %d", len(ns)))
}

func lldpNeighbors(v *vendor, st *state) []string {
	ns := st.neighbors()
	if v.name == "arista_eos" {
		out := []string{"Last table change time   : 0:12:31 ago", "Number of table inserts  : " + fmt.Sprint(len(ns)),
			"Number of table deletes  : 0", "Number of table drops    : 0", "Number of table age-outs : 0", "",
			fmt.Sprintf("%-13s %-24s %-19s %s", "Port", "Neighbor Device ID", "Neighbor Port ID", "TTL"),
			"---------- ------------------------ ---------------------- ---"}
		for _, n := range ns {
			out = append(out, fmt.Sprintf("%-13s %-24s %-19s %d", shortIf(n.local, v.abbrev), n.name, n.port, 120))
		}
		return out
	}
	indent := "    "
	if v.name == "cisco_nxos" {
		indent = "  "
	}
	out := []string{"Capability codes:",
		indent + "(R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
		indent + "(W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other", ""}
	out = append(out, fmt.Sprintf("%-20s %-15s %-10s %-15s %s", "Device ID", "Local Intf", "Hold-time", "Capability", "Port ID"))
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%-20s %-15s %-10d %-15s %s", n.name, shortIf(n.local, v.abbrev), 120, "B,R", n.port))
	}
	return append(out, "", fmt.Sprintf("Total entries displayed: %d", len(ns)))
}

func macTable(v *vendor, st *state) []string {
	es := st.macTable()
	switch v.name {
	case "cisco_nxos":
		out := []string{"Legend: ",
			"        * - primary entry, G - Gateway MAC, (R) - Routed MAC, O - Overlay MAC",
			"        age - seconds since last seen,+ - primary entry using vPC Peer-Link,",
			"        (T) - True, (F) - False, C - ControlPlane MAC, ~ - vsan",
			"   VLAN     MAC Address      Type      age     Secure NTFY Ports",
			"---------+-----------------+--------+---------+------+----+------------------"}
		for _, e := range es {
			out = append(out, fmt.Sprintf("*%5d     %-16s %-8s %-9d %-6s %-4s %s", e.vlan, e.mac, "dynamic", 0, "F", "F", shortIf(e.iface, v.abbrev)))
		}
		return out
	}
	out := []string{"          Mac Address Table", "-------------------------------------------", "",
		"Vlan    Mac Address       Type        Ports", "----    -----------       --------    -----"}
	if v.name == "arista_eos" {
		out = []string{"          Mac Address Table", "------------------------------------------------------------------", "",
			"Vlan    Mac Address       Type        Ports      Moves   Last Move", "----    -----------       ----        -----      -----   ---------"}
	}
	for _, e := range es {
		line := fmt.Sprintf("%4d    %-17s %-11s %s", e.vlan, e.mac, "DYNAMIC", shortIf(e.iface, v.abbrev))
		if v.name == "arista_eos" {
			line = fmt.Sprintf("%4d    %-17s %-11s %-10s %-7d %s", e.vlan, e.mac, "DYNAMIC", shortIf(e.iface, v.abbrev), 1, "0:05:12 ago")
		}
		out = append(out, line)
	}
	return append(out, fmt.Sprintf("Total Mac Addresses for this criterion: %d", len(es)))
}

func ipArp(v *vendor, st *state) []string {
	es := st.arp()
	switch v.name {
	case "cisco_nxos":
		out := []string{"", "Flags: * - Adjacencies learnt on non-active FHRP router",
			"       + - Adjacencies synced via CFSoE", "       # - Adjacencies Throttled for Glean",
			"       D - Static Adjacencies attached to down interface", "",
			"IP ARP Table for context default", fmt.Sprintf("Total number of entries: %d", countPeers(es)),
			fmt.Sprintf("%-15s %-9s %-15s %-15s %s", "Address", "Age", "MAC Address", "Interface", "Flags")}
		for _, e := range es {
			if !e.own {
				out = append(out, fmt.Sprintf("%-15s %-9s %-15s %-15s", e.ip, "00:01:10", e.mac, shortIf(e.iface, v.abbrev)))
			}
		}
		return out
	case "arista_eos":
		out := []string{fmt.Sprintf("%-15s %9s  %-15s %s", "Address", "Age (sec)", "Hardware Addr", "Interface")}
		for _, e := range es {
			if !e.own {
				out = append(out, fmt.Sprintf("%-15s %9s  %-15s %s", e.ip, "0:01:10", e.mac, e.iface))
			}
		}
		return out
	}
	out := []string{"Protocol  Address          Age (min)  Hardware Addr   Type   Interface"}
	for _, e := range es {
		age := "12"
		if e.own {
			age = "-"
		}
		out = append(out, fmt.Sprintf("%-9s %-16s %8s   %-15s %-6s %s", "Internet", e.ip, age, e.mac, "ARPA", e.iface))
	}
	return out
}

func countPeers(es []arpEntry) int {
	n := 0
	for _, e := range es {
		if !e.own {
			n++
		}
	}
	return n
}
