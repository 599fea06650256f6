package devsim

import (
	"fmt"
	"strings"
)

// ciscoVersion renders "show version" for IOS, NX-OS and EOS. The IOS and
// NX-OS outputs are longer than one 24-line screen, so they page.
func ciscoVersion(v *vendor, st *state) []string {
	switch v.name {
	case "cisco_nxos":
		return []string{
			"Cisco Nexus Operating System (NX-OS) Software",
			"TAC support: http://www.cisco.com/tac",
			"Copyright (C) 2002-2021, Cisco and/or its affiliates.",
			"All rights reserved.",
			"",
			"Software",
			"  BIOS: version 07.69",
			"  NXOS: version 9.3(8)",
			"  BIOS compile time:  04/08/2021",
			"  NXOS image file is: bootflash:///nxos.9.3.8.bin",
			"  NXOS compile time:  8/18/2021 16:00:00 [08/19/2021 02:09:47]",
			"",
			"Hardware",
			"  cisco Nexus9000 C93180YC-EX chassis",
			"  Intel(R) Xeon(R) CPU  @ 1.80GHz with 24632252 kB of memory.",
			"  Processor Board ID FDO21120U8N",
			"",
			"  Device name: " + st.hostname,
			"  bootflash:   53298520 kB",
			"Kernel uptime is 12 day(s), 3 hour(s), 4 minute(s), 5 second(s)",
			"",
			"Last reset at 412830 usecs after Mon Oct  4 09:12:45 2021",
			"  Reason: Reset Requested by CLI command reload",
			"  System version: 9.3(8)",
			"  Service: ",
			"",
			"plugin",
			"  Core Plugin, Ethernet Plugin",
			"",
			"Active Package(s):",
		}
	case "arista_eos":
		return []string{
			"Arista DCS-7050TX-64-R",
			"Hardware version: 01.11",
			"Serial number: JPE15120819",
			"Hardware MAC address: 001c.7300.0001",
			"System MAC address: 001c.7300.0001",
			"",
			"Software image version: 4.28.3M",
			"Architecture: x86_64",
			"Internal build version: 4.28.3M-28837868.4283M",
			"Internal build ID: 1b0a5c1e-2f7d-4c36-8f1e-0d8a1c3b6e10",
			"Image format version: 2.0",
			"",
			"Uptime: 3 weeks, 2 days, 4 hours and 12 minutes",
			"Total memory: 8099732 kB",
			"Free memory: 6212340 kB",
			"",
		}
	}
	return []string{
		"Cisco IOS Software, C3750E Software (C3750E-UNIVERSALK9-M), Version 15.2(4)E10, RELEASE SOFTWARE (fc2)",
		"Technical Support: http://www.cisco.com/techsupport",
		"Copyright (c) 1986-2020 by Cisco Systems, Inc.",
		"Compiled Tue 31-Mar-20 09:56 by prod_rel_team",
		"",
		"ROM: Bootstrap program is C3750E boot loader",
		"BOOTLDR: C3750E Boot Loader (C3750X-HBOOT-M) Version 15.2(3r)E, RELEASE SOFTWARE (fc1)",
		"",
		st.hostname + " uptime is 12 weeks, 3 days, 4 hours, 5 minutes",
		"System returned to ROM by power-on",
		"System restarted at 09:12:45 UTC Mon Oct 4 2021",
		`System image file is "flash:c3750e-universalk9-mz.152-4.E10.bin"`,
		"Last reload reason: power-on",
		"",
		"cisco WS-C3750X-48P (PowerPC405) processor (revision W0) with 262144K bytes of memory.",
		"Processor board ID FDO1521X1AB",
		"Last reset from power-on",
		fmt.Sprintf("%d Virtual Ethernet interfaces", 1),
		fmt.Sprintf("%d Gigabit Ethernet interfaces", len(st.ifaces)),
		"The password-recovery mechanism is enabled.",
		"",
		"512K bytes of flash-simulated non-volatile configuration memory.",
		"Base ethernet MAC Address       : 00:50:56:A1:00:01",
		"Motherboard assembly number     : 73-12554-08",
		"Model number                    : WS-C3750X-48P-S",
		"System serial number            : FDO1521X1AB",
		"",
		"Switch Ports Model                     SW Version            SW Image",
		"------ ----- -----                     ----------            ----------",
		"*    1 54    WS-C3750X-48P             15.2(4)E10            C3750E-UNIVERSALK9-M",
		"",
		"Configuration register is 0xF",
		"",
	}
}

// iosRunning renders the IOS running configuration. Secrets appear only as
// hashes, never in clear text.
func iosRunning(st *state) []string {
	// A real device stamps this line when its configuration last changed; the
	// simulator stamps it with its clock at each read, as a device whose
	// configuration is touched between reads would (Oxidized's noisy diffs).
	body := []string{"!", "! Last configuration change at " + st.clock().UTC().Format("15:04:05 MST Mon Jan 2 2006") + " by admin",
		"!", "version 15.2", "service timestamps debug datetime msec",
		"service timestamps log datetime msec", "service password-encryption", "!",
		"hostname " + st.hostname, "!", "boot-start-marker", "boot-end-marker", "!",
		"username admin privilege 15 secret 9 $9$4kZ7Yq1oWbR3pE$Qm0cXb1fQmQeZkY0u6pWzq9s3xH6D0mJtP1wzH5eLbY",
		"no aaa new-model", "ip domain-name lab.example", "!", "spanning-tree mode rapid-pvst", "!"}
	for _, vl := range st.vlans {
		if vl.ID != 1 {
			body = append(body, fmt.Sprintf("vlan %d", vl.ID), " name "+vl.Name, "!")
		}
	}
	for _, i := range st.ifaces {
		body = append(body, "interface "+i.Name)
		body = append(body, ciscoIfLines(i, " ", true)...)
		body = append(body, "!")
	}
	body = append(body, "ip ssh version 2", "!", "line con 0", "line vty 0 4", " login local",
		" transport input ssh", "line vty 5 15", " login local", " transport input ssh", "!", "end")
	size := len(strings.Join(body, "\n"))
	return append([]string{"Building configuration...", "", fmt.Sprintf("Current configuration : %d bytes", size)}, body...)
}

// ciscoIfLines renders one interface's config lines; mask selects IOS
// dotted masks over prefix lengths.
func ciscoIfLines(i Interface, ind string, mask bool) []string {
	var out []string
	if i.Description != "" {
		out = append(out, ind+"description "+i.Description)
	}
	switch i.Mode {
	case "access":
		if i.VLAN > 1 {
			out = append(out, fmt.Sprintf("%sswitchport access vlan %d", ind, i.VLAN))
		}
		out = append(out, ind+"switchport mode access")
	case "trunk":
		out = append(out, ind+"switchport mode trunk")
	default:
		if _, n := splitIfName(i.Name); !strings.Contains(n, ".") && isPhysical(i.Name) {
			out = append(out, ind+"no switchport")
		}
		if i.IP == "" {
			if mask {
				out = append(out, ind+"no ip address")
			}
		} else if mask {
			a, m := prefixMask(i.IP)
			out = append(out, ind+"ip address "+a+" "+m)
		} else {
			out = append(out, ind+"ip address "+i.IP)
		}
	}
	if !i.Enabled {
		out = append(out, ind+"shutdown")
	}
	return out
}

func isPhysical(name string) bool {
	typ, _ := splitIfName(name)
	return strings.Contains(strings.ToLower(typ), "ethernet")
}

func nxosRunning(st *state) []string {
	out := []string{"", "!Command: show running-config", "!Running configuration last done at: Mon Oct  4 09:15:02 2021",
		"!Time: " + clock(st), "", "version 9.3(8) Bios:version 07.69", "hostname " + st.hostname,
		"feature lldp", "feature interface-vlan", "",
		"username admin password 5 $5$KLHPNB$Xo8mC2v0Qe0lX6s9Zr0gZJ8m8YhQyYk1Dk3Yq1mE0cB  role network-admin",
		"ip domain-lookup", ""}
	var ids []string
	for _, vl := range st.vlans {
		ids = append(ids, fmt.Sprint(vl.ID))
	}
	out = append(out, "vlan "+strings.Join(ids, ","))
	for _, vl := range st.vlans {
		if vl.ID != 1 {
			out = append(out, fmt.Sprintf("vlan %d", vl.ID), "  name "+vl.Name)
		}
	}
	out = append(out, "", "vrf context management", "")
	for _, i := range st.ifaces {
		out = append(out, "", "interface "+i.Name)
		lines := ciscoIfLines(i, "  ", false)
		if i.Enabled {
			lines = append(lines, "  no shutdown")
		}
		out = append(out, lines...)
	}
	return append(out, "line console", "line vty", "boot nxos bootflash:/nxos.9.3.8.bin", "")
}

func eosRunning(st *state) []string {
	out := []string{"! Command: show running-config", "! device: " + st.hostname + " (DCS-7050TX-64, EOS-4.28.3M)",
		"!", "! boot system flash:/EOS-4.28.3M.swi", "!", "no aaa root", "!",
		"username admin privilege 15 role network-admin secret sha512 $6$Lx2bq3Jd1hY8kT0r$u7Qe0p8mXcJ1sZ4bV9nR2tG5yH3kW6qL0aD8fC1eB7oM4iP2uS9vN5xT3zA6wE0rY1gJ8hK4lF7dQ2cX9bV0",
		"!", "hostname " + st.hostname, "!", "spanning-tree mode mstp", "!"}
	for _, vl := range st.vlans {
		if vl.ID != 1 {
			out = append(out, fmt.Sprintf("vlan %d", vl.ID), "   name "+vl.Name, "!")
		}
	}
	for _, i := range st.ifaces {
		out = append(out, "interface "+i.Name)
		out = append(out, ciscoIfLines(i, "   ", false)...)
		out = append(out, "!")
	}
	return append(out, "ip routing", "!", "management ssh", "   idle-timeout 60", "!", "end")
}
