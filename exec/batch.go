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
// bounded by its own timeout; opening the session counts against the first step's.
// When opening fails, every step fails with the reason. done, if not nil, is called
// with each result as soon as it is known (so its log can be written at once).
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
	start := time.Now()
	octx, cancel := context.WithTimeout(ctx, steps[0].Timeout)
	s, err := Open(octx, t, c, o)
	if err != nil {
		msg := openFailure(octx, err, timeoutLabel(octx, steps[0].Timeout))
		cancel()
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
		var sctx context.Context
		if i == 0 {
			sctx = octx // the first step's clock started before the session opened
		} else {
			sctx, cancel = context.WithTimeout(ctx, st.Timeout)
		}
		stepStart := time.Now()
		r := s.runLabelled(sctx, st.Command, timeoutLabel(sctx, st.Timeout))
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
