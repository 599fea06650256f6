package ui

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"fieldkit/web"
)

// Execution is one execute request that passed every check of the API's execute
// (handlers.Execution): Run runs it to its end, logs it and returns execute's answer.
type Execution interface {
	Run(output func(text string)) (map[string]any, error)
	Cancellable() bool
	Cancel(by string)
	Owner() int64
}

// Executor checks a request as the API's execute does and returns the execution ready
// to run, or the refusal (the API's status and body).
type Executor func(r *http.Request) (Execution, error)

// streamBacklog bounds the output waiting for a slow browser; past it the stream skips
// ahead (the final answer still carries the whole output).
const streamBacklog = 1 << 20

// runs are the streamed executions under way, by id, for their cancel button.
type runs struct {
	mu sync.Mutex
	m  map[string]Execution
}

func (rs *runs) add(x Execution) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[string]Execution{}
	}
	rs.m[id] = x
	return id
}

func (rs *runs) get(id string) Execution {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.m[id]
}

func (rs *runs) remove(id string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.m, id)
}

// outbox holds output between the execution, which must never wait, and the stream.
type outbox struct {
	mu      sync.Mutex
	text    strings.Builder
	skipped int
	ready   chan struct{}
}

func newOutbox() *outbox { return &outbox{ready: make(chan struct{}, 1)} }

func (o *outbox) put(text string) {
	o.mu.Lock()
	if o.text.Len()+len(text) > streamBacklog {
		o.skipped += len(text)
	} else {
		o.text.WriteString(text)
	}
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

func (o *outbox) take() (string, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t, n := o.text.String(), o.skipped
	o.text.Reset()
	o.skipped = 0
	return t, n
}

// run answers POST /ui/api/commands/{id}/run/: the API's execute, with the output
// streamed as it comes. The request is checked by the API's own execute path (the same
// checks in the same order, the rate limit, the log); a refusal is the API's status and
// JSON body. Once accepted, the answer is a stream of server-sent events:
//
//	started  {"run_id", "cancellable"}   the run's id for the cancel endpoint
//	output   {"text"}                    whole lines of output as they are read
//	skipped  {"bytes"}                   output left out because the browser fell behind
//	result   {...execute's answer...}    the end: as POST …/execute/ answers
//	error    {"detail"}                  the end, when the log could not be written
//
// The execution does not depend on the request: a browser that goes away neither stops
// nor loses it (it runs to its end and is logged); only the cancel endpoint stops it.
func (u *UI) run(w http.ResponseWriter, r *http.Request) error {
	if u.execute == nil {
		return web.NotFound()
	}
	x, err := u.execute(r)
	if err != nil {
		return err
	}
	id := u.runs.add(x)
	defer u.runs.remove(id)
	box := newOutbox()
	type end struct {
		body map[string]any
		err  error
	}
	done := make(chan end, 1)
	go func() {
		body, err := x.Run(box.put)
		done <- end{body, err}
	}()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	gone := r.Context().Done()
	send := func(event string, v any) {
		if gone == nil {
			return
		}
		data, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
			gone = nil // the browser left; the execution goes on
			return
		}
		_ = rc.Flush()
	}
	flush := func() {
		text, skipped := box.take()
		if skipped > 0 {
			send("skipped", map[string]int{"bytes": skipped})
		}
		if text != "" {
			send("output", map[string]string{"text": text})
		}
	}
	send("started", map[string]any{"run_id": id, "cancellable": x.Cancellable()})
	for {
		select {
		case <-box.ready:
			flush()
		case <-gone:
			gone = nil
		case e := <-done:
			u.runs.remove(id) // before the end is sent: a cancel after it finds nothing
			flush()
			if e.err != nil {
				u.log.Error("streamed execution not logged", "err", e.err, "request_id", w.Header().Get("X-Request-ID"))
				send("error", map[string]string{"detail": "The execution ran but could not be logged; see the server log."})
				return nil
			}
			send("result", e.body)
			return nil
		}
	}
}

// cancelRun answers POST /ui/api/runs/{id}/cancel/: it stops a streamed show command
// the user started (202). Another user's run, or one that ended, is a 404; a config
// command is a 409, as it runs to its end.
func (u *UI) cancelRun(w http.ResponseWriter, r *http.Request) error {
	s := sessionOf(r)
	x := u.runs.get(web.Param(r, "id"))
	if x == nil || x.Owner() != s.Principal.ID {
		return web.NotFound()
	}
	if !x.Cancellable() {
		return web.Detail(http.StatusConflict, "A config command is not cancelled halfway: it could leave the device half-configured. It stops at its timeout.")
	}
	x.Cancel(s.Principal.Username)
	web.Write(w, http.StatusAccepted, map[string]string{"detail": "Cancelling."})
	return nil
}
