package devsim

import (
	"fmt"
	"slices"
	"strings"
)

// Junos operational output and configuration renderers.

func junosVersion(st *state) []string {
	out := []string{
		"fpc0:",
		"--------------------------------------------------------------------------",
		"Hostname: " + st.hostname,
		"Model: ex4300-48t",
		"Junos: 21.4R3-S3.4",
	}
	for _, p := range []string{"JUNOS OS Kernel 64-bit ", "JUNOS OS libs", "JUNOS OS runtime", "JUNOS OS time zone information",
		"JUNOS OS libs compat32", "JUNOS OS 32-bit compatibility", "JUNOS debug tools", "JUNOS Runtime Software Suite"} {
		out = append(out, fmt.Sprintf("%s [20221014.8c2c8c5_builder_stable_12_214]", p))
	}
	for _, p := range []string{"JUNOS network stack and utilities", "JUNOS libs", "JUNOS modules", "JUNOS Packet Forwarding Engine Support (EX 4300)",
		"JUNOS Data Plane Crypto Support", "JUNOS daemons", "JUNOS Services URL Filter package", "JUNOS Services SSL",
		"JUNOS Services Stateful Firewall", "JUNOS Services RPM", "JUNOS Services NAT", "JUNOS Services LL-PDF Container package",
		"JUNOS Online Documentation", "JUNOS Host Software", "JUNOS Kernel Software Suite", "JUNOS Crypto Software Suite"} {
		out = append(out, fmt.Sprintf("%s [21.4R3-S3.4]", p))
	}
	return out
}

func junosTerse(st *state) []string {
	row := func(name, admin, link, proto, local string) string {
		return strings.TrimRight(fmt.Sprintf("%-23s %-5s %-4s %-8s %-21s", name, admin, link, proto, local), " ")
	}
	out := []string{row("Interface", "Admin", "Link", "Proto", "Local") + "                 Remote"}
	for _, i := range st.ifaces {
		admin, link := "up", "up"
		if !i.Enabled {
			admin, link = "down", "down"
		}
		out = append(out, row(i.Name, admin, link, "", ""))
		switch {
		case i.Mode != "":
			out = append(out, row(i.Name+".0", admin, link, "eth-switch", ""))
		case i.IP != "":
			out = append(out, row(i.Name+".0", admin, link, "inet", i.IP))
		}
	}
	return out
}

func junosVlans(st *state) []string {
	out := []string{"", fmt.Sprintf("%-23s %-21s %-12s %s", "Routing instance", "VLAN name", "Tag", "Interfaces")}
	vlans := slices.Clone(st.vlans)
	slices.SortFunc(vlans, func(a, b VLAN) int { return strings.Compare(a.Name, b.Name) })
	for _, v := range vlans {
		out = append(out, fmt.Sprintf("%-23s %-21s %-8d", "default-switch", v.Name, v.ID))
		for _, i := range st.ifaces {
			if (i.Mode == "access" && max(i.VLAN, 1) == v.ID) || i.Mode == "trunk" {
				up := ""
				if i.Enabled {
					up = "*"
				}
				out = append(out, strings.Repeat(" ", 59)+i.Name+".0"+up)
			}
		}
	}
	return out
}

func junosLLDP(st *state) []string {
	out := []string{fmt.Sprintf("%-18s %-19s %-19s %-18s %s", "Local Interface", "Parent Interface", "Chassis Id", "Port info", "System Name")}
	for _, n := range st.neighbors() {
		out = append(out, fmt.Sprintf("%-18s %-19s %-19s %-18s %s", n.local, "-", n.chassis, n.port, n.name))
	}
	return out
}

func junosArp(st *state, resolve bool) []string {
	var out []string
	if resolve {
		out = append(out, fmt.Sprintf("%-17s %-15s %-25s %-24s %s", "MAC Address", "Address", "Name", "Interface", "Flags"))
	} else {
		out = append(out, fmt.Sprintf("%-17s %-15s %-24s %s", "MAC Address", "Address", "Interface", "Flags"))
	}
	n := 0
	for _, e := range st.arp() {
		if e.own {
			continue
		}
		n++
		if resolve {
			out = append(out, fmt.Sprintf("%-17s %-15s %-25s %-24s %s", colonMAC(e.mac), e.ip, e.ip, e.iface+".0", "none"))
		} else {
			out = append(out, fmt.Sprintf("%-17s %-15s %-24s %s", colonMAC(e.mac), e.ip, e.iface+".0", "none"))
		}
	}
	return append(out, fmt.Sprintf("Total entries: %d", n))
}

func jq(s string) string {
	if strings.ContainsAny(s, " ;{}\"") || s == "" {
		return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
	}
	return s
}

// junosConfig renders the configuration in Junos' curly-brace form; the
// first line is the commit header ("show" in config mode drops it).
func junosConfig(st *state) []string {
	out := []string{"## Last commit: 2024-05-02 09:15:02 UTC by admin", "version 21.4R3-S3.4;",
		"system {", "    host-name " + st.hostname + ";",
		"    root-authentication {", `        encrypted-password "$6$Qm3k$u9Yc0VbT1r8sWz4eLp7nHd2xA5gJ6fK0qR3tE9yU1iO8pM4cN7vB2lS5wZ0xC3"; ## SECRET-DATA`, "    }",
		"    services {", "        ssh;", "    }", "}", "interfaces {"}
	for _, i := range st.ifaces {
		out = append(out, "    "+i.Name+" {")
		if !i.Enabled {
			out = append(out, "        disable;")
		}
		if i.Description != "" {
			out = append(out, "        description "+jq(i.Description)+";")
		}
		switch {
		case i.Mode != "":
			members := "all"
			if i.Mode == "access" {
				members = fmt.Sprint(max(i.VLAN, 1))
			}
			out = append(out, "        unit 0 {", "            family ethernet-switching {",
				"                interface-mode "+i.Mode+";", "                vlan {",
				"                    members "+members+";", "                }", "            }", "        }")
		case i.IP != "":
			out = append(out, "        unit 0 {", "            family inet {",
				"                address "+i.IP+";", "            }", "        }")
		}
		out = append(out, "    }")
	}
	out = append(out, "}", "vlans {")
	for _, v := range st.vlans {
		out = append(out, "    "+jq(v.Name)+" {", fmt.Sprintf("        vlan-id %d;", v.ID), "    }")
	}
	return append(out, "}")
}

// junosSet renders "show configuration | display set".
func junosSet(st *state) []string {
	out := []string{"set version 21.4R3-S3.4", "set system host-name " + st.hostname, "set system services ssh"}
	for _, i := range st.ifaces {
		p := "set interfaces " + i.Name
		if !i.Enabled {
			out = append(out, p+" disable")
		}
		if i.Description != "" {
			out = append(out, p+" description "+jq(i.Description))
		}
		switch {
		case i.Mode != "":
			members := "all"
			if i.Mode == "access" {
				members = fmt.Sprint(max(i.VLAN, 1))
			}
			out = append(out, p+" unit 0 family ethernet-switching interface-mode "+i.Mode,
				p+" unit 0 family ethernet-switching vlan members "+members)
		case i.IP != "":
			out = append(out, p+" unit 0 family inet address "+i.IP)
		}
	}
	for _, v := range st.vlans {
		out = append(out, fmt.Sprintf("set vlans %s vlan-id %d", jq(v.Name), v.ID))
	}
	return out
}
