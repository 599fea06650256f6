package exec

import (
	"context"
	"time"
)

// Step is one command of a batch with its own timeout.
type Step struct {
	Command Command
	Timeout time.Duration
}

// RunBatch runs steps in order over one session to one device: the way bulk execution
// runs several executions on the same device with the same credentials. Each step is
// bounded by its own timeout (the target's CommandTimeout instead, when set); opening
// the session counts against the first step's, unless the target's ConnectTimeout
// bounds it on its own. When opening fails, every step fails with the reason. done, if
// not nil, is called with each result as soon as it is known (so its log can be
// written at once).
func RunBatch(ctx context.Context, t Target, c Credentials, o Options, steps []Step, done func(i int, r Result)) []Result {
	results := make([]Result, len(steps))
	if len(steps) == 0 {
		return results
	}
	report := func(i int, r Result) {
		results[i] = r
		if done != nil {
			done(i, r)
		}
	}
	bound := func(st Step) time.Duration {
		if t.CommandTimeout > 0 {
			return t.CommandTimeout
		}
		return st.Timeout
	}
	start := time.Now()
	first, cancelFirst := context.WithTimeout(ctx, bound(steps[0]))
	defer cancelFirst()
	octx, olabel := first, timeoutLabel(first, bound(steps[0]))
	if t.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		octx, cancel = context.WithTimeout(ctx, t.ConnectTimeout)
		defer cancel()
		olabel = timeoutLabel(octx, t.ConnectTimeout)
	}
	s, err := Open(octx, t, c, o)
	if err != nil {
		msg := openFailure(octx, err, olabel)
		for i := range steps {
			r := Result{ErrorMessage: msg}
			if i == 0 {
				r.Duration = time.Since(start)
			}
			report(i, r)
		}
		return results
	}
	defer func() { _ = s.closeWithin(2 * time.Second) }()
	for i, st := range steps {
		sctx, cancel := first, context.CancelFunc(func() {})
		if i > 0 || t.ConnectTimeout > 0 {
			// The first step's clock started before the session opened,
			// unless opening had a bound of its own.
			sctx, cancel = context.WithTimeout(ctx, bound(st))
		}
		stepStart := time.Now()
		r := s.runLabelled(sctx, st.Command, timeoutLabel(sctx, bound(st)))
		if i == 0 {
			r.Duration = time.Since(start)
		} else {
			r.Duration = time.Since(stepStart)
		}
		cancel()
		report(i, r)
	}
	return results
}
