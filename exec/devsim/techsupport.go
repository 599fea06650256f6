package devsim

import (
	"fmt"
	"time"
)

// techSupportPace is how fast show tech-support prints, per line: a real device takes
// a minute or more gathering it, which is what a streamed run is for.
const techSupportPace = 15 * time.Millisecond

// techSupportLogLines is how many syslog lines show tech-support ends with.
const techSupportLogLines = 1000

// techSupport renders show tech-support the way IOS, NX-OS and EOS frame it: one
// banner per show command it gathers, then the log; about 1,200 lines printed slowly.
func techSupport(v *vendor, st *state) []string {
	var out []string
	section := func(cmd string, lines []string) {
		out = append(out, "", "------------------ "+cmd+" ------------------", "")
		out = append(out, lines...)
	}
	section("show clock", []string{clock(st)})
	section("show version", ciscoVersion(v, st))
	section("show running-config", v.running(st))
	section("show interfaces status", intStatus(v, st))
	section("show vlan", vlanFull(v, st))
	section("show mac address-table", macTable(v, st))
	now := st.clock().UTC()
	var log []string
	for i := range techSupportLogLines {
		at := now.Add(-time.Duration(techSupportLogLines-i) * 37 * time.Second)
		ifc := st.ifaces[i%len(st.ifaces)].Name
		state := []string{"down", "up"}[i%2]
		log = append(log, fmt.Sprintf("%s: %%LINEPROTO-5-UPDOWN: Line protocol on Interface %s, changed state to %s",
			at.Format("Jan  2 15:04:05.000"), ifc, state))
	}
	section("show logging", log)
	return out
}
