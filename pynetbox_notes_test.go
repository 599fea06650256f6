//go:build !windows

package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPynetboxNotes runs testdata/pynetbox/notes.py against a started `fieldkit serve`
// with a simulated device: a script sets a run's notes at execute time (single and
// bulk), finds the log by them, edits them with save() and update(), is refused any
// other change, and meets the edit permission both ways. Each edit is in the server's
// log with who, which log and the lengths, and the notes' text is not.
func TestPynetboxNotes(t *testing.T) {
	python := pynetboxPython(t)
	if testing.Short() {
		t.Skip("starts the server and runs a Python client: not in -short")
	}
	l := newLab(t, 0)
	s := startServer(t, l, nil)
	script := exec.Command(python, filepath.Join("testdata", "pynetbox", "notes.py"), s.base, l.token,
		strconv.FormatInt(l.cmdID, 10), strconv.FormatInt(l.deviceID, 10), l.credToken)
	script.Env = serverEnv()
	out, err := script.CombinedOutput()
	if err != nil {
		t.Fatalf("notes.py: %v\n%s\nserver log:\n%s", err, out, s.logs.String())
	}
	var got struct{ Log int64 }
	if err := json.Unmarshal(out, &got); err != nil || got.Log == 0 {
		t.Fatalf("notes.py printed %q", out)
	}
	var edits []map[string]any
	for _, line := range strings.Split(s.logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "command log notes edited" {
			edits = append(edits, rec)
		}
	}
	// save(), update(), and bob's once granted change; his refused edit changed nothing.
	if len(edits) != 3 || edits[0]["log_id"] != float64(got.Log) || edits[0]["username"] != "admin" ||
		edits[0]["old_length"] != float64(31) || edits[0]["new_length"] != float64(27) || edits[2]["username"] != "bob-notes" {
		t.Errorf("the edits logged: %v", edits)
	}
	if strings.Contains(s.logs.String(), "CHG4242") || strings.Contains(s.logs.String(), "rolled back") {
		t.Errorf("the server log holds the notes' text")
	}
}
