package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"fieldkit/store"
)

// cmdExport writes command logs as CSV or JSON, streamed, to a file or stdout.
func cmdExport(ctx context.Context, e env, o *opts) error {
	if o.format != store.FormatCSV && o.format != store.FormatJSON {
		return &usageError{msg: fmt.Sprintf("fieldkit export logs: --format: %q is not csv or json", o.format), help: "export logs"}
	}
	cfg, err := o.load(e, nil)
	if err != nil {
		return err
	}
	bom := cfg.Export.BOM
	if o.set["bom"] {
		bom = o.bom
	}
	loc, _ := time.LoadLocation(cfg.Server.TimeZone)
	var from, to time.Time
	if o.startDate != "" {
		if from, err = store.ParseDay(o.startDate, loc); err != nil {
			return &usageError{msg: "fieldkit export logs: --start-date: " + err.Error(), help: "export logs"}
		}
	}
	if o.endDate != "" {
		day, err := store.ParseDay(o.endDate, loc)
		if err != nil {
			return &usageError{msg: "fieldkit export logs: --end-date: " + err.Error(), help: "export logs"}
		}
		to = day.AddDate(0, 0, 1)
	}
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		return &usageError{msg: "fieldkit export logs: --end-date is before --start-date", help: "export logs"}
	}
	db, err := o.openExisting(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	wrap := func(w io.Writer) io.Writer { return w }
	if bom && o.format == store.FormatCSV {
		wrap = store.WithBOM
	}
	if o.output == "" {
		n, err := db.ExportLogs(ctx, wrap(e.stdout), store.CreatedBetween(from, to), o.format, false)
		fmt.Fprintf(e.stderr, "exported %d logs\n", n)
		return err
	}
	n, err := writeAtomic(o.output, func(w io.Writer) (int, error) {
		return db.ExportLogs(ctx, wrap(w), store.CreatedBetween(from, to), o.format, false)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "exported %d logs to %s\n", n, o.output)
	return nil
}

// writeAtomic writes an export to path through store.WriteAtomic: complete under the
// final name or not at all, 0600, no temp file left.
func writeAtomic(path string, write func(io.Writer) (int, error)) (int, error) {
	var n int
	err := store.WriteAtomic(path, func(tmp string) error {
		f, err := os.OpenFile(tmp, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		n, err = write(f)
		return errors.Join(err, f.Close())
	})
	return n, err
}
