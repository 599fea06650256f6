package exec

import (
	"context"
	"errors"
	"time"
)

// How long a kept session may take to show it is alive. A live CLI echoes a
// typed line at once, so a kept session that sends nothing back within
// answerWithin has lost its path (a NAT or firewall dropped the idle TCP
// state) even though the connection looks open.
const (
	answerWithin = 3 * time.Second
	probeWithin  = 5 * time.Second
	settleWithin = 5 * time.Second
)

// errNotHome reports a kept session whose CLI is no longer in the mode it was
// kept in.
var errNotHome = errors.New("the session is not at its known prompt")

// alive reports whether the connection, and for a shell its channel, are
// still open and nothing has marked the session unusable. It costs no round
// trip: the SSH library notices a closed connection by itself.
func (s *Session) alive() bool {
	if s.broken != nil {
		return false
	}
	select {
	case <-s.gone:
		return false
	default:
	}
	if s.sink != nil {
		select {
		case <-s.sink.done:
			return false
		default:
		}
	}
	return true
}

// quiet reports whether the device sent nothing while the session was kept.
// Anything it did send (a syslog line, a warning before an idle logout) is
// dropped, and calls for a probe before the next command.
func (s *Session) quiet() bool {
	if s.sink == nil {
		return true
	}
	data, closed := s.sink.take()
	return len(data) == 0 && !closed
}

// atHome reports whether the CLI is in the mode the session was opened in:
// out of configuration mode, with the privilege it had after enable.
func (s *Session) atHome() bool {
	if s.d.exec {
		return true
	}
	return !s.d.isConfig(s.prompt) && s.d.isPriv(s.prompt) == s.homePriv
}

// probe sends an empty line and expects the prompt of the session's known
// mode back: the check made before a configuration change goes to a kept
// session, so that not one of its lines is sent to a CLI that is gone or
// elsewhere.
func (s *Session) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeWithin)
	defer cancel()
	s.watch = answerWithin
	if _, err := s.send(ctx, ""); err != nil {
		s.readError(ctx, err, probeWithin)
		return err
	}
	if !s.atHome() {
		return errNotHome
	}
	return nil
}

// settle brings a session back to its known mode before it is kept: a
// configuration prompt (a show command that entered config mode, a change
// whose exit did not land) is left with the driver's abort lines, which
// discard anything uncommitted, and a session that had enable and lost it is
// enabled again. It reports whether the session may be kept.
func (s *Session) settle() bool {
	if !s.alive() {
		return false
	}
	if s.shell == nil {
		return true
	}
	if s.d.isConfig(s.prompt) {
		ctx, cancel := context.WithTimeout(context.Background(), settleWithin)
		defer cancel()
		for _, line := range s.d.configAbort {
			if !s.d.isConfig(s.prompt) {
				break
			}
			if _, err := s.send(ctx, line); err != nil {
				s.readError(ctx, err, settleWithin)
				return false
			}
		}
		s.inConfig = s.d.isConfig(s.prompt)
	}
	if s.homePriv && !s.d.isConfig(s.prompt) && !s.d.isPriv(s.prompt) {
		// A command dropped the privilege ("disable"): enable again, as at login.
		ctx, cancel := context.WithTimeout(context.Background(), settleWithin)
		defer cancel()
		if err := s.enable(ctx); err != nil {
			s.readError(ctx, err, settleWithin)
			return false
		}
	}
	return s.atHome()
}

// attempt runs cmd. On a kept session (one that waited in the pool since its
// last command) it first makes sure the CLI is there: a configuration change
// is preceded by a probe, as is anything after the device spoke unasked; a
// show command goes out at once, and its echo must come back within
// answerWithin. retry reports a session found dead in a way that lets the
// command run again on a fresh one: before any of it reached the device, or
// at any point of a show command, which changes nothing.
func (s *Session) attempt(ctx context.Context, cmd Command, bound time.Duration, kept bool) (r Result, retry bool) {
	if !kept {
		return s.runBounded(ctx, cmd, bound), false
	}
	config := cmd.Type == TypeConfig
	if s.shell != nil && (!s.quiet() || config) {
		if err := s.probe(ctx); err != nil {
			if ctx.Err() != nil {
				f := s.ended(ctx, PhaseCommand, bound, err)
				s.broken = f
				return Result{ErrorMessage: f.Error(), Failure: f}, false
			}
			return Result{}, true
		}
	}
	s.lost, s.touched, s.watch = false, false, answerWithin
	r = s.runBounded(ctx, cmd, bound)
	s.watch = 0
	return r, !r.Success && s.lost && (!config || !s.touched)
}
