package hub

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"fieldkit/store"
	"fieldkit/web"
)

// Renderer renders objects as the edge's API shows them (handlers.API does).
type Renderer interface {
	// Render returns the JSON of each object of a kind that exists, by id.
	Render(ctx context.Context, kind string, ids []int64) (map[int64]json.RawMessage, error)
}

// PusherConfig is what an edge's pusher needs.
type PusherConfig struct {
	URL    string // the hub's base URL
	Token  string // the site's token
	CAFile string // PEM CA certificates for the hub's HTTPS, besides the system's
	// Version is this FieldKit's; Now its clock (the store's), sent for the hub to
	// measure the skew.
	Version string
	Now     func() time.Time
}

// The pusher's pace: how often it looks for new records, the longest it stays silent
// (a heartbeat tells the hub it is alive), how long a push may take, and how long it
// waits after a failure (doubling up to maxBackoff, jittered), a refusal or a hub that
// needs upgrading. maxBackoff bounds how late an edge cut off for hours notices its hub
// is back (at most 30 s with the jitter), so that a backlog of 100,000 logs is at the
// hub within a minute of its return (docs/BENCHMARKS.md).
const (
	pollEvery   = 250 * time.Millisecond
	heartbeat   = 30 * time.Second
	pushTimeout = 5 * time.Minute
	minBackoff  = time.Second
	maxBackoff  = 20 * time.Second
	refusedWait = 5 * time.Minute
	upgradeWait = 10 * time.Minute
	// keepSent is how long acknowledged records stay, for a hub restored from a backup
	// to ask for them again.
	keepSent = 72 * time.Hour
)

// Pusher sends an edge's outbox to its hub, in order, until its context ends.
type Pusher struct {
	db     *store.DB
	render Renderer
	cfg    PusherConfig
	client *http.Client
	logger *slog.Logger

	mu     sync.Mutex
	status Status
	// limit is the most records a batch carries: halved by each 413, back to
	// MaxRecords after a success.
	limit int
	// cutTo, when set by a 413 of a batch of one log, is what that log's output is cut
	// to.
	cutTo int64
	// wake asks the loop to look at the outbox now (tests, a fresh log).
	wake chan struct{}
	// worker runs the loop (Start, Wait); the caller enabled the outbox
	// (store.DB.EnableOutbox) first.
	worker
}

// Status is what the pusher last did, for /api/status/, /metrics and the web UI.
type Status struct {
	URL string `json:"url"`
	// State is ok (the last push was stored), unreachable (it failed; retried with
	// backoff), busy (the hub asked to wait), refused (the token: 401 or 403),
	// upgrade_required (the hub speaks an older protocol: 426, retried every 10
	// minutes) or superseded (a restored copy of this database pushes instead).
	State     string    `json:"state"`
	LastError string    `json:"last_error,omitempty"`
	LastPush  time.Time `json:"last_push,omitzero"`
	// Sent and Duplicates count the records the hub stored since the start, and those
	// it held already.
	Sent       int64 `json:"sent"`
	Duplicates int64 `json:"duplicates"`
	Failures   int64 `json:"failures"`
}

// NewPusher builds a pusher; Run sends.
func NewPusher(db *store.DB, render Renderer, cfg PusherConfig, logger *slog.Logger) (*Pusher, error) {
	tr, err := web.ClientTransport(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC() }
	}
	p := &Pusher{db: db, render: render, cfg: cfg, logger: logger, client: &http.Client{Transport: tr, Timeout: pushTimeout},
		status: Status{URL: cfg.URL, State: "starting"}, limit: MaxRecords, wake: make(chan struct{}, 1)}
	p.worker = newWorker(p.run)
	return p, nil
}

// Status is the pusher's last state.
func (p *Pusher) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// Wake makes the pusher look at the outbox now rather than at its next poll.
func (p *Pusher) Wake() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// worker is a loop of the pusher's or the runner's: Start runs it until its context
// ends, Wait waits for it.
type worker struct {
	loop func(ctx context.Context)
	done chan struct{}
}

func newWorker(loop func(ctx context.Context)) worker {
	return worker{loop: loop, done: make(chan struct{})}
}

// Start runs the loop until ctx ends.
func (w *worker) Start(ctx context.Context) {
	go func() {
		defer close(w.done)
		w.loop(ctx)
	}()
}

// Wait returns once the loop Start ran has stopped.
func (w *worker) Wait() { <-w.done }

// run sends the outbox, oldest record first, until ctx ends.
func (p *Pusher) run(ctx context.Context) {
	var last time.Time // the last push, heartbeats included
	backoff := time.Duration(0)
	pruned := time.Time{}
	for {
		wait := pollEvery
		st, err := p.db.OutboxState(ctx)
		if err == nil && (st.Pending > 0 || time.Since(last) >= heartbeat) {
			wait, err = p.pushOnce(ctx, st)
			last = time.Now()
		}
		if err != nil && ctx.Err() != nil {
			return
		}
		if err != nil {
			backoff = min(max(2*backoff, minBackoff), maxBackoff)
			wait = jitter(backoff)
			p.failed(err)
		} else if wait == 0 {
			backoff = 0
		}
		if time.Since(pruned) > time.Hour {
			if _, err := p.db.PruneOutbox(ctx, time.Now().Add(-keepSent)); err != nil && ctx.Err() == nil {
				p.logger.Warn("hub: pruning the sent records", "err", err)
			}
			pruned = time.Now()
		}
		if wait == 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-time.After(wait):
		}
	}
}

// jitter is d give or take half of it.
func jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(d)+1))
}

// failed notes a push that failed (the hub unreachable, a 5xx).
func (p *Pusher) failed(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status.State != "unreachable" {
		p.logger.Warn("hub: push failed; retrying with backoff", "url", p.cfg.URL, "err", err)
	}
	p.status.State, p.status.LastError = "unreachable", err.Error()
	p.status.Failures++
}

// note sets the state after a push the hub answered.
func (p *Pusher) note(state, msg string, ans Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if state != p.status.State && state != "ok" {
		p.logger.Warn("hub: push refused", "url", p.cfg.URL, "state", state, "detail", msg)
	}
	p.status.State, p.status.LastError, p.status.LastPush = state, msg, time.Now()
	p.status.Sent += int64(ans.Applied)
	p.status.Duplicates += int64(ans.Duplicates)
}

// pushOnce sends one batch from the oldest unacknowledged record and handles the
// answer. It returns how long to wait before the next (0: at once), or an error to
// back off from.
func (p *Pusher) pushOnce(ctx context.Context, st store.OutboxState) (time.Duration, error) {
	b, err := p.batch(ctx, st)
	if err != nil {
		return 0, err
	}
	status, ans, header, err := p.post(ctx, b)
	if err != nil {
		return 0, err
	}
	switch status {
	case http.StatusOK:
		p.limit, p.cutTo = MaxRecords, 0
		if err := p.db.AckOutbox(ctx, b.Epoch, ans.Acknowledged); err != nil {
			return 0, err
		}
		p.note("ok", "", ans)
		if len(b.Records) == 0 || st.Pending <= int64(len(b.Records)) {
			return pollEvery, nil
		}
		return 0, nil
	case http.StatusConflict:
		return p.conflict(ctx, st, b, ans)
	case http.StatusRequestEntityTooLarge:
		p.tooLarge(b, ans)
		return 0, nil
	case http.StatusTooManyRequests:
		p.note("busy", ans.Detail, Answer{})
		secs, _ := strconv.Atoi(header.Get("Retry-After"))
		return time.Duration(max(secs, 1)) * time.Second, nil
	case http.StatusUpgradeRequired:
		p.note("upgrade_required", ans.Detail, Answer{})
		return upgradeWait, nil
	case http.StatusUnauthorized, http.StatusForbidden:
		p.note("refused", ans.Detail, Answer{})
		return refusedWait, nil
	}
	return 0, fmt.Errorf("hub answered %d: %s", status, orDefault(ans.Detail, http.StatusText(status)))
}

// conflict handles a 409: a hub that lost records gets them again when the outbox
// still holds them; one whose count this database cannot match (it was rewound, or
// the records were pruned) gets a new epoch with a snapshot; a superseded database
// stops.
func (p *Pusher) conflict(ctx context.Context, st store.OutboxState, b Batch, ans Answer) (time.Duration, error) {
	switch ans.Code {
	case CodeSuperseded:
		p.note("superseded", ans.Detail, Answer{})
		return upgradeWait, nil
	case CodeGap:
		if ans.Expected <= st.Last+1 && p.db.ResendFrom(ctx, b.Epoch, ans.Expected) == nil {
			p.logger.Info("hub: the hub expects older records; sending them again", "from", ans.Expected)
			return 0, nil
		}
	}
	p.logger.Warn("hub: the hub's records and this database's disagree; starting a new epoch",
		"code", ans.Code, "expected", ans.Expected, "detail", ans.Detail)
	_, err := p.db.RotateEpoch(ctx)
	return 0, err
}

// tooLarge handles a 413: a batch of several records is halved; a batch of one log has
// its output cut to what the hub takes.
func (p *Pusher) tooLarge(b Batch, ans Answer) {
	if len(b.Records) > 1 {
		p.limit = max(len(b.Records)/2, 1)
		return
	}
	limit := ans.MaxBytes
	if limit <= 0 {
		limit = MaxBatchBytes
	}
	p.cutTo = limit / 4 // room for the rest of the log and JSON's escapes
}

// batch reads the records from the oldest unacknowledged one and renders them, up to
// the limits (a first record larger than MaxBatchBytes goes alone).
func (p *Pusher) batch(ctx context.Context, st store.OutboxState) (Batch, error) {
	b := Batch{Protocol: Protocol, Instance: st.Instance, Epoch: st.Epoch, EpochStart: st.EpochStart,
		Version: p.cfg.Version, Backlog: st.Pending, SentAt: p.cfg.Now(), Records: []Record{}}
	if !st.Oldest.IsZero() {
		b.Oldest = &st.Oldest
	}
	recs, err := p.db.OutboxRecords(ctx, st.Acked+1, p.limit)
	if err != nil || len(recs) == 0 {
		return b, err
	}
	bodies, uids, err := p.bodies(ctx, st.Instance, recs)
	if err != nil {
		return b, err
	}
	size := 0
	for _, r := range recs {
		rec := Record{Seq: r.Seq, Kind: r.Kind, Op: r.Op, ID: r.Ref, UID: uids[r.Ref]}
		if r.Kind != store.KindLog {
			rec.UID = ""
		}
		if r.Op == store.OpUpsert {
			body, ok := bodies[r.Kind][r.Ref]
			if !ok {
				rec.Op = store.OpDelete // gone since: its delete is a later record
			}
			rec.Body = body
		}
		if rec.Kind == store.KindLog && p.cutTo > 0 && len(recs) == 1 {
			rec.Body, rec.Cut = cutOutput(rec.Body, p.cutTo)
		}
		if size += len(rec.Body) + 100; size > MaxBatchBytes && len(b.Records) > 0 {
			break
		}
		b.Records = append(b.Records, rec)
	}
	return b, nil
}

// bodies renders the objects the records upsert, each once, by kind and id; and the
// uid of each log.
func (p *Pusher) bodies(ctx context.Context, instance string, recs []store.OutboxRecord) (map[string]map[int64]json.RawMessage, map[int64]string, error) {
	ids := map[string][]int64{}
	seen := map[string]map[int64]bool{}
	for _, r := range recs {
		if r.Op != store.OpUpsert || seen[r.Kind][r.Ref] {
			continue
		}
		if seen[r.Kind] == nil {
			seen[r.Kind] = map[int64]bool{}
		}
		seen[r.Kind][r.Ref] = true
		ids[r.Kind] = append(ids[r.Kind], r.Ref)
	}
	out := map[string]map[int64]json.RawMessage{}
	for kind, list := range ids {
		var err error
		switch kind {
		case store.KindSnapshot:
			out[kind], err = p.snapshot(ctx)
		case store.KindJob:
			out[kind], err = p.jobBodies(ctx, instance, list)
		default:
			out[kind], err = p.render.Render(ctx, kind, list)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("hub: render %s: %w", kind, err)
		}
	}
	uids := map[int64]string{}
	if logs := ids[store.KindLog]; len(logs) > 0 {
		stamps, err := p.db.LogStamps(ctx, logs)
		if err != nil {
			return nil, nil, err
		}
		for id, created := range stamps {
			uids[id] = LogUID(instance, id, created)
		}
	}
	return out, uids, nil
}

// snapshot is the body of a snapshot record: every object's id, by kind.
func (p *Pusher) snapshot(ctx context.Context) (map[int64]json.RawMessage, error) {
	ids, err := p.db.SnapshotIDs(ctx)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(ids)
	return map[int64]json.RawMessage{0: body}, err
}

// LogUID is a log's uid: the database it was written in, its id there and the stamp
// of its creation, which a restored copy sending it again keeps and a new log that
// takes a rewound database's id does not.
func LogUID(instance string, id int64, created string) string {
	sum := sha256.Sum256([]byte(instance + "/" + strconv.FormatInt(id, 10) + "/" + created))
	return hex.EncodeToString(sum[:16])
}

// cutOutput cuts a rendered log's output to at most n bytes (and drops its parsed
// output), for a hub that refuses it whole.
func cutOutput(body json.RawMessage, n int64) (json.RawMessage, bool) {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return body, false
	}
	out, _ := m["output"].(string)
	if int64(len(out)) <= n && m["parsed_output"] == nil {
		return body, false
	}
	if int64(len(out)) > n {
		out = strings.ToValidUTF8(out[:n], "")
	}
	m["output"], m["parsed_output"] = out, nil
	cut, err := json.Marshal(m)
	if err != nil {
		return body, false
	}
	return cut, true
}

// post sends a batch, gzip-compressed, and reads the hub's answer.
func (p *Pusher) post(ctx context.Context, b Batch) (int, Answer, http.Header, error) {
	var ans Answer
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(b); err != nil {
		return 0, ans, nil, err
	}
	if err := zw.Close(); err != nil {
		return 0, ans, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(p.cfg.URL, "/")+PushPath, &buf)
	if err != nil {
		return 0, ans, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+p.cfg.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set(ProtocolHeader, strconv.Itoa(Protocol))
	req.Header.Set("User-Agent", "FieldKit/"+p.cfg.Version)
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, ans, nil, fmt.Errorf("hub: push: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, ans, nil, fmt.Errorf("hub: push: %w", err)
	}
	if err := json.Unmarshal(raw, &ans); err != nil && resp.StatusCode == http.StatusOK {
		return 0, ans, nil, errors.New("hub: push: the hub's answer is not JSON")
	}
	return resp.StatusCode, ans, resp.Header, nil
}
