package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// TypeHubSite is a FieldKit site pushing its records to this hub.
const TypeHubSite = "netbox_toolkit_plugin.hubsite"

// HubSiteTokenPrefix starts every site token.
const HubSiteTokenPrefix = "fkh_"

// OnlineWithin is how recently a site must have pushed (its pusher sends at least a
// heartbeat every 30 s) to read as online.
const OnlineWithin = 2 * time.Minute

// HubSites are the sites of a hub (hub.serve): each is a dcim site too, whose devices
// are the ones its FieldKit pushes. Its token is shown once, at its creation; the rest
// is what its pushes said of it.
var HubSites = declare(&Model{
	Type: TypeHubSite, Name: "HubSite", Table: "hub_sites", DefaultOrder: "name",
	Fields: []Field{
		nameField(100, "the FieldKit site; also the name of its dcim site"),
		{Name: "site", Column: "site_id", Kind: KindInt, Rel: TypeSite, Access: ReadOnly, Filter: FilterExact,
			Doc: "the dcim site holding the site's devices"},
		description(200),
		{Name: "state", Kind: KindString, Access: ReadOnly, Compute: hubSiteState, Brief: true,
			Choices: choices("never", "online", "offline", "revoked"),
			Doc:     "never: no push yet; online: a push in the last 2 minutes; offline: none since; revoked: its token no longer works"},
		{Name: "token", Kind: KindString, Access: CreateOnly, Check: checkHubSiteToken,
			Doc: "the site's token for hub.token (fkh_ and 43 letters, digits, - or _); generated unless given; shown once, in the create response"},
		{Name: "token_hash", Column: "token_hash", Kind: KindString, Access: Internal, Secret: true},
		{Name: "token_prefix", Column: "token_prefix", Kind: KindString, Access: Internal},
		{Name: "revoked", Column: "revoked", Kind: KindTime, Access: ReadOnly, Null: true, Filter: FilterLookups, Sort: true,
			Doc: "when its token was revoked; null while it works"},
		{Name: "instance", Column: "instance", Kind: KindString, Access: ReadOnly,
			Doc: "the database the site's token is bound to, by its first push"},
		{Name: "epoch", Column: "epoch", Kind: KindString, Access: ReadOnly,
			Doc: "the epoch the site pushes in; a new one follows a restored backup"},
		{Name: "next_seq", Column: "next_seq", Kind: KindInt, Access: ReadOnly, Doc: "the next record expected of the site"},
		{Name: "version", Column: "version", Kind: KindString, Access: ReadOnly, Filter: FilterLookups, Sort: true,
			Doc: "the site's FieldKit version"},
		{Name: "protocol", Column: "protocol", Kind: KindInt, Access: ReadOnly, Doc: "the hub protocol version it speaks"},
		{Name: "last_seen", Column: "last_seen", Kind: KindTime, Access: ReadOnly, Null: true, Sort: true,
			Doc: "its last push (a heartbeat included)"},
		{Name: "last_batch", Column: "last_batch", Kind: KindTime, Access: ReadOnly, Null: true, Sort: true,
			Doc: "its last push that carried records"},
		{Name: "clock_skew_ms", Column: "clock_skew_ms", Kind: KindInt, Access: ReadOnly, Sort: true,
			Doc: "the hub's clock minus the site's, at its last push (positive: the site's is behind)"},
		{Name: "backlog", Column: "backlog", Kind: KindInt, Access: ReadOnly, Sort: true,
			Doc: "records the site had not sent, at its last push: how far behind it is"},
		{Name: "behind_ms", Column: "behind_ms", Kind: KindInt, Access: ReadOnly, Sort: true,
			Doc: "how old its oldest unsent record was, at its last push"},
		{Name: "records", Column: "records", Kind: KindInt, Access: ReadOnly, Doc: "records received and stored"},
		{Name: "duplicates", Column: "duplicates", Kind: KindInt, Access: ReadOnly,
			Doc: "records received again (a batch whose answer was lost), stored once"},
	},
	Filters: map[string]Filter{
		"site_id": {Path: "site", Doc: "dcim site id"},
	},
	DisplayFields: []string{"name"},
	Display:       func(r Row) string { return fmt.Sprint(r["name"]) },
})

// hubSiteState is a site's state as the list shows it.
func hubSiteState(r Row) any {
	switch seen, _ := r["last_seen"].(time.Time); {
	case r["revoked"] != nil:
		return "revoked"
	case seen.IsZero():
		return "never"
	case time.Since(seen) <= OnlineWithin:
		return "online"
	}
	return "offline"
}

var hubSiteTokenRE = regexp.MustCompile(`^fkh_[A-Za-z0-9_-]{43}$`)

func checkHubSiteToken(v any) (any, error) {
	if !hubSiteTokenRE.MatchString(v.(string)) {
		return nil, Problem("Enter fkh_ and 43 letters, digits, - or _.")
	}
	return v, nil
}

// newHubSiteToken makes a site token: fkh_ and 43 URL-safe characters.
func newHubSiteToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return HubSiteTokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// CreateHubSite adds a site within guard and returns its id and token (generated
// unless given), which is shown once and never stored. Its dcim site is the one of that
// name (or slug) if it exists, else a new one.
func (db *DB) CreateHubSite(ctx context.Context, name, description, token string, guard Scope) (int64, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		return 0, "", &FieldError{Field: "name", Err: Problem("Enter a name of 1 to 100 characters.")}
	}
	if Slugify(name) == "" {
		return 0, "", &FieldError{Field: "name", Err: Problem("The name needs a letter or a digit.")}
	}
	if token == "" {
		token = newHubSiteToken()
	} else if _, err := checkHubSiteToken(token); err != nil {
		return 0, "", &FieldError{Field: "token", Err: err}
	}
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		var site int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM sites WHERE name = ? OR slug = ? ORDER BY name = ? DESC LIMIT 1`,
			name, Slugify(name), name).Scan(&site)
		if errors.Is(err, sql.ErrNoRows) {
			err = tx.QueryRowContext(ctx, `INSERT INTO sites (name, slug, description, created, last_updated)
				VALUES (?, ?, ?, ?, ?) RETURNING id`, name, Slugify(name), "FieldKit site", now, now).Scan(&site)
		}
		if err != nil {
			return constraintErr(err, "site")
		}
		err = tx.QueryRowContext(ctx, `INSERT INTO hub_sites (name, site_id, description, token_hash, token_prefix, created, last_updated)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, name, site, description, HashKey(token), token[:10], now, now).Scan(&id)
		if err != nil {
			return constraintErr(err, "hub site")
		}
		return CheckScope(ctx, tx, TypeHubSite, id, guard)
	})
	if err != nil {
		return 0, "", err
	}
	return id, token, nil
}

// HubSite is what the hub checks a push against.
type HubSite struct {
	ID, SiteID int64
	Name       string
	Revoked    bool
	// Instance is the database the token is bound to ("" until the first push); Epoch
	// and NextSeq where its records stand.
	Instance, Epoch string
	NextSeq         int64
	// Correction is what the hub adds to the times of the site's logs (0: none).
	Correction time.Duration
}

const hubSiteColumns = `id, site_id, name, revoked IS NOT NULL, instance, epoch, next_seq, correction_ms`

func scanHubSite(row *sql.Row) (HubSite, error) {
	var s HubSite
	var correction int64
	err := row.Scan(&s.ID, &s.SiteID, &s.Name, &s.Revoked, &s.Instance, &s.Epoch, &s.NextSeq, &correction)
	s.Correction = time.Duration(correction) * time.Millisecond
	return s, err
}

// HubSiteByToken finds the site of a token (a revoked one too: the caller says so);
// ErrNotFound when no site has it.
func (db *DB) HubSiteByToken(ctx context.Context, token string) (HubSite, error) {
	s, err := scanHubSite(db.r.QueryRowContext(ctx, `SELECT `+hubSiteColumns+` FROM hub_sites WHERE token_hash = ?`, HashKey(token)))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("hub site token: %w", ErrNotFound)
	}
	return s, err
}

// HubSiteNamed finds a site by name; ErrNotFound when none has it.
func (db *DB) HubSiteNamed(ctx context.Context, name string) (HubSite, error) {
	s, err := scanHubSite(db.r.QueryRowContext(ctx, `SELECT `+hubSiteColumns+` FROM hub_sites WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("hub site %q: %w", name, ErrNotFound)
	}
	return s, err
}

// RevokeHubSite makes a site's token stop working at once; its records stay.
func (db *DB) RevokeHubSite(ctx context.Context, id int64) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		res, err := tx.ExecContext(ctx, `UPDATE hub_sites SET revoked = coalesce(revoked, ?), last_updated = ? WHERE id = ?`, now, now, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("hub site %d: %w", id, ErrNotFound)
		}
		return nil
	})
}

// NewHubSiteToken gives a site a new token (the old one stops working; a revoked site
// works again) and frees it from the database its first push bound it to, for an edge
// installed anew. It returns the token, shown once.
func (db *DB) NewHubSiteToken(ctx context.Context, id int64) (string, error) {
	token := newHubSiteToken()
	err := db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE hub_sites SET token_hash = ?, token_prefix = ?, revoked = NULL, instance = '',
			last_updated = ? WHERE id = ?`, HashKey(token), token[:10], Stamp(db.now()), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("hub site %d: %w", id, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// AllHubSites loads every site, ordered by name.
func (db *DB) AllHubSites(ctx context.Context) ([]Row, error) {
	ids, err := scalars[int64](ctx, db.r, `SELECT id FROM hub_sites ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: hub sites: %w", err)
	}
	rows, err := db.Rows(ctx, HubSites, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]Row, len(rows))
	for _, r := range rows {
		byID[r.ID()] = r
	}
	out := make([]Row, 0, len(ids))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}
