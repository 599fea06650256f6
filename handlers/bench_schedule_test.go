//go:build !windows

package handlers

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"fieldkit/events"
	"fieldkit/schedules"
	"fieldkit/store"
)

// Benchmarks of work that runs by itself:
//
//	go test ./handlers -run '^$' -bench ScheduledMinutes -benchtime 3x   (3 minutes)
//	go test ./handlers -run '^$' -bench WebhookLatency -benchtime 200x
//
// The simulated devices run in a child process (remoteDevices), so the CPU reported is
// FieldKit's alone.

// schedObserver records what the scheduler reports.
type schedObserver struct {
	mu       sync.Mutex
	lags     []time.Duration
	waits    []time.Duration
	jobs     int
	failed   int
	statuses []string
	skipped  int
}

func (o *schedObserver) RunStarted(lag time.Duration) {
	o.mu.Lock()
	o.lags = append(o.lags, lag)
	o.mu.Unlock()
}
func (o *schedObserver) RunFinished(s string) {
	o.mu.Lock()
	o.statuses = append(o.statuses, s)
	o.mu.Unlock()
}
func (o *schedObserver) RunSkipped(_ bool, n int) { o.mu.Lock(); o.skipped += n; o.mu.Unlock() }
func (o *schedObserver) JobFinished(ok bool, wait, _ time.Duration) {
	o.mu.Lock()
	o.jobs++
	if !ok {
		o.failed++
	}
	o.waits = append(o.waits, wait)
	o.mu.Unlock()
}

// BenchmarkScheduledMinutes runs 1,000 device jobs a minute: four schedules, every
// minute, each on the 250 simulated devices of a tag (10 ms latency), with the default
// worker limits; each iteration is one minute. It reports how late the runs started,
// how long jobs waited for a worker, when the minute's last job ended, and the CPU the
// server spent.
func BenchmarkScheduledMinutes(b *testing.B) {
	if testing.Short() {
		b.Skip("minutes long")
	}
	const devices = 250
	x := newXEnv(b, 1<<30)
	ports := remoteDevices(b, devices, 10*time.Millisecond)
	tag := x.must(201, "POST", pathTags, x.admin, map[string]any{"name": "Bench", "slug": "bench"})["id"]
	for i, port := range ports {
		id := x.register("bench"+strconv.Itoa(i), x.iosPlat, port)
		x.must(200, "PATCH", pathDevices+itoa(id)+"/", x.admin, map[string]any{"tags": []any{tag}})
	}
	svc := benchServiceSet(x)
	var ids []int64
	for i, c := range []string{"show version", "show clock", "show ip interface brief", "show vlan brief"} {
		cmd := x.command("C"+strconv.Itoa(i), c, "show")
		ids = append(ids, int64(x.must(201, "POST", pathSchedules, x.admin, scheduleBody("every minute "+strconv.Itoa(i), cmd, svc,
			map[string]any{"cron": "* * * * *", "tags": []any{tag}, "timeout": 30}))["id"].(float64)))
	}
	obs := &schedObserver{}
	real := time.Now()
	offset := real.Truncate(time.Minute).Add(time.Minute - 2*time.Second).Sub(real)
	s := schedules.New(schedules.Options{DB: x.db, Planner: x.api, Logger: x.api.Logger, Observer: obs,
		Limits: schedules.Limits{Workers: 32, PerSite: 16, PerDriver: 16}, Now: func() time.Time { return time.Now().Add(offset) }})
	x.api.Schedules = s
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })

	b.ResetTimer()
	cpu0 := cpuTime()
	var lastDone []time.Duration // per minute: from the minute's start to its last run's end
	since := ""
	for i := 0; i < b.N; i++ {
		minute := time.Now().Add(offset).Truncate(time.Minute).Add(time.Minute)
		var finished string
		for _, id := range ids {
			r := x.lastRun(id, since, 90*time.Second)
			if r["status"] != "completed" || r["devices"].(float64) != devices {
				b.Fatalf("run: %v", r)
			}
			finished = max(finished, r["finished"].(string))
		}
		since = finished
		end, _ := time.Parse(time.RFC3339Nano, finished)
		lastDone = append(lastDone, end.Sub(minute))
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	obs.mu.Lock()
	defer obs.mu.Unlock()
	slices.Sort(obs.waits)
	b.ReportMetric(float64(obs.jobs)/float64(b.N), "jobs/min")
	b.ReportMetric(float64(obs.failed), "failed-jobs")
	b.ReportMetric(float64(obs.skipped), "skipped-runs")
	b.ReportMetric(slices.Max(obs.lags).Seconds(), "max-run-lag-s")
	b.ReportMetric(pct(obs.waits, 0.5).Seconds(), "p50-job-wait-s")
	b.ReportMetric(pct(obs.waits, 0.95).Seconds(), "p95-job-wait-s")
	b.ReportMetric(slices.Max(lastDone).Seconds(), "last-job-done-s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/min")
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

func benchServiceSet(x *xenv) int64 {
	id, err := x.db.CreateServiceCredentialSet(context.Background(), x.kr, 1, store.CredentialInput{Name: ptrTo("bench"),
		Username: ptrTo(simUser), Password: ptrTo(simPass)}, store.True)
	if err != nil {
		x.t.Fatal(err)
	}
	return id
}

// BenchmarkWebhookLatency measures a webhook's delivery: from an execution's log being
// stamped (as it is committed) to the receiver's having the signed request, one
// execution at a time on a simulated device; then a bulk execution of 100 and the time
// until the receiver has all 100.
func BenchmarkWebhookLatency(b *testing.B) {
	x := newXEnv(b, 1<<30)
	arrived := make(chan time.Time, 1000)
	rc := &receiver{t: b, secret: "s", onArrive: func() { arrived <- time.Now() }}
	rc.listen("127.0.0.1:0")
	p := events.New(events.Options{DB: x.db, Keyring: x.kr, Render: x.api, Logger: x.api.Logger, Version: "bench"})
	x.api.Events = p
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	cmd := x.command("Version", "show version", "show")
	hook := x.must(201, "POST", pathWebhooks, x.admin, map[string]any{"name": "bench", "payload_url": "http://" + rc.addr + "/", "secret": "s"})
	x.must(201, "POST", pathEventRules, x.admin, map[string]any{"name": "every", "object_types": []string{store.TypeCommandLog},
		"event_types": []string{"object_created"}, "action_object_id": hook["id"], "state_changes_only": false})
	// exec1 executes and returns when its log was stamped (as the store stamps it, as
	// it joins the commit queue).
	exec1 := func() time.Time {
		m := x.must(200, "POST", execPath(cmd), x.admin, map[string]any{"device_id": x.iosID, "credential_token": x.token})
		l := x.must(200, "GET", pathCommandLogs+itoa(int64(m["command_log_id"].(float64)))+"/?fields=created", x.admin, nil)
		at, _ := time.Parse(time.RFC3339Nano, l["created"].(string))
		return at
	}
	exec1()
	<-arrived
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		logged := exec1()
		lat = append(lat, (<-arrived).Sub(logged))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(pct(lat, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(lat, 0.95).Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(slices.Max(lat).Microseconds())/1000, "max-ms")
	var execs []any
	for range 100 {
		execs = append(execs, map[string]any{"command_id": cmd, "device_id": x.iosID, "credential_token": x.token})
	}
	x.api.Exec.BulkMax = 100
	t0 := time.Now()
	x.must(200, "POST", pathCommands+"bulk-execute/", x.admin, map[string]any{"executions": execs})
	answered := time.Since(t0)
	var last time.Time
	for range 100 {
		last = <-arrived
	}
	b.ReportMetric(float64(answered.Milliseconds()), "bulk100-answered-ms")
	b.ReportMetric(float64(last.Sub(t0).Milliseconds()), "bulk100-all-delivered-ms")
}
