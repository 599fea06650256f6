//go:build !windows

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldkit/netbox/fakenetbox"
	"fieldkit/web/webtest"
)

// TestScheduledSync: `serve` with inventory.netbox_schedule set syncs on its own (an
// interval's first run is at start-up) and reports the job in /api/status/.
func TestScheduledSync(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server: not in -short")
	}
	nb := fakenetbox.Start(t, "testdata/netbox", false)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	bin := testBinary(t)
	runBin(t, bin, "pw-Pa55word-1\n", "user", "create", "admin", "--superuser", "--password-stdin", "--init", "--data", data)
	token := strings.TrimSpace(runBin(t, bin, "", "token", "create", "admin", "--data", data))
	cfg := filepath.Join(dir, "fieldkit.yaml")
	writeFile(t, cfg, "inventory:\n  netbox_url: "+nb.URL+"\n  netbox_token: "+fakenetbox.Token+"\n  netbox_filter: tag=managed\n  netbox_schedule: 1h\n")
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", addr, "--config", cfg)
	cmd.Env = serverEnv()
	var logs webtest.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("serve log:\n%s", logs.String())
		}
	})
	api := apiClient{t: t, base: "http://" + addr, token: token}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(api.base + "/api/status/")
		if err == nil {
			var st struct {
				Scheduler struct {
					Jobs []struct {
						Name, Schedule, State string
						LastError             string `json:"last_error"`
						LastRun               string `json:"last_run"`
					} `json:"jobs"`
				} `json:"scheduler"`
			}
			_ = json.NewDecoder(res.Body).Decode(&st)
			res.Body.Close()
			for _, j := range st.Scheduler.Jobs {
				if j.Name == "netbox_sync" && j.LastRun != "" && !strings.Contains(j.State, "running") {
					if j.Schedule != "every 1h" || j.LastError != "" {
						t.Fatalf("the job: %+v", j)
					}
					var devs struct{ Count int }
					api.get("/api/dcim/devices/?netbox_id__isnull=false", &devs)
					if devs.Count != 4 {
						t.Fatalf("%d synced devices", devs.Count)
					}
					if strings.Contains(logs.String(), fakenetbox.Token) {
						t.Error("the token is in the log")
					}
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scheduled sync within 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
