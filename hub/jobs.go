package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"fieldkit/store"
	"fieldkit/web"
)

// Commands flowing down: a hub's API queues a job for a site (handlers), the site's
// Runner long-polls Jobs for it, runs it through its own API's checks (JobExecutor) and
// notes its answer, which its outbox sends back as a record of kind job.

// The long poll: a hub holds a poll up to maxWait for a job to come, looking every
// jobLook; an edge asks for pollWait, takes at most jobsAtOnce jobs a poll and runs at
// most that many at once.
const (
	maxWait    = 30 * time.Second
	pollWait   = 25 * time.Second
	jobLook    = 250 * time.Millisecond
	jobsAtOnce = 8
)

// Jobs answers a site's poll (JobsPath, its token): the jobs queued for it, waiting up
// to ?wait= seconds (at most 30) for one to come.
func (in *Ingest) Jobs(w http.ResponseWriter, r *http.Request) error {
	site, err := in.authenticate(r)
	if err != nil {
		return err
	}
	if site.Instance != "" && r.Header.Get(InstanceHeader) != site.Instance {
		return refuse(http.StatusForbidden, Answer{Code: CodeInstance, Detail: fmt.Sprintf(
			"The token of site %q is in use by another FieldKit: each site needs its own token.", site.Name)})
	}
	wait := time.Duration(0)
	if s := r.URL.Query().Get("wait"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return web.BadRequest("wait", "Seconds to wait for a job: an integer, 0 or more.")
		}
		wait = min(time.Duration(n)*time.Second, maxWait)
	}
	deadline := time.Now().Add(wait)
	// The site is seen once a poll (a poll lasts at most maxWait, well inside
	// store.OnlineWithin), and its jobs are claimed, a write, only once a read finds one
	// due: a waiting poll costs the database a read every jobLook, not two writes.
	if err := in.db.NoteHubSeen(r.Context(), site.ID, in.now()); err != nil {
		return err
	}
	for stopping := false; ; {
		due, err := in.db.HubJobsDue(r.Context(), site.ID)
		if err != nil {
			return err
		}
		var jobs []store.HubJob
		if due {
			if jobs, err = in.db.ClaimHubJobs(r.Context(), site.ID, jobsAtOnce); err != nil {
				return err
			}
		}
		if len(jobs) > 0 || stopping || !time.Now().Before(deadline) {
			out := Jobs{Protocol: Protocol, Jobs: []Job{}}
			for _, j := range jobs {
				out.Jobs = append(out.Jobs, Job{ID: j.ID, CommandID: j.EdgeCommandID, DeviceID: j.EdgeDeviceID,
					Variables: j.Variables, Timeout: j.Timeout, By: j.Username, Notes: j.Notes})
			}
			w.Header().Set(ProtocolHeader, strconv.Itoa(Protocol))
			web.Write(w, http.StatusOK, out)
			return nil
		}
		select {
		case <-r.Context().Done():
			return r.Context().Err()
		case <-in.stopping:
			stopping = true // one last look, then the answer
		case <-time.After(jobLook):
		}
	}
}

// JobExecutor runs a hub's job on this edge as its API would run the execute request
// (handlers.API does): the answer's HTTP status and body, and the id of the log it
// wrote (0 when it wrote none).
type JobExecutor interface {
	RunJob(ctx context.Context, commandID, deviceID int64, variables json.RawMessage, timeout int, by, notes string) (int, json.RawMessage, int64)
}

// Runner takes an edge's jobs from its hub and runs them, each once.
type Runner struct {
	db      *store.DB
	exec    JobExecutor
	cfg     PusherConfig
	client  *http.Client
	logger  *slog.Logger
	sent    func() // the pusher's Wake: a job's answer goes at once
	mu      sync.Mutex
	running map[int64]bool  // hub job ids running in this process
	devices map[int64][]Job // each device's jobs waiting for the one it runs; under mu
	slots   chan struct{}
	// worker polls (Start) until its context ends; Wait waits for the polls and the jobs
	// under way.
	worker
}

// NewRunner builds a runner polling the hub of cfg; sent is called when a job's answer
// is ready to go.
func NewRunner(db *store.DB, exec JobExecutor, cfg PusherConfig, sent func(), logger *slog.Logger) (*Runner, error) {
	tr, err := web.ClientTransport(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	r := &Runner{db: db, exec: exec, cfg: cfg, client: &http.Client{Transport: tr, Timeout: pollWait + 15*time.Second},
		logger: logger, sent: sent, running: map[int64]bool{}, devices: map[int64][]Job{}, slots: make(chan struct{}, jobsAtOnce)}
	r.worker = newWorker(r.run)
	return r, nil
}

func (r *Runner) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		jobs, err := r.poll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, minBackoff), maxBackoff)
			select {
			case <-ctx.Done():
			case <-time.After(jitter(backoff)):
			}
			continue
		}
		backoff = 0
		for _, j := range jobs {
			r.slots <- struct{}{} // at most jobsAtOnce held (waiting or running): the next poll waits
			r.queue(ctx, j, &wg)
		}
	}
}

// queue runs a job after the jobs of its device taken before it: a bulk execute's
// elements on one device run in their order, as a local bulk runs them. The job holds
// the slot run took for it until it ends.
func (r *Runner) queue(ctx context.Context, j Job, wg *sync.WaitGroup) {
	r.mu.Lock()
	q, busy := r.devices[j.DeviceID]
	r.devices[j.DeviceID] = append(q, j)
	r.mu.Unlock()
	if busy {
		return // the device's goroutine takes it next
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			r.mu.Lock()
			q := r.devices[j.DeviceID]
			if len(q) == 0 {
				delete(r.devices, j.DeviceID)
				r.mu.Unlock()
				return
			}
			next := q[0]
			r.devices[j.DeviceID] = q[1:]
			r.mu.Unlock()
			r.runJob(ctx, next)
			<-r.slots
		}
	}()
}

// poll asks the hub for this site's jobs, waiting for one to come.
func (r *Runner) poll(ctx context.Context) ([]Job, error) {
	st, err := r.db.OutboxState(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		strings.TrimRight(r.cfg.URL, "/")+JobsPath+"?wait="+strconv.Itoa(int(pollWait/time.Second)), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.cfg.Token)
	req.Header.Set(ProtocolHeader, strconv.Itoa(Protocol))
	req.Header.Set(InstanceHeader, st.Instance)
	req.Header.Set("User-Agent", "FieldKit/"+r.cfg.Version)
	res, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("hub: poll for jobs: %w", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var out Jobs
	if res.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil {
		return nil, fmt.Errorf("hub: poll for jobs: %d %.200s", res.StatusCode, raw)
	}
	return out.Jobs, nil
}

// runJob runs a job unless this edge took it before: a job the hub sends again whose
// run this process does not hold (the server stopped in the middle of it) is answered
// as such, never run a second time (a config change is never sent twice).
func (r *Runner) runJob(ctx context.Context, j Job) {
	r.mu.Lock()
	if r.running[j.ID] {
		r.mu.Unlock()
		return
	}
	r.running[j.ID] = true
	r.mu.Unlock()
	defer func() { r.mu.Lock(); delete(r.running, j.ID); r.mu.Unlock() }()
	ej, taken, err := r.db.TakeEdgeJob(ctx, j.ID)
	if err != nil {
		r.logger.Error("hub: a job not taken", "job", j.ID, "err", err)
		return
	}
	status, answer, logID := 0, json.RawMessage(nil), int64(0)
	switch {
	case taken:
		status, answer, logID = r.exec.RunJob(context.WithoutCancel(ctx), j.CommandID, j.DeviceID, j.Variables, j.Timeout, j.By, j.Notes)
	case ej.Status == 0:
		status = http.StatusServiceUnavailable
		answer, _ = json.Marshal(map[string]string{"detail": "FieldKit at the site stopped while it ran this job: it was not run again. Its log, if it got that far, is in the site's logs."})
	default:
		return // answered before: the answer is on its way
	}
	if err := r.db.FinishEdgeJob(context.WithoutCancel(ctx), ej.ID, status, answer, logID); err != nil {
		r.logger.Error("hub: a job's answer not recorded", "job", j.ID, "err", err)
		return
	}
	if r.sent != nil {
		r.sent()
	}
}

// jobBodies renders the job records' bodies: each job's answer with its log's uid.
func (p *Pusher) jobBodies(ctx context.Context, instance string, ids []int64) (map[int64]json.RawMessage, error) {
	jobs, err := p.db.EdgeJobs(ctx, ids)
	if err != nil {
		return nil, err
	}
	var logs []int64
	for _, j := range jobs {
		if j.LogID != 0 {
			logs = append(logs, j.LogID)
		}
	}
	stamps := map[int64]string{}
	if len(logs) > 0 {
		if stamps, err = p.db.LogStamps(ctx, logs); err != nil {
			return nil, err
		}
	}
	out := map[int64]json.RawMessage{}
	for id, j := range jobs {
		ja := JobAnswer{Job: j.HubJob, Status: j.Status, Answer: j.Answer}
		if created, ok := stamps[j.LogID]; ok {
			ja.LogUID = LogUID(instance, j.LogID, created)
		}
		if len(ja.Answer) == 0 || !json.Valid(ja.Answer) {
			return nil, errors.New("hub: a job's answer is not JSON")
		}
		if out[id], err = json.Marshal(ja); err != nil {
			return nil, err
		}
	}
	return out, nil
}
