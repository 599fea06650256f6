package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"fieldkit/handlers"
	"fieldkit/netbox"
	"fieldkit/store"
)

// cmdImport imports a file of inventory objects (NetBox's bulk import formats), all or
// nothing, as a superuser: the person at the console owns the data directory.
func cmdImport(ctx context.Context, e env, o *opts) error {
	name := o.args[0]
	var data []byte
	var err error
	if name == "-" {
		data, err = readAll(e)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	db, err := o.open(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	api := handlers.New(handlers.Options{DB: db, Logger: slog.New(slog.DiscardHandler), Version: version})
	who := store.Principal{Username: "fieldkit import", IsSuperuser: true}
	rep, err := api.Import(ctx, who, handlers.ImportInput{Name: name, Data: data, Type: o.importType, Format: o.format, DryRun: o.dryRun})
	var ie *handlers.ImportError
	if errors.As(err, &ie) {
		for _, p := range ie.Problems {
			fmt.Fprintf(e.stderr, "%s: %s\n", name, p)
		}
		return fmt.Errorf("nothing was imported from %s: %d problem(s)", name, len(ie.Problems))
	}
	if err != nil {
		return err
	}
	printImport(e, name, rep)
	return nil
}

// printImport writes what an import did: a line per object type, and on a dry run a
// line per record.
func printImport(e env, name string, rep *handlers.ImportReport) {
	if rep.DryRun {
		for _, r := range rep.Rows {
			where := fmt.Sprintf("row %d", r.Row)
			if r.Item > 0 {
				where = fmt.Sprintf("item %d", r.Item)
			}
			fmt.Fprintf(e.stdout, "%-12s %-9s %-9s %s\n", r.Type, where, r.Action, r.Display)
		}
	}
	for _, t := range rep.Types {
		line := fmt.Sprintf("%s: %d created, %d updated, %d unchanged", t.Type, t.Created, t.Updated, t.Unchanged)
		if len(t.IgnoredColumns) > 0 {
			line += " (NetBox columns FieldKit has no field for, ignored: " + strings.Join(t.IgnoredColumns, ", ") + ")"
		}
		fmt.Fprintln(e.stdout, line)
	}
	if rep.DryRun {
		fmt.Fprintf(e.stdout, "dry run: nothing was written; run without --dry-run to import %s\n", name)
	}
}

// readAll reads the whole of stdin (an import from a pipe).
func readAll(e env) ([]byte, error) { return io.ReadAll(e.stdin) }

// cmdInventorySync syncs the inventory from the NetBox of the settings: progress on
// stderr, what changed on stdout, a non-zero exit status when it fails. An interrupted
// sync (Ctrl-C) keeps what it fetched; the next one resumes.
func cmdInventorySync(ctx context.Context, e env, o *opts) error {
	cfg, err := o.load(e, nil)
	if err != nil {
		return err
	}
	if cfg.Inventory.NetBoxURL == "" {
		return netbox.ErrNotConfigured
	}
	db, err := o.openExisting(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	nbc := cfg.Inventory.netboxConfig()
	nbc.AllowEmpty = o.allowEmpty
	syncer := netbox.NewSyncer(db, nbc, slog.New(slog.DiscardHandler))
	fmt.Fprintf(e.stderr, "syncing from %s\n", cfg.Inventory.NetBoxURL)
	rep, err := syncer.Sync(ctx, func(msg string) { fmt.Fprintln(e.stderr, msg) })
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: what was fetched is kept, and the next sync resumes from there (%w)", err)
		}
		return err
	}
	printSync(e.stdout, rep)
	return nil
}

// printSync writes what a sync did, a line per object type.
func printSync(w io.Writer, rep *netbox.Report) {
	for _, kind := range syncKinds {
		c, ok := rep.Objects[kind]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%-13s %5d fetched, %d created, %d updated, %d unchanged, %d deleted, %d kept\n",
			kind+":", c.Fetched, c.Created, c.Updated, c.Unchanged, c.Deleted, c.Kept)
	}
	for _, warning := range rep.Warnings {
		fmt.Fprintln(w, "warning:", warning)
	}
	fmt.Fprintf(w, "synced in %.1f s (%d pages)\n", rep.Duration, rep.Pages)
}

// syncKinds are the object types a sync reports, in the order it writes them.
var syncKinds = []string{"tags", "sites", "platforms", "vlans", "devices", "interfaces", "ip-addresses"}

// logSync logs a scheduled sync's outcome.
func logSync(logger *slog.Logger, rep *netbox.Report) {
	args := []any{"duration_ms", int64(rep.Duration * 1000), "pages", rep.Pages, "warnings", len(rep.Warnings)}
	for _, kind := range syncKinds {
		if c, ok := rep.Objects[kind]; ok && c.Created+c.Updated+c.Deleted+c.Kept > 0 {
			args = append(args, strings.ReplaceAll(kind, "-", "_"),
				fmt.Sprintf("+%d ~%d -%d kept %d", c.Created, c.Updated, c.Deleted, c.Kept))
		}
	}
	logger.Info("netbox sync", args...)
}
