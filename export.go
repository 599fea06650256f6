package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"fieldkit/store"
)

// cmdExport writes command logs as CSV or JSON, streamed, to a file or stdout.
func cmdExport(ctx context.Context, e env, args []string) error {
	const u = "usage: fieldkit export logs [--format csv|json] [--start-date YYYY-MM-DD] [--end-date YYYY-MM-DD] [--output FILE]"
	if len(args) == 0 || args[0] != "logs" {
		return errors.New(u)
	}
	fs, c := newFlags("export logs", e)
	format := fs.String("format", "csv", "csv or json")
	start := fs.String("start-date", "", "first day (inclusive), in server.time_zone")
	end := fs.String("end-date", "", "last day (inclusive)")
	output := fs.String("output", "", "file to write (default: stdout); written atomically")
	if _, err := parseArgs(fs, args[1:]); err != nil {
		return err
	}
	if *format != store.FormatCSV && *format != store.FormatJSON {
		return fmt.Errorf("--format: %q is not csv or json", *format)
	}
	cfg, err := c.load(e, nil)
	if err != nil {
		return err
	}
	loc, _ := time.LoadLocation(cfg.Server.TimeZone)
	var from, to time.Time
	if *start != "" {
		if from, err = store.ParseDay(*start, loc); err != nil {
			return fmt.Errorf("--start-date: %w", err)
		}
	}
	if *end != "" {
		day, err := store.ParseDay(*end, loc)
		if err != nil {
			return fmt.Errorf("--end-date: %w", err)
		}
		to = day.AddDate(0, 0, 1)
	}
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		return errors.New("--end-date is before --start-date")
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if *output == "" {
		n, err := db.ExportLogs(ctx, e.stdout, store.CreatedBetween(from, to), *format, false)
		fmt.Fprintf(e.stderr, "exported %d logs\n", n)
		return err
	}
	n, err := writeAtomic(*output, func(w io.Writer) (int, error) {
		return db.ExportLogs(ctx, w, store.CreatedBetween(from, to), *format, false)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "exported %d logs to %s\n", n, *output)
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
