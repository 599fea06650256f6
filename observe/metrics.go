package observe

import (
	"crypto/subtle"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the Prometheus collectors of one server, in a registry of their own (no
// global state: tests run several servers in one process).
type Metrics struct {
	reg            *prometheus.Registry
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	executions     *prometheus.CounterVec
	execDuration   *prometheus.HistogramVec
	sshFailures    *prometheus.CounterVec
	rateLimited    prometheus.Counter
	bulkPending    prometheus.Gauge
	securityEvents *prometheus.CounterVec
}

// Files are the database's files, measured at each scrape.
type Files struct {
	Database, WAL string
}

// NewMetrics registers FieldKit's collectors, the Go runtime's and the process's.
func NewMetrics(version string, files Files) *Metrics {
	reg := prometheus.NewRegistry()
	f := promauto{reg}
	m := &Metrics{reg: reg,
		requests: f.counterVec("fieldkit_http_requests_total", "HTTP requests by route pattern, method and status.",
			"route", "method", "status"),
		latency: f.histogramVec("fieldkit_http_request_duration_seconds", "HTTP request latency by route pattern and method.",
			prometheus.DefBuckets, "route", "method"),
		executions: f.counterVec("fieldkit_executions_total", "Command executions by driver and outcome.", "driver", "outcome"),
		execDuration: f.histogramVec("fieldkit_execution_duration_seconds", "Command execution time by driver and outcome.",
			[]float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}, "driver", "outcome"),
		sshFailures: f.counterVec("fieldkit_ssh_failures_total", "Executions that failed to connect or log in, by stage (connect, auth, host_key).", "stage"),
		rateLimited: f.counter("fieldkit_rate_limit_rejections_total", "Executions refused by the per-device rate limit."),
		bulkPending: f.gauge("fieldkit_bulk_pending_executions", "Executions of bulk requests accepted and not yet finished."),
		securityEvents: f.counterVec("fieldkit_security_events_total", "Refused requests by kind (login_failed, unauthorized, forbidden, rate_limited).",
			"kind"),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fieldkit_database_size_bytes", Help: "Size of the SQLite database file."},
			func() float64 { return fileSize(files.Database) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fieldkit_database_wal_size_bytes", Help: "Size of the SQLite write-ahead log."},
			func() float64 { return fileSize(files.WAL) }),
	)
	info := f.gaugeVec("fieldkit_build_info", "FieldKit's version and the Go version it was built with (always 1).", "version", "goversion")
	info.WithLabelValues(version, runtime.Version()).Set(1)
	return m
}

func fileSize(path string) float64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(st.Size())
}

// Handler serves the metrics; with a token, only to "Authorization: Bearer <token>".
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"detail":"Invalid or missing metrics token."}` + "\n"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (m *Metrics) request(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
	default:
		method = "OTHER" // a label per invented method would grow without bound
	}
	m.requests.WithLabelValues(route, method, statusLabel(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(d.Seconds())
}

func (m *Metrics) securityEvent(kind string) {
	if m != nil {
		m.securityEvents.WithLabelValues(kind).Inc()
	}
}

// Execution counts a finished execution. outcome is exec.Outcome's word; the connect,
// auth and host-key failures are also counted as SSH failures.
func (m *Metrics) Execution(driver, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.executions.WithLabelValues(driver, outcome).Inc()
	m.execDuration.WithLabelValues(driver, outcome).Observe(d.Seconds())
	switch outcome {
	case "connect_error":
		m.sshFailures.WithLabelValues("connect").Inc()
	case "auth_error":
		m.sshFailures.WithLabelValues("auth").Inc()
	case "host_key_error":
		m.sshFailures.WithLabelValues("host_key").Inc()
	}
}

// RateLimited counts an execution the rate limit refused.
func (m *Metrics) RateLimited() {
	if m != nil {
		m.rateLimited.Inc()
	}
}

// BulkPending moves the count of bulk executions waiting or running.
func (m *Metrics) BulkPending(delta int) {
	if m != nil {
		m.bulkPending.Add(float64(delta))
	}
}

// PoolStats is what the SSH session pool holds and has done.
type PoolStats struct {
	Open, Idle               int
	Logins, Reuses, Replaced uint64
}

// SessionPool reports the SSH session pool, read at each scrape: sessions open and idle,
// and how many executions logged in against how many reused a kept session.
func (m *Metrics) SessionPool(stats func() PoolStats) {
	if m == nil {
		return
	}
	gauge := func(name, help string, v func(PoolStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(stats()) })
	}
	counter := func(name, help string, v func(PoolStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return v(stats()) })
	}
	m.reg.MustRegister(
		gauge("fieldkit_ssh_sessions_open", "SSH sessions open to devices, in use or idle.",
			func(s PoolStats) float64 { return float64(s.Open) }),
		gauge("fieldkit_ssh_sessions_idle", "SSH sessions kept open unused for the next execution.",
			func(s PoolStats) float64 { return float64(s.Idle) }),
		counter("fieldkit_ssh_logins_total", "SSH sessions opened (logins) for executions.",
			func(s PoolStats) float64 { return float64(s.Logins) }),
		counter("fieldkit_ssh_session_reuses_total", "Executions (or bulk groups) that ran on a kept session instead of logging in.",
			func(s PoolStats) float64 { return float64(s.Reuses) }),
		counter("fieldkit_ssh_sessions_replaced_total", "Kept sessions found dead when used and replaced by a fresh login.",
			func(s PoolStats) float64 { return float64(s.Replaced) }),
	)
}

// HubStats is what an edge's hub pusher has sent and has still to send.
type HubStats struct {
	Up             bool // the last push was stored
	Pending        int64
	Behind         time.Duration
	Sent, Failures int64
}

// HubPusher reports an edge's hub pusher, read at each scrape: the records the hub has
// not acknowledged and how old the oldest is, what it sent, and failed pushes.
func (m *Metrics) HubPusher(stats func() HubStats) {
	if m == nil {
		return
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fieldkit_hub_pending_records",
			Help: "Records of this site its hub has not acknowledged."}, func() float64 { return float64(stats().Pending) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fieldkit_hub_behind_seconds",
			Help: "How old the oldest record the hub has not acknowledged is."}, func() float64 { return stats().Behind.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fieldkit_hub_up",
			Help: "1 when the last push to the hub was stored, else 0."}, func() float64 {
			if stats().Up {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fieldkit_hub_records_sent_total",
			Help: "Records the hub stored since the start."}, func() float64 { return float64(stats().Sent) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fieldkit_hub_push_failures_total",
			Help: "Pushes that did not reach the hub or that it failed (retried with backoff)."}, func() float64 { return float64(stats().Failures) }),
	)
}

// promauto registers collectors as they are made.
type promauto struct{ reg *prometheus.Registry }

func (p promauto) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	p.reg.MustRegister(c)
	return c
}

func (p promauto) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	p.reg.MustRegister(h)
	return h
}

func (p promauto) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	p.reg.MustRegister(c)
	return c
}

func (p promauto) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	p.reg.MustRegister(g)
	return g
}

func (p promauto) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	p.reg.MustRegister(g)
	return g
}
