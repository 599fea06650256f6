package exec

import (
	"context"
	"time"
)

// Step is one command of a job with its own timeout (0: only the context bounds it).
type Step struct {
	Command Command
	Timeout time.Duration
}

// Job is the work done on one device with one credential set in one go: its steps run
// in order over one session. Every execution, single or bulk, is a Job run by Pool.Run.
type Job struct {
	Target Target
	Creds  Credentials
	// SetID and SetVersion name the credential set the credentials come from and its
	// version, which changes with every edit of the set. With the credentials and the
	// target they decide which kept sessions the job may use.
	SetID, SetVersion int64
	Options           Options
	Steps             []Step
	// Done, if not nil, is called with each result as soon as it is known, so that
	// its log can be written at once.
	Done func(i int, r Result)
}

// bound is a step's timeout: the target's command timeout when set, else its own.
func (j *Job) bound(st Step) time.Duration {
	if j.Target.CommandTimeout > 0 {
		return j.Target.CommandTimeout
	}
	return st.Timeout
}

// withBound is context.WithTimeout for d > 0, and ctx itself otherwise.
func withBound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// Run runs a job's steps in order over one session: a kept one if the pool holds one
// for the job, else a fresh login; after the last step the session goes back to the
// pool or is closed. Each step is bounded by its timeout (the target's CommandTimeout
// instead, when set), and ctx bounds all. Getting the session (waiting for a free one,
// logging in) counts against the first step's timeout, unless the target's
// ConnectTimeout bounds the login on its own. When no session can be had, every step
// fails with the reason.
//
// A result's Duration is its step's execution time, measured the same way for single
// and bulk executions: the first step's includes getting the session; handing it back
// counts in none.
func (p *Pool) Run(ctx context.Context, j Job) []Result {
	results := make([]Result, len(j.Steps))
	if len(j.Steps) == 0 {
		return results
	}
	report := func(i int, r Result) {
		results[i] = r
		if j.Done != nil {
			j.Done(i, r)
		}
	}
	start := time.Now()
	first, cancelFirst := withBound(ctx, j.bound(j.Steps[0]))
	defer cancelFirst()
	open, obound := first, timeLeft(first, j.bound(j.Steps[0]))
	if j.Target.ConnectTimeout > 0 {
		open, obound = ctx, timeLeft(ctx, j.Target.ConnectTimeout)
	}
	l, err := p.acquire(first, open, &j)
	if err != nil {
		f := openFailure(open, j.Target, j.Creds, err, obound)
		for i := range j.Steps {
			r := Result{ErrorMessage: f.Error(), Failure: f}
			if i == 0 {
				r.Duration = time.Since(start)
			}
			report(i, r)
		}
		return results
	}
	defer p.release(l)
	for i, st := range j.Steps {
		sctx, cancel := first, context.CancelFunc(func() {})
		if i > 0 || j.Target.ConnectTimeout > 0 {
			// The first step's clock started before the session was had, unless
			// the login had a bound of its own.
			sctx, cancel = withBound(ctx, j.bound(st))
		}
		stepStart := time.Now()
		r := p.runStep(sctx, open, l, &j, st.Command, timeLeft(sctx, j.bound(st)))
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

// runStep runs one command; when a kept session turns out dead in a way that allows it
// (Session.attempt), the command runs again once on a fresh login.
func (p *Pool) runStep(ctx, open context.Context, l *lease, j *Job, cmd Command, bound time.Duration) Result {
	r, retry := l.s.attempt(ctx, cmd, bound, l.reused)
	l.reused = false
	if !retry {
		return r
	}
	l.s.log.Info("exec: kept session found dead, logging in again", "command_type", cmd.Type)
	octx, obound := ctx, bound
	if j.Target.ConnectTimeout > 0 {
		octx, obound = open, timeLeft(open, j.Target.ConnectTimeout)
	}
	if err := p.renew(octx, l, j); err != nil {
		f := openFailure(octx, j.Target, j.Creds, err, obound)
		return Result{ErrorMessage: f.Error(), Failure: f}
	}
	return l.s.runBounded(ctx, cmd, bound)
}

// Execute runs commands over one session opened for them and closed after: Run
// without a pool. Options.Timeout bounds each command and, when the target sets
// neither ConnectTimeout nor CommandTimeout, the whole run.
func Execute(ctx context.Context, t Target, c Credentials, o Options, cmds []Command) []Result {
	if o.Timeout > 0 && t.ConnectTimeout == 0 && t.CommandTimeout == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	steps := make([]Step, len(cmds))
	for i, cmd := range cmds {
		steps[i] = Step{Command: cmd, Timeout: o.Timeout}
	}
	return (*Pool)(nil).Run(ctx, Job{Target: t, Creds: c, Options: o, Steps: steps})
}

// RunBatch runs steps over one session opened for them and closed after: Run without
// a pool. done, if not nil, is called with each result as soon as it is known.
func RunBatch(ctx context.Context, t Target, c Credentials, o Options, steps []Step, done func(i int, r Result)) []Result {
	return (*Pool)(nil).Run(ctx, Job{Target: t, Creds: c, Options: o, Steps: steps, Done: done})
}
