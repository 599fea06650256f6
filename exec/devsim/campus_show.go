package devsim

import (
	"fmt"
	"strings"
)

// Show renderers of the Cisco-like CLIs in campus.go, in each platform's
// own layout.

func asaVersion(st *state) []string {
	out := []string{
		"",
		"Cisco Adaptive Security Appliance Software Version 9.16(4)",
		"SSP Operating System Version 2.10(1.162)",
		"Device Manager Version 7.18(1)",
		"",
		"Compiled on Thu 25-Aug-22 10:21 GMT by builders",
		`System image file is "disk0:/asa9-16-4-lfbff-k8.SPA"`,
		`Config file at boot was "startup-config"`,
		"",
		st.hostname + " up 23 days 4 hours",
		"",
		"Hardware:   ASA5516, 8192 MB RAM, CPU Atom C2000 series 2416 MHz, 1 CPU (8 cores)",
		"Internal ATA Compact Flash, 8192MB",
		"BIOS Flash M25P64 @ 0xfed01000, 16384KB",
		"",
	}
	for n, i := range st.ifaces {
		out = append(out, fmt.Sprintf("%2d: Ext: %-20s: address is %s, irq 255", n, i.Name, i.MAC))
	}
	return append(out, "",
		"Licensed features for this platform:",
		"Maximum Physical Interfaces       : Unlimited      perpetual",
		"Maximum VLANs                     : 150            perpetual",
		"Inside Hosts                      : Unlimited      perpetual",
		"Failover                          : Active/Active  perpetual",
		"Encryption-DES                    : Enabled        perpetual",
		"Encryption-3DES-AES               : Enabled        perpetual",
		"Security Contexts                 : 2              perpetual",
		"",
		"Serial Number: JAD21440ABC",
		"Configuration register is 0x1",
		"",
		"Configuration last modified by admin at 09:12:45.000 UTC Mon Mar 4 2024",
	)
}

func asaIPBrief(st *state) []string {
	out := []string{fmt.Sprintf("%-28s %-15s %-3s %-6s %-21s %s", "Interface", "IP-Address", "OK?", "Method", "Status", "Protocol")}
	for _, i := range st.ifaces {
		ip, method := "unassigned", "unset"
		if p, ok := prefix(i.IP); ok {
			ip, method = p.Addr().String(), "CONFIG"
		}
		status, proto := ifStatus(i)
		out = append(out, fmt.Sprintf("%-28s %-15s %-3s %-6s %-21s %s", i.Name, ip, "YES", method, status, proto))
	}
	return out
}

func asaRunning(st *state) []string {
	out := []string{": Saved", ":", ": Serial Number: JAD21440ABC", ": Hardware:   ASA5516, 8192 MB RAM, CPU Atom C2000 series 2416 MHz, 1 CPU (8 cores)",
		":", "ASA Version 9.16(4) ", "!", "hostname " + st.hostname,
		"enable password $sha512$5000$W3x1cA2bNvTqPzR0pE7sHg==$Qm4lYt8kZ0vC1nR6pW2xJw== pbkdf2",
		"names", "no mac-address auto", "!"}
	for _, i := range st.ifaces {
		out = append(out, "interface "+i.Name)
		if !i.Enabled {
			out = append(out, " shutdown")
		}
		switch i.Description {
		case "outside", "inside", "mgmt":
			level := map[string]string{"outside": "0", "inside": "100", "mgmt": "100"}[i.Description]
			out = append(out, " nameif "+i.Description, " security-level "+level)
		case "":
			out = append(out, " no nameif", " no security-level")
		default:
			out = append(out, " description "+i.Description, " no nameif", " no security-level")
		}
		if a, m := prefixMask(i.IP); a != "" {
			out = append(out, " ip address "+a+" "+m)
		} else {
			out = append(out, " no ip address")
		}
		out = append(out, "!")
	}
	return append(out, "ftp mode passive", "pager lines 24", "mtu outside 1500", "mtu inside 1500",
		"ssh 10.10.0.0 255.255.255.0 inside", "ssh version 2", "username admin password $sha512$5000$Tq7vXk1LcR9wE2sP0bN4yA==$Hs6dF3gJ8kL1mZ5xC0vB9w== pbkdf2 privilege 15",
		"Cryptochecksum:5b1e4c2d9a0f7e31c46d8b127f3a9e05", ": end")
}

func procurveVersion(*state) []string {
	return []string{
		"Image stamp:    /ws/swbuildm/rel_venice_qaoff/code/build/tam(swbuildm_rel_venice_qaoff_rel_venice)",
		"                Jun 10 2020 11:47:02",
		"                YA.16.10.0009",
		"                340",
		"Boot Image:     Primary",
		"",
		"Boot ROM Version:    YA.15.20",
		"Active Boot ROM:     Primary",
		"",
		"Compatibility Version: 16.10",
		"Minimum Downgrade Version: 15.16",
		"Secure Boot: Disabled",
		"Self-test Status: Passed",
	}
}

func procurveSystem(st *state) []string {
	return []string{
		"",
		" Status and Counters - General System Information",
		"",
		fmt.Sprintf("  System Name        : %s", st.hostname),
		"  System Contact     : noc",
		"  System Location    : lab rack 3",
		"",
		"  MAC Age Time (sec) : 300",
		"",
		"  Time Zone          : 0",
		"  Daylight Time Rule : None",
		"",
		"  Software revision  : YA.16.10.0009        Base MAC Addr      : 0050a1-000000",
		"  ROM Version        : YA.15.20             Serial Number      : CN12KZ3456",
		"",
		"  Up Time            : 23 days              Memory   - Total   : 331,611,136",
		"  CPU Util (%)       : 3                               Free    : 197,422,336",
	}
}

func procurveBrief(st *state) []string {
	out := []string{"", " Status and Counters - Port Status", "",
		"                  | Intrusion                           MDI  Flow Bcast",
		"  Port  Type      | Alert     Enabled Status Mode       Mode Ctrl Limit",
		"  ----- --------- + --------- ------- ------ ---------- ---- ---- -----"}
	for _, i := range st.ifaces {
		enabled, status := "Yes", "Up"
		if !i.Enabled {
			enabled, status = "No", "Down"
		}
		out = append(out, fmt.Sprintf("  %-5s %-9s | %-9s %-7s %-6s %-10s %-4s %-4s %d", i.Name, "100/1000T", "No", enabled, status, "1000FDx", "MDIX", "off", 0))
	}
	return out
}

func procurveRunning(st *state) []string {
	out := []string{"", "Running configuration:", "", "; J9773A Configuration Editor; Created on release #YA.16.10.0009",
		"; Ver #14:01.44.00.04.19.02.13.98.82.34.61.18.28.f3.84.9c.63.ff.37.27:05", "",
		fmt.Sprintf("hostname %q", st.hostname), "module 1 type j9773a", "snmp-server community \"public\" unrestricted"}
	for _, i := range st.ifaces {
		out = append(out, "interface "+i.Name)
		if !i.Enabled {
			out = append(out, "   disable")
		}
		if i.Description != "" {
			out = append(out, fmt.Sprintf("   name %q", i.Description))
		}
		out = append(out, "   exit")
	}
	for _, vl := range st.vlans {
		out = append(out, fmt.Sprintf("vlan %d", vl.ID), fmt.Sprintf("   name %q", vl.Name))
		if ports := st.vlanPorts(vl.ID, nil); len(ports) > 0 {
			out = append(out, "   untagged "+strings.Join(ports, ","))
		}
		out = append(out, "   exit")
	}
	return append(out, "password manager", "password operator", "")
}

func aoscxVersion(*state) []string {
	return []string{
		"-----------------------------------------------------------------------------",
		"ArubaOS-CX",
		"(c) Copyright 2017-2023 Hewlett Packard Enterprise Development LP",
		"-----------------------------------------------------------------------------",
		"Version      : FL.10.11.1021",
		"Build Date   : 2023-02-14 17:21:35 UTC",
		"Build ID     : ArubaOS-CX:FL.10.11.1021:5a6c7b1d2e3f:202302141721",
		"Build SHA    : 5a6c7b1d2e3f40516273849aabbccddeeff00112",
		"Hot Patches  :",
		"Active Image : primary",
		"",
		"Service OS Version : FL.01.10.0002",
		"BIOS Version       : FL.01.0002",
	}
}

func aoscxSystem(st *state) []string {
	return []string{
		"Hostname           : " + st.hostname,
		"System Description : FL.10.11.1021",
		"System Contact     :",
		"System Location    :",
		"",
		"Vendor             : Aruba",
		"Product Name       : JL664A 6300M 24G 4SFP56 Swch",
		"Chassis Serial Nbr : SG12KZ3456",
		"Base MAC Address   : 0050a1-000000",
		"ArubaOS-CX Version : FL.10.11.1021",
		"",
		"Time Zone          : UTC",
		"",
		"Up Time            : 3 weeks, 2 days, 4 hours, 12 minutes",
		"CPU Util (%)       : 4",
		"Memory Usage (%)   : 27",
	}
}

func aoscxBrief(st *state) []string {
	rule := strings.Repeat("-", 90)
	out := []string{rule, fmt.Sprintf("%-12s %-7s %-7s %-6s %-9s %-20s %-6s %s", "Port", "Native", "Mode", "Type", "Enabled", "Status", "Reason", "Speed"),
		fmt.Sprintf("%-12s %-7s %-7s %-6s %-9s %-20s %-6s %s", "", "VLAN", "", "", "", "", "", "(Mb/s)"), rule}
	for _, i := range st.ifaces {
		mode, vlan := "routed", "--"
		if i.Mode != "" {
			mode, vlan = i.Mode, fmt.Sprint(max(i.VLAN, 1))
		}
		enabled, status, reason := "yes", "up", ""
		if !i.Enabled {
			enabled, status, reason = "no", "down", "Administratively down"
		}
		out = append(out, fmt.Sprintf("%-12s %-7s %-7s %-6s %-9s %-20s %-6s %s", i.Name, vlan, mode, "1GbT", enabled, status, reason, "1000"))
	}
	return out
}

func aoscxRunning(st *state) []string {
	out := []string{"Current configuration:", "!", "!Version ArubaOS-CX FL.10.11.1021", "!export-password: default",
		"hostname " + st.hostname, "user admin group administrators password ciphertext AQBapXk1Lc9wE2sP0bN4yA", "!", "ssh server vrf mgmt"}
	for _, vl := range st.vlans {
		out = append(out, fmt.Sprintf("vlan %d", vl.ID))
		if vl.ID != 1 {
			out = append(out, "    name "+vl.Name)
		}
	}
	for _, i := range st.ifaces {
		out = append(out, "interface "+i.Name)
		if i.Description != "" {
			out = append(out, "    description "+i.Description)
		}
		if i.Enabled {
			out = append(out, "    no shutdown")
		}
		switch i.Mode {
		case "access":
			out = append(out, fmt.Sprintf("    vlan access %d", max(i.VLAN, 1)))
		case "trunk":
			out = append(out, "    vlan trunk native 1", "    vlan trunk allowed all")
		default:
			out = append(out, "    routing")
			if i.IP != "" {
				out = append(out, "    ip address "+i.IP)
			}
		}
	}
	return append(out, "!", "https-server vrf mgmt")
}

func os10Version(*state) []string {
	return []string{
		"Dell EMC Networking OS10 Enterprise",
		"Copyright (c) 1999-2022 by Dell Inc. All Rights Reserved.",
		"OS Version: 10.5.4.2",
		"Build Version: 10.5.4.2.98",
		"Build Time: 2022-10-07T00:51:47+0000",
		"System Type: S4148F-ON",
		"Architecture: x86_64",
		"Up Time: 3 weeks 2 days 04:12:45",
	}
}

func os10Status(st *state) []string {
	rule := strings.Repeat("-", 88)
	out := []string{rule, fmt.Sprintf("%-18s %-19s %-7s %-6s %-7s %-4s %-5s %s", "Port", "Description", "Status", "Speed", "Duplex", "Mode", "Vlan", "Tagged-Vlans"), rule}
	for _, i := range st.ifaces {
		status, mode, vlan := "up", "A", fmt.Sprint(max(i.VLAN, 1))
		if !i.Enabled {
			status = "down"
		}
		switch i.Mode {
		case "trunk":
			mode, vlan = "T", "1"
		case "":
			mode, vlan = "", ""
		}
		out = append(out, fmt.Sprintf("%-18s %-19.19s %-7s %-6s %-7s %-4s %-5s %s", shortIf(i.Name, map[string]string{"ethernet": "Eth "}), i.Description, status, "25G", "full", mode, vlan, ""))
	}
	return append(out, rule)
}

func os10Running(st *state) []string {
	out := []string{"! Version 10.5.4.2", "! Last configuration change at Mar  04 09:12:45 2024", "!",
		"ip vrf default", "!", "hostname " + st.hostname,
		"system-user linuxadmin password $6$5DdOHYg5$Jd9Vf4mE2kW1pQ7sR3tY8uZ0xC6vB5nM4lK3jH2gF1dS0aP9oI8uY7tR6eW5qQ4",
		"username admin password $6$q9QBeYjZ$rJ1uS5eVh3Wy7bK2mN8pQ4tX6vZ0cA9dF3gH5jK7lM1nB3vC5xZ7 role sysadmin priv-lvl 15", "!"}
	for _, i := range st.ifaces {
		out = append(out, "interface "+i.Name)
		if i.Description != "" {
			out = append(out, " description "+i.Description)
		}
		if i.Enabled {
			out = append(out, " no shutdown")
		} else {
			out = append(out, " shutdown")
		}
		switch i.Mode {
		case "access":
			out = append(out, fmt.Sprintf(" switchport access vlan %d", max(i.VLAN, 1)))
		case "trunk":
			out = append(out, " switchport mode trunk")
		default:
			out = append(out, " no switchport")
			if i.IP != "" {
				out = append(out, " ip address "+i.IP)
			}
		}
		out = append(out, "!")
	}
	return append(out, "management route 0.0.0.0/0 192.0.2.1", "!", "end")
}

func fastironVersion(st *state) []string {
	out := []string{
		"  Copyright (c) Ruckus Networks, Inc. All rights reserved.",
		"    UNIT 1: compiled on Jan 10 2023 at 19:52:54 labeled as SPR08095m",
		"      (33554432 bytes) from Primary SPR08095m.bin (UFI)",
		"        SW: Version 08.0.95mT213",
		"      Compressed Primary Boot Code size = 786944, Version:10.1.24T225 (spz10124)",
		"       Compiled on Mon Dec  6 17:06:45 2021",
		"",
		"  HW: Stackable ICX7150-24P-POE",
		"==========================================================================",
		"UNIT 1: SL 1: ICX7150-24P POE 24-port Management Module",
		"         Serial  #:FEK3221N0AB",
		"         Software Package: ICX7150_L3_SOFT_PACKAGE   (LID: fwmINJOpFjk)",
		"         Current License: l3-prem-8X10G",
		"         P-ASIC  0: type B160, rev 11  Chip BCM56160_B0",
		"==========================================================================",
		"UNIT 1: SL 2: ICX7150-2X1GC 2-port 2G Module",
		"==========================================================================",
		"UNIT 1: SL 3: ICX7150-4X10GF 4-port 40G Module",
		"==========================================================================",
		"  1000 MHz ARM processor ARMv7 88 MHz bus",
		"   8192 KB boot flash memory",
		"   2048 MB code flash memory",
		"   1024 MB DRAM",
		"STACKID 1  system uptime is 23 day(s) 4 hour(s) 12 minute(s) 45 second(s)",
		"The system started at 05:00:00 GMT+00 Mon Feb 10 2024",
		"",
		"The system : started=warm start   reloaded=by \"reload\"",
	}
	return append(out, fmt.Sprintf("My MAC is %s", st.ifaces[0].MAC))
}

func fastironBrief(st *state) []string {
	out := []string{"", fmt.Sprintf("%-8s %-6s %-8s %-6s %-6s %-4s %-3s %-4s %-4s %-14s %s", "Port", "Link", "State", "Dupl", "Speed", "Trunk", "Tag", "Pvid", "Pri", "MAC", "Name")}
	for _, i := range st.ifaces {
		link, state := "Up", "Forward"
		if !i.Enabled {
			link, state = "Disable", "None"
		}
		tag := "No"
		if i.Mode == "trunk" {
			tag = "Yes"
		}
		out = append(out, fmt.Sprintf("%-8s %-6s %-8s %-6s %-6s %-5s %-3s %-4d %-4d %-14s %s",
			strings.TrimPrefix(i.Name, "ethernet"), link, state, "Full", "1G", "None", tag, max(i.VLAN, 1), 0, i.MAC, i.Description))
	}
	return out
}

func fastironRunning(st *state) []string {
	out := []string{"Current configuration:", "!", "ver 08.0.95mT213", "!", "stack unit 1",
		"  module 1 icx7150-24p-poe-port-management-module", "  module 2 icx7150-2-copper-port-2g-module", "!"}
	for _, vl := range st.vlans {
		out = append(out, fmt.Sprintf("vlan %d name %s by port", vl.ID, vl.Name))
		for _, p := range st.vlanPorts(vl.ID, nil) {
			out = append(out, " untagged ethe "+strings.TrimPrefix(p, "ethernet"))
		}
		out = append(out, "!")
	}
	out = append(out, "hostname "+st.hostname, "username admin password 8 $1$Ks9.Tq4$Xw3mV7nB2pL5cZ8rQ1tY0.", "!")
	for _, i := range st.ifaces {
		out = append(out, "interface ethernet "+strings.TrimPrefix(i.Name, "ethernet"))
		if i.Description != "" {
			out = append(out, " port-name "+i.Description)
		}
		if !i.Enabled {
			out = append(out, " disable")
		}
		out = append(out, "!")
	}
	return append(out, "end")
}
