package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"
)

// Platform is a dcim.platform.
type Platform struct {
	ID                      int64
	Name, Slug, Description string
	Driver                  string // as configured; "" means exec.DriverFor infers it from the slug
	LegacyAlgorithms        bool
	Created, LastUpdated    time.Time
}

// PlatformInput is a create or a partial update: nil fields are left as they are.
type PlatformInput struct {
	Name, Slug, Description, Driver *string
	LegacyAlgorithms                *bool
}

// Platforms loads platforms by id.
func (db *DB) Platforms(ctx context.Context, ids []int64) ([]Platform, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, slug, description, driver, legacy_algorithms, created, last_updated
		FROM platforms WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: platforms: %w", err)
	}
	defer rows.Close()
	var out []Platform
	for rows.Next() {
		var p Platform
		var c, u string
		if err := rows.Scan(&p.ID, &p.Name, &p.Slug, &p.Description, &p.Driver, &p.LegacyAlgorithms, &c, &u); err != nil {
			return nil, err
		}
		p.Created, p.LastUpdated = ParseStamp(c), ParseStamp(u)
		out = append(out, p)
	}
	return out, rows.Err()
}

// CreatePlatform inserts a platform that must fall within guard.
func (db *DB) CreatePlatform(ctx context.Context, in PlatformInput, guard Scope) (int64, error) {
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO platforms (name, slug, description, driver, legacy_algorithms,
			created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			deref(in.Name), deref(in.Slug), deref(in.Description), deref(in.Driver), deref(in.LegacyAlgorithms), now, now)
		if err != nil {
			return constraintErr(err, "platform")
		}
		id, _ = res.LastInsertId()
		return CheckScope(ctx, tx, TypePlatform, id, guard)
	})
	return id, err
}

// UpdatePlatform changes the fields set in in; the result must stay within guard.
func (db *DB) UpdatePlatform(ctx context.Context, id int64, in PlatformInput, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		set.Str("name", in.Name)
		set.Str("slug", in.Slug)
		set.Str("description", in.Description)
		set.Str("driver", in.Driver)
		if in.LegacyAlgorithms != nil {
			set.Val("legacy_algorithms", *in.LegacyAlgorithms)
		}
		if err := set.Apply(ctx, tx, "platforms", id, db.now()); err != nil {
			return constraintErr(err, "platform")
		}
		return CheckScope(ctx, tx, TypePlatform, id, guard)
	})
}

// DeletePlatform deletes a platform: commands and credential sets lose it (their link
// rows cascade) and devices keep running without one.
func (db *DB) DeletePlatform(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "platforms", id)
}

// Tag is an extras.tag.
type Tag struct {
	ID                             int64
	Name, Slug, Color, Description string
	Created, LastUpdated           time.Time
}

// TagInput is a create or a partial update: nil fields are left as they are.
type TagInput struct {
	Name, Slug, Color, Description *string
}

// Tags loads tags by id.
func (db *DB) Tags(ctx context.Context, ids []int64) ([]Tag, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, slug, color, description, created, last_updated
		FROM tags WHERE id IN (`+placeholders(len(ids))+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: tags: %w", err)
	}
	defer rows.Close()
	var out []Tag
	for rows.Next() {
		var t Tag
		var c, u string
		if err := rows.Scan(&t.ID, &t.Name, &t.Slug, &t.Color, &t.Description, &c, &u); err != nil {
			return nil, err
		}
		t.Created, t.LastUpdated = ParseStamp(c), ParseStamp(u)
		out = append(out, t)
	}
	return out, rows.Err()
}

// CreateTag inserts a tag that must fall within guard; the colour defaults to grey.
func (db *DB) CreateTag(ctx context.Context, in TagInput, guard Scope) (int64, error) {
	color := "9e9e9e"
	if in.Color != nil {
		color = *in.Color
	}
	var id int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		now := Stamp(db.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO tags (name, slug, color, description, created, last_updated)
			VALUES (?, ?, ?, ?, ?, ?)`, deref(in.Name), deref(in.Slug), color, deref(in.Description), now, now)
		if err != nil {
			return constraintErr(err, "tag")
		}
		id, _ = res.LastInsertId()
		return CheckScope(ctx, tx, TypeTag, id, guard)
	})
	return id, err
}

// UpdateTag changes the fields set in in; the result must stay within guard.
func (db *DB) UpdateTag(ctx context.Context, id int64, in TagInput, guard Scope) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		set := Set{}
		set.Str("name", in.Name)
		set.Str("slug", in.Slug)
		set.Str("color", in.Color)
		set.Str("description", in.Description)
		if err := set.Apply(ctx, tx, "tags", id, db.now()); err != nil {
			return constraintErr(err, "tag")
		}
		return CheckScope(ctx, tx, TypeTag, id, guard)
	})
}

// DeleteTag deletes a tag; the objects it was on lose it.
func (db *DB) DeleteTag(ctx context.Context, id int64) error {
	return db.deleteRow(ctx, "tags", id)
}

// tagsOf loads the tags linked to many owners through a link table.
func (db *DB) tagsOf(ctx context.Context, table, local string, ids []int64) (map[int64][]Tag, error) {
	links, err := db.links(ctx, table, local, "tag_id", ids)
	if err != nil {
		return nil, err
	}
	var tagIDs []int64
	seen := map[int64]bool{}
	for _, ts := range links {
		for _, t := range ts {
			if !seen[t] {
				seen[t] = true
				tagIDs = append(tagIDs, t)
			}
		}
	}
	tags, err := db.Tags(ctx, tagIDs)
	if err != nil {
		return nil, err
	}
	byID := map[int64]Tag{}
	for _, t := range tags {
		byID[t.ID] = t
	}
	out := map[int64][]Tag{}
	for owner, ts := range links {
		for _, t := range ts {
			out[owner] = append(out[owner], byID[t])
		}
		sort.Slice(out[owner], func(i, j int) bool { return out[owner][i].Name < out[owner][j].Name })
	}
	return out, nil
}
