// Package events raises NetBox-style events (a command log written, a schedule's run
// starting and ending), matches them against event rules (and webhooks' own NetBox 3
// triggers) and delivers the webhooks they name: queued in the database, signed, retried
// with backoff, in order per webhook. Nothing here runs on an execution's path: a log's
// event is queued by a trigger in the log's own transaction and matched later.
package events

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"fieldkit/store"
)

// Renderer shows an object as the API does: an event's data (handlers.API).
type Renderer interface {
	RenderEvent(ctx context.Context, objectType string, id int64) (map[string]any, error)
}

// RendererFunc is a function as a Renderer.
type RendererFunc func(ctx context.Context, objectType string, id int64) (map[string]any, error)

// RenderEvent calls f.
func (f RendererFunc) RenderEvent(ctx context.Context, objectType string, id int64) (map[string]any, error) {
	return f(ctx, objectType, id)
}

// Config is how deliveries are sent and retried.
type Config struct {
	Timeout     time.Duration // of one request
	RetryMin    time.Duration // the first retry's delay, doubled at each failure
	RetryMax    time.Duration // the longest delay between two tries
	GiveUpAfter time.Duration // a delivery still failing this long after it was queued is given up
	Workers     int           // receivers contacted at once
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.RetryMin <= 0 {
		c.RetryMin = 5 * time.Second
	}
	if c.RetryMax < c.RetryMin {
		c.RetryMax = max(c.RetryMin, 5*time.Minute)
	}
	if c.GiveUpAfter <= 0 {
		c.GiveUpAfter = 72 * time.Hour
	}
	if c.Workers < 1 {
		c.Workers = 4
	}
	return c
}

// Observer is told what /metrics counts (observe.EventMetrics); nil: nothing.
type Observer interface {
	// Delivery counts a try: delivered, retry (failed, to be tried again) or failed
	// (given up); waited is how long the delivery waited since it was queued.
	Delivery(status string, waited time.Duration)
}

// Options configure a Processor.
type Options struct {
	DB       *store.DB
	Keyring  *store.Keyring // opens webhook secrets
	Render   Renderer
	Logger   *slog.Logger
	Config   Config
	Observer Observer
	Version  string           // in the User-Agent of requests
	Now      func() time.Time // time.Now when nil
}

// Processor matches queued events and sends their webhooks.
type Processor struct {
	o        Options
	mu       sync.Mutex
	cfg      Config
	clients  map[string]*httpClient
	events   chan struct{} // events are waiting
	send     chan struct{} // deliveries are waiting
	states   map[[2]string]bool
	sendMu   sync.Mutex // the sender's read of the heads and its records (sendDue)
	backupMu sync.Mutex
	backups  map[int64]string // each device's backup health at the last WatchBackups; nil before
	inflight map[int64]bool   // webhooks with a request under way; under sendMu
}

// New makes a processor; Run starts it.
func New(o Options) *Processor {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	return &Processor{o: o, cfg: o.Config.withDefaults(), clients: map[string]*httpClient{},
		events: make(chan struct{}, 1), send: make(chan struct{}, 1), inflight: map[int64]bool{}}
}

// Configure applies new delivery settings (SIGHUP).
func (p *Processor) Configure(c Config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg = c.withDefaults()
	p.clients = map[string]*httpClient{}
}

func (p *Processor) config() Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// SetObserver sets what /metrics counts, before Run.
func (p *Processor) SetObserver(o Observer) { p.o.Observer = o }

// Poke says that events may be waiting (an execution was logged). It never blocks.
func (p *Processor) Poke() { nudge(p.events) }

func nudge(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// scheduleEvents are the event types of a schedule run's start and outcomes.
var scheduleEvents = map[string]string{"started": "job_started", "completed": "job_completed", "failed": "job_failed",
	"errored": "job_errored"}

// ScheduleRun queues the event of a schedule run that started or ended with status.
func (p *Processor) ScheduleRun(ctx context.Context, id int64, status string) error {
	ev, ok := scheduleEvents[status]
	if !ok {
		return nil
	}
	err := p.o.DB.QueueEvent(ctx, store.Event{ObjectType: store.TypeSchedule, ObjectID: id, EventType: ev, At: p.o.Now()})
	p.Poke()
	return err
}

// Run matches events and sends deliveries until ctx ends.
func (p *Processor) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.dispatchLoop(ctx) }()
	go func() { defer wg.Done(); p.sendLoop(ctx) }()
	wg.Wait()
	return nil
}

// outboxBatch is how many events one pass matches.
const outboxBatch = 200

func (p *Processor) dispatchLoop(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := p.dispatch(ctx)
		if err != nil && ctx.Err() == nil {
			p.o.Logger.Error("events not matched; trying again", "err", err)
			p.states = nil // read again: the transaction that changed them may not have committed
			sleep(ctx, 5*time.Second)
			continue
		}
		if n == outboxBatch {
			continue
		}
		select {
		case <-ctx.Done():
		case <-p.events:
		case <-time.After(5 * time.Second): // another process (an import) may have queued some
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// rule is a subscription with its conditions compiled.
type rule struct {
	store.Subscription
	cond *Conditions
}

// dispatch matches the oldest waiting events and records the deliveries they make, in
// one transaction with the rule states they turn and their removal from the outbox.
func (p *Processor) dispatch(ctx context.Context) (int, error) {
	evs, err := p.o.DB.Outbox(ctx, outboxBatch)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	rules, err := p.rules(ctx)
	if err != nil {
		return 0, err
	}
	// The rule states are this process's to keep, unless another process matches
	// events too (hub processes on one PostgreSQL): then they are read after the
	// outbox, so that a pass read before the other's commit finds its events taken.
	if p.states == nil || p.o.DB.Postgres() {
		if p.states, err = p.o.DB.EventStates(ctx); err != nil {
			return 0, err
		}
	}
	var out []store.NewDelivery
	turned := map[[2]string]bool{}
	var done []int64
	for _, ev := range evs {
		done = append(done, ev.ID)
		data, err := p.data(ctx, ev)
		if errors.Is(err, store.ErrNotFound) {
			continue // the object is gone (a pruned log): nothing to say about it
		}
		if err != nil {
			return 0, err
		}
		for _, r := range rules {
			if state := p.match(r, ev, data, turned); state != "" {
				out = append(out, store.NewDelivery{WebhookID: r.WebhookID, RuleID: r.RuleID, ObjectType: ev.ObjectType,
					ObjectID: ev.ObjectID, EventType: ev.EventType, State: state, Context: p.context(ev, data, state, r)})
			}
		}
	}
	if err := p.o.DB.Dispatched(ctx, out, turned, done); errors.Is(err, store.ErrEventsTaken) {
		p.states = nil
		return outboxBatch, nil // another process matched them: read what is left at once
	} else if err != nil {
		return 0, err
	}
	if len(out) > 0 {
		nudge(p.send)
	}
	return len(evs), nil
}

// rules loads the enabled rules with their conditions compiled; a rule whose stored
// conditions no longer compile matches nothing (they are checked when saved).
func (p *Processor) rules(ctx context.Context) ([]rule, error) {
	subs, err := p.o.DB.Subscriptions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]rule, 0, len(subs))
	for _, s := range subs {
		c, err := ParseConditions(s.Conditions)
		if err != nil {
			p.o.Logger.Error("event rule conditions do not compile; it fires for nothing", "rule", s.Key, "err", err)
			continue
		}
		out = append(out, rule{Subscription: s, cond: c})
	}
	return out, nil
}

// data is the event's object as the API shows it, and its username.
func (p *Processor) data(ctx context.Context, ev store.Event) (map[string]any, error) {
	if ev.Data != nil {
		var m map[string]any
		err := json.Unmarshal(ev.Data, &m)
		return m, err
	}
	return p.o.Render.RenderEvent(ctx, ev.ObjectType, ev.ObjectID)
}

// match decides what a rule does with an event: "firing", "resolved" or nothing. A
// rule on changes only, for an event that tells an object's outcome (an execution's
// log, a run's end), fires when its conditions start to hold for the object and again
// when they stop; otherwise it fires at every event that matches.
func (p *Processor) match(r rule, ev store.Event, data map[string]any, turned map[[2]string]bool) string {
	if !slices.Contains(r.ObjectTypes, ev.ObjectType) {
		return ""
	}
	matched := slices.Contains(r.EventTypes, ev.EventType) && r.cond.Match(data)
	key := stateKey(ev, data)
	if !r.StateChangesOnly || key == "" {
		if matched {
			return "firing"
		}
		return ""
	}
	k := [2]string{r.Key, key}
	switch held := p.states[k]; {
	case matched && !held:
		p.states[k], turned[k] = true, true
		return "firing"
	case !matched && held:
		delete(p.states, k)
		turned[k] = false
		return "resolved"
	}
	return ""
}

// stateKey names the object whose outcome an event tells: a device's command for an
// execution's log, the schedule for a run's end, a device's configuration for a
// backup's read, a device's backup age; "" for an event that tells none (a run's
// start).
func stateKey(ev store.Event, data map[string]any) string {
	switch {
	case ev.ObjectType == store.TypeCommandLog:
		return "device:" + refKey(data["device"]) + "/command:" + refKey(data["command"])
	case ev.ObjectType == store.TypeSchedule && ev.EventType != "job_started":
		return "schedule:" + strconv.FormatInt(ev.ObjectID, 10)
	case ev.ObjectType == store.TypeConfigVersion:
		return "device:" + refKey(data["device"]) + "/config"
	case ev.ObjectType == store.TypeDevice:
		return "device:" + strconv.FormatInt(ev.ObjectID, 10) + "/backup"
	}
	return ""
}

// refKey is a reference's id, or its name once the object is gone.
func refKey(v any) string {
	m, _ := v.(map[string]any)
	if id, ok := m["id"].(float64); ok {
		return strconv.FormatInt(int64(id), 10)
	}
	name, _ := m["name"].(string)
	return "name=" + name
}

// netboxEvents are the "event" of a webhook's context, as NetBox words it.
var netboxEvents = map[string]string{"object_created": "created", "object_updated": "updated", "object_deleted": "deleted"}

// context is what a webhook's templates see (and its default body): NetBox's event,
// timestamp, model, username, request_id, data and snapshots, FieldKit's object_type,
// state (firing or resolved) and event_rule.
func (p *Processor) context(ev store.Event, data map[string]any, state string, r rule) json.RawMessage {
	name := ev.EventType
	if n, ok := netboxEvents[name]; ok {
		name = n
	}
	model := ev.ObjectType
	if i := lastDot(model); i >= 0 {
		model = model[i+1:]
	}
	user := ev.Username
	if owner, ok := data["owner"].(map[string]any); ok && user == "" {
		user, _ = owner["username"].(string)
	}
	raw, _ := json.Marshal(map[string]any{
		"event": name, "timestamp": ev.At.UTC().Format(store.TimeFormat), "model": model, "object_type": ev.ObjectType,
		"username": user, "request_id": nil, "data": data,
		"snapshots": map[string]any{"prechange": nil, "postchange": nil}, "state": state, "event_rule": r.Name,
	})
	return raw
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

type noObserver struct{}

func (noObserver) Delivery(string, time.Duration) {}
