package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Schedule is when the periodic export runs: every hour on the hour, or every day at
// Hour:Minute. The zero Schedule is off.
type Schedule struct {
	Hourly       bool
	Daily        bool
	Hour, Minute int
}

// Off reports whether the schedule never runs.
func (s Schedule) Off() bool { return !s.Hourly && !s.Daily }

// ParseSchedule reads "hourly", "daily HH:MM" or "" (off).
func ParseSchedule(v string) (Schedule, error) {
	v = strings.TrimSpace(v)
	fields := strings.Fields(v)
	switch {
	case v == "" || v == "off":
		return Schedule{}, nil
	case v == "hourly":
		return Schedule{Hourly: true}, nil
	case len(fields) == 2 && fields[0] == "daily":
		hh, mm, ok := strings.Cut(fields[1], ":")
		h, errH := strconv.Atoi(hh)
		m, errM := strconv.Atoi(mm)
		if ok && len(hh) == 2 && len(mm) == 2 && errH == nil && errM == nil && h >= 0 && h < 24 && m >= 0 && m < 60 {
			return Schedule{Daily: true, Hour: h, Minute: m}, nil
		}
	}
	return Schedule{}, fmt.Errorf(`export schedule %q: use "hourly", "daily HH:MM" (24-hour clock) or "" for off`, v)
}

// Period is one span of logs an export file holds: [From, To), named for its file.
type Period struct {
	Name     string // "2026-11-21" or "2026-11-21T13"
	From, To time.Time
}

// last returns the most recent run time at or before now and the period that run
// exports (the one that had just ended).
func (s Schedule) last(now time.Time, loc *time.Location) (time.Time, Period) {
	now = now.In(loc)
	if s.Hourly {
		at := time.Date(now.Year(), now.Month(), now.Day(), now.Hour(), 0, 0, 0, loc)
		from := at.Add(-time.Hour)
		return at, Period{Name: from.Format("2006-01-02T15"), From: from, To: at}
	}
	at := time.Date(now.Year(), now.Month(), now.Day(), s.Hour, s.Minute, 0, 0, loc)
	if at.After(now) {
		at = at.AddDate(0, 0, -1)
	}
	to := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, loc)
	from := to.AddDate(0, 0, -1)
	return at, Period{Name: from.Format("2006-01-02"), From: from, To: to}
}

// next returns the first run time after now.
func (s Schedule) next(now time.Time, loc *time.Location) time.Time {
	at, _ := s.last(now, loc)
	if s.Hourly {
		return at.Add(time.Hour)
	}
	return at.AddDate(0, 0, 1)
}

// ExporterConfig is the export section of the configuration.
type ExporterConfig struct {
	Schedule  string         // "hourly", "daily HH:MM", "" = off
	Directory string         // where the CSV files go
	Keep      int            // newest files kept; 0 keeps all
	Location  *time.Location // time zone of days and hours; nil = UTC
	BOM       bool           // start each file with a UTF-8 byte order mark
}

// Exporter writes the previous period's logs to a CSV file on a schedule.
type Exporter struct {
	DB     *DB
	Config ExporterConfig
	Logger *slog.Logger
	// After waits like time.After; tests replace it to drive the store's clock.
	After func(d time.Duration) <-chan time.Time
	// RetryBase is the first retry delay of a failed run (doubling up to 10 minutes);
	// 0 means 10 seconds.
	RetryBase time.Duration
}

const filePrefix = "command-logs-"

// Run exports on the schedule until ctx is done. It first writes the most recent
// period that is due and not yet recorded in export_runs (so a restart catches up once).
func (e *Exporter) Run(ctx context.Context) error {
	sched, err := ParseSchedule(e.Config.Schedule)
	if err != nil {
		return err
	}
	if sched.Off() {
		<-ctx.Done()
		return nil
	}
	loc := e.location()
	e.removeTemps()
	for {
		now := e.DB.Now()
		_, p := sched.last(now, loc)
		done, err := e.DB.exported(ctx, p.Name)
		if err != nil && ctx.Err() == nil {
			e.logger().Error("export: read export runs", "err", err)
		}
		if !done && err == nil {
			e.runWithRetry(ctx, p, sched.next(now, loc))
		}
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-e.after(sched.next(e.DB.Now(), loc).Sub(e.DB.Now())):
		}
	}
}

// runWithRetry exports p, retrying with backoff until it works, ctx ends or the next
// run is due (which then takes over).
func (e *Exporter) runWithRetry(ctx context.Context, p Period, deadline time.Time) {
	delay := e.RetryBase
	if delay <= 0 {
		delay = 10 * time.Second
	}
	for attempt := 1; ; attempt++ {
		file, rows, err := e.ExportPeriod(ctx, p)
		if err == nil {
			e.logger().Info("export: wrote logs", "period", p.Name, "file", file, "rows", rows)
			return
		}
		if ctx.Err() != nil {
			return
		}
		if !e.DB.Now().Add(delay).Before(deadline) {
			e.logger().Error("export: giving up on period", "period", p.Name, "attempts", attempt, "err", err)
			return
		}
		e.logger().Warn("export: run failed, retrying", "period", p.Name, "attempt", attempt, "retry_in", delay, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-e.after(delay):
		}
		delay = min(2*delay, 10*time.Minute)
	}
}

// ExportPeriod writes one period's logs to its file atomically (a temp file in the same
// directory, synced, then renamed), records the run and prunes old files. It returns
// the file's path and the number of rows.
func (e *Exporter) ExportPeriod(ctx context.Context, p Period) (string, int, error) {
	dir := e.Config.Directory
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, fmt.Errorf("export %s: %w", p.Name, err)
	}
	final := filepath.Join(dir, filePrefix+p.Name+".csv")
	rows, err := e.writeAtomic(ctx, final, CreatedBetween(p.From, p.To))
	if err != nil {
		return "", 0, fmt.Errorf("export %s: %w", p.Name, err)
	}
	if err := e.DB.recordExport(ctx, p.Name, final, rows); err != nil {
		return "", 0, fmt.Errorf("export %s: %w", p.Name, err)
	}
	if err := e.prune(); err != nil {
		e.logger().Warn("export: prune old files", "dir", dir, "err", err)
	}
	return final, rows, nil
}

func (e *Exporter) writeAtomic(ctx context.Context, final string, where Expr) (rows int, err error) {
	err = WriteAtomic(final, func(tmp string) error {
		f, err := os.OpenFile(tmp, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		var out io.Writer = f
		if e.Config.BOM {
			out = WithBOM(f)
		}
		rows, err = e.DB.ExportLogs(ctx, out, where, FormatCSV, false)
		return errors.Join(err, f.Close())
	})
	return rows, err
}

// prune keeps the newest Keep export files; period names sort in time order.
func (e *Exporter) prune() error {
	if e.Config.Keep <= 0 {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(e.Config.Directory, filePrefix+"*.csv"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	var errs []error
	for len(files) > e.Config.Keep {
		errs = append(errs, os.Remove(files[0]))
		files = files[1:]
	}
	return errors.Join(errs...)
}

// removeTemps deletes temp files a crash left behind: WriteAtomic's, and those of
// versions that named them "."+filePrefix+"*.tmp".
func (e *Exporter) removeTemps() {
	RemoveStaleTemps(e.Config.Directory)
	tmps, _ := filepath.Glob(filepath.Join(e.Config.Directory, "."+filePrefix+"*.tmp"))
	for _, t := range tmps {
		os.Remove(t)
	}
}

func (e *Exporter) location() *time.Location {
	if e.Config.Location == nil {
		return time.UTC
	}
	return e.Config.Location
}

func (e *Exporter) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.Default()
	}
	return e.Logger
}

func (e *Exporter) after(d time.Duration) <-chan time.Time {
	if e.After != nil {
		return e.After(d)
	}
	return time.After(d)
}

func (db *DB) exported(ctx context.Context, period string) (bool, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM export_runs WHERE period = ?`, period).Scan(&n)
	return n > 0, err
}

func (db *DB) recordExport(ctx context.Context, period, file string, rows int) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO export_runs (period, file, rows, created) VALUES (?, ?, ?, ?)
			ON CONFLICT (period) DO UPDATE SET file = excluded.file, rows = excluded.rows, created = excluded.created`,
			period, file, rows, Stamp(db.now()))
		return err
	})
}
