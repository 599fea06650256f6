package devsim

import (
	"strings"
	"testing"
)

func TestVRPAndEXOSFlavours(t *testing.T) {
	for _, f := range []flavour{
		{vendor: "huawei_vrp", prompt: `<sw1>$`, paging: "screen-length 5 temporary", pager: "  ---- More ----",
			show: "display version", showWant: "VRP (R) software, Version 5.170",
			errors: [][2]string{
				{"display foo", "\r\n             ^\r\nError: Unrecognized command found at '^' position.\r\n"},
				{"display", "Error: Incomplete command found at '^' position.\r\n"},
				{"screen-length 0 temporary", "Info: The configuration takes effect on the current user terminal interface only.\r\n"},
			}},
		{vendor: "extreme_exos", prompt: `sw1\.\d+ # $`, pager: "Press <SPACE> to continue or <Q> to quit:",
			showWant: "Switch      : 800605-00-06",
			errors: [][2]string{
				{"show foo", "\r\n             ^\r\n%% Invalid input detected at '^' marker.\r\n"},
				{"show", "%% Incomplete command\r\n"},
			}},
	} {
		t.Run(f.vendor, func(t *testing.T) { checkFlavour(t, f) })
	}
}

// The Huawei pager erases itself with cursor moves, not backspaces.
func TestVRPPagerErase(t *testing.T) {
	d := startDevice(t, Config{Vendor: "huawei_vrp"})
	tm := shell(t, d)
	tm.expect(`<sw1>$`)
	tm.cmd("screen-length 5 temporary", `<sw1>$`)
	tm.cmd("display version", `---- More ----$`)
	tm.send(" ")
	if out := tm.expect(`---- More ----$`); !strings.HasPrefix(out, "\x1b[16D                \x1b[16D") {
		t.Errorf("erase: %q", out)
	}
}

// VRP8 edits a candidate: the prompt marks pending changes, leaving asks,
// cancel stays, commit applies, no discards.
func TestVRPTwoStage(t *testing.T) {
	d := startDevice(t, Config{Vendor: "huawei_vrp", TwoStage: true})
	tm := shell(t, d)
	tm.expect(`<sw1>$`)
	tm.cmd("system-view", `\[~sw1\]$`)
	tm.cmd("interface GigabitEthernet0/0/1", `\[~sw1-GigabitEthernet0/0/1\]$`)
	tm.cmd("description fk-kept", `\[\*sw1-GigabitEthernet0/0/1\]$`)
	if strings.Contains(d.RunningConfig(), "fk-kept") {
		t.Fatal("applied before commit")
	}
	tm.cmd("return", `C\(cancel\)\]:$`)
	tm.cmd("c", `\[\*sw1-GigabitEthernet0/0/1\]$`)
	tm.cmd("commit", `\[~sw1-GigabitEthernet0/0/1\]$`)
	tm.cmd("description fk-dropped", `\[\*sw1-GigabitEthernet0/0/1\]$`)
	tm.cmd("return", `C\(cancel\)\]:$`)
	tm.cmd("n", `<sw1>$`)
	if rc := d.RunningConfig(); !strings.Contains(rc, "description fk-kept") || strings.Contains(rc, "fk-dropped") {
		t.Errorf("running config:\n%s", rc)
	}
}

// EXOS counts commands in its prompt and marks an unsaved configuration
// with "* " until it is saved.
func TestEXOSPromptCounterAndSave(t *testing.T) {
	d := startDevice(t, Config{Vendor: "extreme_exos"})
	tm := shell(t, d)
	tm.expect(`^\r\n[\s\S]*sw1\.1 # $`)
	tm.cmd("show switch", `\r\nsw1\.2 # $`)
	tm.cmd("configure ports 2 description-string fk-test", `\r\n\* sw1\.3 # $`)
	tm.cmd("save configuration", `\(y/N\) $`)
	tm.cmd("y", `\r\nsw1\.4 # $`)
	if rc := d.RunningConfig(); !strings.Contains(rc, `configure ports 2 description-string "fk-test"`) {
		t.Errorf("running config:\n%s", rc)
	}
}
