package handlers

import (
	"strconv"
	"testing"
	"time"

	"fieldkit/exec/devsim"
)

// BenchmarkCollect500 backs up 500 simulated IOS switches (10 ms device latency) in one
// collect request at exec.bulk_concurrency 16, the default: the first collection
// stores 500 versions, the next finds each configuration unchanged. It reports both
// wall times, the devices per second of the second, and the process's peak RSS (the
// 500 simulated devices included).
//
//	go test -run '^$' -bench Collect500 -benchtime 3x ./handlers/
func BenchmarkCollect500(b *testing.B) {
	if testing.Short() {
		b.Skip("500 devices")
	}
	const devices = 500
	x := newXEnv(b, 1<<30, func(o *ExecOptions) { o.BulkConcurrency = 16 })
	ids := make([]int64, devices)
	for i := range ids {
		_, ids[i] = x.deviceWith("cv"+strconv.Itoa(i), "cisco_ios", x.iosPlat, func(c *devsim.Config) {
			c.Latency = 10 * time.Millisecond
		})
	}
	collect := func(want string) time.Duration {
		t0 := time.Now()
		m := x.must(200, "POST", pathCollect, x.admin, map[string]any{"device_ids": ids, "credential_token": x.token})
		took := time.Since(t0)
		if s := m["summary"].(map[string]any); s[want].(float64) != devices {
			b.Fatalf("want %d %s: %v", devices, want, s)
		}
		return took
	}
	first := collect("stored")
	b.ResetTimer()
	var again time.Duration
	for i := 0; i < b.N; i++ {
		again += collect("unchanged")
	}
	b.ReportMetric(float64(first.Milliseconds()), "first-ms")
	b.ReportMetric(float64(again.Milliseconds())/float64(b.N), "unchanged-ms")
	b.ReportMetric(devices/(again.Seconds()/float64(b.N)), "devices/s")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
}
