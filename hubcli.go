package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"fieldkit/store"
)

// The hub's commands (on the hub's data directory): its sites.

func cmdHubSiteAdd(ctx context.Context, e env, o *opts) error {
	db, err := o.open(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	_, token, err := db.CreateHubSite(ctx, o.args[0], o.description, "", store.All)
	var fe *store.FieldError
	if errors.As(err, &fe) && errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("a site named %q exists already", o.args[0])
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, token)
	fmt.Fprintf(e.stderr, "site %q added: set hub.url to this hub's URL and hub.token to the token above (shown only now) on its FieldKit\n", o.args[0])
	return nil
}

func cmdHubSiteList(ctx context.Context, e env, o *opts) error {
	db, err := o.open(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	sites, err := db.AllHubSites(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tLAST BATCH\tBEHIND\tCLOCK SKEW\tVERSION\tRECORDS\tDUPLICATES")
	for _, s := range sites {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d records, %s\t%s\t%s\t%d\t%d\n", s["name"], s["state"], ago(s["last_batch"]),
			s["backlog"], ms(s["behind_ms"]), ms(s["clock_skew_ms"]), orDash(s["version"]), s["records"], s["duplicates"])
	}
	return tw.Flush()
}

func cmdHubSiteRevoke(ctx context.Context, e env, o *opts) error {
	return onHubSite(ctx, e, o, func(db *store.DB, s store.HubSite) error {
		if err := db.RevokeHubSite(ctx, s.ID); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "site %q revoked: its token no longer works; its records stay\n", s.Name)
		return nil
	})
}

func cmdHubSiteToken(ctx context.Context, e env, o *opts) error {
	return onHubSite(ctx, e, o, func(db *store.DB, s store.HubSite) error {
		token, err := db.NewHubSiteToken(ctx, s.ID)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, token)
		fmt.Fprintf(e.stderr, "site %q has a new token (shown only now); the old one no longer works\n", s.Name)
		return nil
	})
}

// onHubSite runs fn on the site the command names.
func onHubSite(ctx context.Context, e env, o *opts, fn func(db *store.DB, s store.HubSite) error) error {
	db, err := o.open(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	s, err := db.HubSiteNamed(ctx, o.args[0])
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no site %q (fieldkit hub site list shows them)", o.args[0])
	}
	if err != nil {
		return err
	}
	return fn(db, s)
}

// ago is a time as "3m ago", or "-" when there is none.
func ago(v any) string {
	t, ok := v.(time.Time)
	if !ok || t.IsZero() {
		return "-"
	}
	return time.Since(t).Round(time.Second).String() + " ago"
}

// ms is a count of milliseconds as a duration.
func ms(v any) string {
	n, _ := v.(int64)
	return (time.Duration(n) * time.Millisecond).Round(time.Millisecond).String()
}

func orDash(v any) string {
	if s, _ := v.(string); s != "" {
		return s
	}
	return "-"
}
