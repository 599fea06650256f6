package schedules

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"fieldkit/store"
)

// MinInterval is the shortest interval between two runs of a schedule.
const MinInterval = time.Minute

// timing is when a schedule is due: a cron expression or an interval, kept inside a
// window of the day, each run delayed by up to jitter.
type timing struct {
	cron   cron.Schedule // nil for an interval
	every  time.Duration
	jitter time.Duration
	// from and to are the window's minutes of the day, in loc; from == to: no window.
	from, to int
	loc      *time.Location
}

// CheckWhen validates the fields that say when a schedule runs, as a client wrote them:
// problems by field name, nil when they are right.
func CheckWhen(cronExpr string, interval int64, hasInterval bool, windowStart, windowEnd string) map[string]string {
	out := map[string]string{}
	cronExpr = strings.TrimSpace(cronExpr)
	switch {
	case cronExpr == "" && !hasInterval:
		out["cron"] = "Give a cron expression or an interval."
	case cronExpr != "" && hasInterval:
		out["interval"] = "Give a cron expression or an interval, not both."
	case strings.HasPrefix(cronExpr, "@every"):
		out["cron"] = "Use the interval field for a run every so many seconds."
	case cronExpr != "":
		if _, err := parseCron(cronExpr); err != nil {
			out["cron"] = fmt.Sprintf("Enter a cron expression of five fields (minute hour day-of-month month day-of-week) "+
				"or @hourly, @daily, @weekly, @monthly: %v.", err)
		}
	}
	if (windowStart == "") != (windowEnd == "") {
		out["window_end"] = "Give both ends of the window, or neither."
	}
	return out
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseCron reads five fields or a descriptor (@hourly, @daily…); @every is an interval
// and goes in the interval field instead.
func parseCron(expr string) (cron.Schedule, error) {
	if strings.HasPrefix(expr, "@every") {
		return nil, errors.New("@every is an interval")
	}
	return cronParser.Parse(expr)
}

// timingOf reads a stored schedule's timing.
func timingOf(s store.ScheduleSpec, loc *time.Location) (timing, error) {
	t := timing{every: s.Interval, jitter: s.Jitter, loc: loc}
	if s.Cron != "" {
		c, err := parseCron(s.Cron)
		if err != nil {
			return timing{}, err
		}
		t.cron = c
	} else if t.every < MinInterval {
		return timing{}, fmt.Errorf("schedule %d: no cron expression and no interval", s.ID)
	}
	if s.WindowStart != "" && s.WindowEnd != "" {
		t.from, t.to = minuteOfDay(s.WindowStart), minuteOfDay(s.WindowEnd)
	}
	return t, nil
}

func minuteOfDay(hhmm string) int {
	var h, m int
	fmt.Sscanf(hhmm, "%d:%d", &h, &m)
	return h*60 + m
}

// next is the first time the schedule is due strictly after t, inside its window.
func (tm timing) next(t time.Time) time.Time {
	t = t.In(tm.loc)
	at := tm.step(t)
	// A due time outside the window moves to the window's next opening: an interval
	// runs at the opening, a cron expression at its first time from there. A cron
	// expression that never falls inside the window gives up after two years of days.
	for range 800 {
		if tm.inWindow(at) {
			return at
		}
		open := tm.opening(at)
		if tm.cron == nil {
			return open
		}
		at = tm.cron.Next(open.Add(-time.Second))
	}
	return time.Time{}
}

func (tm timing) step(t time.Time) time.Time {
	if tm.cron != nil {
		return tm.cron.Next(t)
	}
	return t.Add(tm.every)
}

func (tm timing) inWindow(t time.Time) bool {
	if tm.from == tm.to {
		return true
	}
	m := t.Hour()*60 + t.Minute()
	if tm.from < tm.to {
		return m >= tm.from && m < tm.to
	}
	return m >= tm.from || m < tm.to
}

// opening is the first start of the window after t (t being outside it).
func (tm timing) opening(t time.Time) time.Time {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, tm.loc)
	open := day.Add(time.Duration(tm.from) * time.Minute)
	if !open.After(t) {
		open = day.AddDate(0, 0, 1).Add(time.Duration(tm.from) * time.Minute)
	}
	return open
}

// delay is a run's random start delay, up to the jitter.
func (tm timing) delay() time.Duration {
	if tm.jitter <= 0 {
		return 0
	}
	return rand.N(tm.jitter + time.Second)
}

// dueBetween counts the times the schedule was due in (after, upTo], up to limit.
func (tm timing) dueBetween(after, upTo time.Time, limit int) int {
	n := 0
	for at := tm.next(after); !at.IsZero() && !at.After(upTo) && n < limit; at = tm.next(at) {
		n++
	}
	return n
}
