package devsim

import "testing"

func TestSmoke(t *testing.T) {
	for _, tc := range []struct {
		vendor, first, prompt string
		cmds                  []string
	}{
		{"cisco_iosxr", `xr1#$`, `xr1(\(config[^)]*\))?#$`, []string{"show int status", "sh ipv4 int br", "show arp", "show lldp nei", "conf t", "interface Gi0/0/0/2", "no shut", "ipv4 address 10.9.9.1 255.255.255.0", "commit", "show foo", "end", "show run"}},
		{"juniper_junos", `ex1> $`, `(ex1> |ex1# )$`, []string{"s", "show foo", "foo", "show", "sh int te", "show vlans", "show lldp neighbors", "show arp no-resolve", "configure", "set interfaces ge-0/0/2 description \"new desc\"", "delete interfaces ge-0/0/2 disable", "set foo", "set vlans SRV vlan-id 30", "commit and-quit", "show configuration | display set", "show version | no-more"}},
		{"cisco_nxos", `n9k1# $`, `n9k1(\(config[^)]*\))?# $`, []string{"show int status", "sh ip int br", "show foo", "show", "s", "show vlan", "show lldp nei", "show mac address-table", "show ip arp", "sh run"}},
		{"arista_eos", `leaf1#$`, `leaf1(\(config[^)]*\))?#$`, []string{"terminal length 0", "show int status", "sh ip int br", "show foo", "show", "s", "show vlan", "show lldp nei", "show mac address-table", "show ip arp", "conf", "interface et3", "description x y", "exit", "end", "sh run"}},
		{"linux", `\$ $`, `\$ $`, []string{"uname -a", "ip -br addr", "foo", "cat /etc/os-release"}},
		{"generic", `\$ $`, `\$ $`, []string{"show version", "foo", "show interfaces"}},
	} {
		d := startDevice(t, Config{Vendor: tc.vendor})
		tm := shell(t, d)
		t.Logf("%s", tm.expect(tc.first))
		for _, c := range tc.cmds {
			out := tm.cmd(c, tc.prompt+`|--More-- $|---\(more\)---$`)
			if len(out) > 12 && out[len(out)-12:] == "---(more)---" || len(out) > 10 && out[len(out)-10:] == " --More-- " {
				tm.send("q")
				out += tm.expect(tc.prompt)
			}
			t.Logf("%s", out)
		}
	}
}
