package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldkit/exec/devsim"
)

// BenchmarkExecuteVsBareSSH runs "show version" through the whole API (HTTP, auth,
// permission checks, credential decryption, SSH session with the driver, TextFSM parse,
// log write) and over a bare x/crypto/ssh session to the same simulated device, side by
// side, and reports their ratio. The device answers after a 10 ms latency, as a real
// one on a LAN at least does.
//
//	go test -run '^$' -bench ExecuteVsBareSSH -benchtime 200x ./handlers/
func BenchmarkExecuteVsBareSSH(b *testing.B) {
	x := newXEnv(b, 1<<30)
	dev, id := x.deviceWith("bench1", "cisco_ios", x.iosPlat, func(c *devsim.Config) {
		c.EnableSecret = ""
		c.Latency = 10 * time.Millisecond
	})
	cmd := x.command("Version", "show version", "show")
	body, _ := json.Marshal(map[string]any{"device_id": id, "credential_token": x.token})
	url := x.srv.URL + execPath(cmd)
	api := func() {
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Token "+x.admin)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.Contains(raw, []byte(`"success":true`)) {
			b.Fatalf("%d %s", res.StatusCode, raw)
		}
	}
	bare := func() {
		if err := devsim.BareRun(dev.Addr(), simUser, simPass, "bench1#", "terminal length 0", "show version"); err != nil {
			b.Fatal(err)
		}
	}
	api() // first contact stores the host key
	var apiTotal, bareTotal time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		api()
		t1 := time.Now()
		bare()
		apiTotal += t1.Sub(t0)
		bareTotal += time.Since(t1)
	}
	b.ReportMetric(float64(apiTotal.Microseconds())/float64(b.N)/1000, "api-ms/op")
	b.ReportMetric(float64(bareTotal.Microseconds())/float64(b.N)/1000, "bare-ms/op")
	b.ReportMetric(float64(apiTotal)/float64(bareTotal), "ratio")
}

// BenchmarkBulk1000 sends 1,000 executions over 100 simulated devices (10 each, 50 ms
// device latency) in one bulk-execute request, and compares the wall time with the
// ideal: the slowest device's serial time, measured as one device's 10 executions
// alone in a bulk request. Peak RSS of the process is reported.
//
//	go test -run '^$' -bench Bulk1000 -benchtime 1x ./handlers/
func BenchmarkBulk1000(b *testing.B) {
	if testing.Short() {
		b.Skip("100 devices")
	}
	const devices, per = 100, 10
	x := newXEnv(b, 1<<30, func(o *ExecOptions) { o.BulkMax = devices * per; o.BulkConcurrency = devices })
	cmd := x.command("Version", "show version", "show")
	ids := make([]int64, devices)
	for i := range ids {
		_, ids[i] = x.deviceWith("dev"+strconv.Itoa(i), "cisco_ios", x.iosPlat, func(c *devsim.Config) {
			c.EnableSecret = ""
			c.Latency = 50 * time.Millisecond
		})
	}
	run := func(devs []int64) time.Duration {
		var execs []any
		for _, id := range devs {
			for j := 0; j < per; j++ {
				execs = append(execs, map[string]any{"command_id": cmd, "device_id": id, "credential_token": x.token, "timeout": 60})
			}
		}
		t0 := time.Now()
		m := x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": execs})
		took := time.Since(t0)
		if s := m["summary"].(map[string]any); s["failed"].(float64) != 0 {
			b.Fatalf("failures: %v", s)
		}
		return took
	}
	var ideal time.Duration
	var mu sync.Mutex
	for _, id := range ids[:3] { // warm host keys of a few and take the slowest single device
		d := run([]int64{id})
		mu.Lock()
		ideal = max(ideal, d)
		mu.Unlock()
	}
	run(ids) // first contact with every device stores its host key
	b.ResetTimer()
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		wall += run(ids)
	}
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms")
	b.ReportMetric(float64(ideal.Milliseconds()), "ideal-ms")
	b.ReportMetric(float64(wall)/float64(b.N)/float64(ideal), "x-ideal")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
}

// peakRSS reads VmHWM from /proc (Linux); 0 elsewhere.
func peakRSS() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
