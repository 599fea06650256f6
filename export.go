package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	db, err := openStore(ctx, cfg)
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

// writeAtomic writes to a temporary file beside path and renames it into place, so a
// failed export never leaves a partial file under the final name.
func writeAtomic(path string, write func(io.Writer) (int, error)) (int, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	n, err := write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	return n, os.Rename(tmp.Name(), path)
}
