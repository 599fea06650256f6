package observe

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ScheduleMetrics count the schedules' runs and their device jobs (schedules.Observer).
type ScheduleMetrics struct {
	runs    *prometheus.CounterVec
	skipped *prometheus.CounterVec
	lag     prometheus.Histogram
	jobs    *prometheus.CounterVec
	wait    prometheus.Histogram
}

// lagBuckets are seconds from a run's due time (with its jitter) to its start, and from
// a job's queueing to its start: both are near zero unless the workers are saturated.
var lagBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// Schedules registers the schedules' collectors; jobs reports the device jobs running
// and queued at each scrape. nil Metrics give nil, which the caller does not pass on.
func (m *Metrics) Schedules(jobs func() (running, queued int)) *ScheduleMetrics {
	if m == nil {
		return nil
	}
	f := promauto{m.reg}
	s := &ScheduleMetrics{
		runs: f.counterVec("fieldkit_schedule_runs_total", "Schedule runs by status (completed, failed, errored).", "status"),
		skipped: f.counterVec("fieldkit_schedule_skipped_runs_total",
			"Schedule runs not started: overlap (the run before was still going) or missed (the server was down).", "reason"),
		lag:  f.histogram("fieldkit_schedule_lag_seconds", "How late a schedule run started after it was due (and its jitter).", lagBuckets),
		jobs: f.counterVec("fieldkit_schedule_jobs_total", "Device jobs of schedule runs by outcome (success, failure).", "outcome"),
		wait: f.histogram("fieldkit_schedule_job_wait_seconds", "How long a device job of a schedule run waited for a worker.", lagBuckets),
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fieldkit_schedule_jobs_running", Help: "Device jobs of schedule runs running now."},
			func() float64 { r, _ := jobs(); return float64(r) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fieldkit_schedule_jobs_queued", Help: "Device jobs of schedule runs waiting for a worker."},
			func() float64 { _, q := jobs(); return float64(q) }),
	)
	return s
}

// RunStarted observes a run's lag.
func (s *ScheduleMetrics) RunStarted(lag time.Duration) { s.lag.Observe(max(lag, 0).Seconds()) }

// RunFinished counts a run by its status.
func (s *ScheduleMetrics) RunFinished(status string) { s.runs.WithLabelValues(status).Inc() }

// RunSkipped counts runs not started.
func (s *ScheduleMetrics) RunSkipped(missed bool, n int) {
	reason := "overlap"
	if missed {
		reason = "missed"
	}
	s.skipped.WithLabelValues(reason).Add(float64(n))
}

// JobFinished counts a device job and observes its wait for a worker.
func (s *ScheduleMetrics) JobFinished(ok bool, wait, _ time.Duration) {
	outcome := "failure"
	if ok {
		outcome = "success"
	}
	s.jobs.WithLabelValues(outcome).Inc()
	s.wait.Observe(wait.Seconds())
}

func (p promauto) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	p.reg.MustRegister(h)
	return h
}

// EventMetrics count webhook deliveries (events.Observer).
type EventMetrics struct {
	tries  *prometheus.CounterVec
	waited prometheus.Histogram
}

// Events registers the webhooks' collectors; pending reports the deliveries waiting at
// each scrape. nil Metrics give nil, which the caller does not pass on.
func (m *Metrics) Events(pending func() int64) *EventMetrics {
	if m == nil {
		return nil
	}
	f := promauto{m.reg}
	e := &EventMetrics{
		tries: f.counterVec("fieldkit_webhook_deliveries_total",
			"Webhook delivery attempts by outcome: delivered, retry (failed, tried again later), failed (given up).", "status"),
		waited: f.histogram("fieldkit_webhook_delivery_seconds",
			"From a delivery's queueing to its attempt; the delivered ones' latency.", lagBuckets),
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fieldkit_webhook_deliveries_pending",
		Help: "Webhook deliveries waiting to be sent or retried."}, func() float64 { return float64(pending()) }))
	return e
}

// Delivery counts an attempt and observes how long the delivery waited.
func (e *EventMetrics) Delivery(status string, waited time.Duration) {
	e.tries.WithLabelValues(status).Inc()
	if status == "delivered" {
		e.waited.Observe(waited.Seconds())
	}
}

// DeviceBackup is one device's backup age for /metrics.
type DeviceBackup struct {
	Device, Site string
	Age          time.Duration
	Never, Stale bool
}

// BackupHealth registers fieldkit_backup_age_seconds{device,site} (each device with a
// good backup), fieldkit_backups_never (devices never backed up) and
// fieldkit_backups_stale (devices whose backup is older than its limit), read at each
// scrape.
func (m *Metrics) BackupHealth(read func() []DeviceBackup) {
	if m == nil {
		return
	}
	m.reg.MustRegister(backupCollector{read: read})
}

type backupCollector struct{ read func() []DeviceBackup }

var (
	backupAgeDesc = prometheus.NewDesc("fieldkit_backup_age_seconds",
		"Age of each device's last good config backup.", []string{"device", "site"}, nil)
	backupNeverDesc = prometheus.NewDesc("fieldkit_backups_never", "Active devices never backed up.", nil, nil)
	backupStaleDesc = prometheus.NewDesc("fieldkit_backups_stale",
		"Active devices whose last good config backup is older than its limit.", nil, nil)
)

func (c backupCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backupAgeDesc
	ch <- backupNeverDesc
	ch <- backupStaleDesc
}

func (c backupCollector) Collect(ch chan<- prometheus.Metric) {
	never, stale := 0, 0
	for _, d := range c.read() {
		switch {
		case d.Never:
			never++
			continue
		case d.Stale:
			stale++
		}
		ch <- prometheus.MustNewConstMetric(backupAgeDesc, prometheus.GaugeValue, d.Age.Seconds(), d.Device, d.Site)
	}
	ch <- prometheus.MustNewConstMetric(backupNeverDesc, prometheus.GaugeValue, float64(never))
	ch <- prometheus.MustNewConstMetric(backupStaleDesc, prometheus.GaugeValue, float64(stale))
}
