// Package diff compares two texts line by line (a unified diff, through
// github.com/aymanbagabas/go-udiff, the Go tools' own diff) and two tables of
// parsed records by their key columns. It is a leaf: it knows neither the
// store nor the devices.
package diff

import (
	"encoding/json"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Context is how many unchanged lines a unified diff shows around each change.
const Context = 3

// Unified is the unified diff from a to b under the two labels, "" when they
// are equal. A text that does not end with a line break is read as if it did,
// so that a device's output without a final newline does not show its last
// line as changed.
func Unified(fromLabel, toLabel, a, b string) string {
	a, b = terminated(a), terminated(b)
	if a == b {
		return ""
	}
	out, err := udiff.ToUnified(fromLabel, toLabel, a, udiff.Lines(a, b), Context)
	if err != nil {
		// Lines' edits always apply to the text they came from.
		return ""
	}
	return out
}

// Changes are the lines a diff from a to b takes away and adds, in order.
type Changes struct {
	Removed []string `json:"removed"`
	Added   []string `json:"added"`
}

// Lines lists the lines that differ between a and b (with no context).
func Lines(a, b string) Changes {
	a, b = terminated(a), terminated(b)
	c := Changes{Removed: []string{}, Added: []string{}}
	if a == b {
		return c
	}
	u, err := udiff.ToUnifiedDiff("a", "b", a, udiff.Lines(a, b), 0)
	if err != nil {
		return c
	}
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			text := strings.TrimSuffix(l.Content, "\n")
			switch l.Kind {
			case udiff.Delete:
				c.Removed = append(c.Removed, text)
			case udiff.Insert:
				c.Added = append(c.Added, text)
			}
		}
	}
	return c
}

func terminated(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// Record is one parsed record: column name to value.
type Record = map[string]any

// Change is a record present on both sides under the same key whose other
// columns differ.
type Change struct {
	Key  Record `json:"key"`
	From Record `json:"from"`
	To   Record `json:"to"`
}

// RecordDiff is how two tables of records differ.
type RecordDiff struct {
	Added   []Record `json:"added"`
	Removed []Record `json:"removed"`
	Changed []Change `json:"changed"`
}

// Records compares two tables by the values of keys: a key only in b is
// added, only in a removed, in both with other values changed. Without keys a
// record is its own key (a change reads as one removed and one added). Records
// sharing a key are paired in their order, the extras added or removed.
func Records(a, b []Record, keys []string) RecordDiff {
	d := RecordDiff{Added: []Record{}, Removed: []Record{}, Changed: []Change{}}
	keyOf := func(r Record) string { return identity(r, keys) }
	waiting := map[string][]Record{}
	for _, r := range a {
		k := keyOf(r)
		waiting[k] = append(waiting[k], r)
	}
	for _, r := range b {
		k := keyOf(r)
		olds := waiting[k]
		if len(olds) == 0 {
			d.Added = append(d.Added, r)
			continue
		}
		old := olds[0]
		waiting[k] = olds[1:]
		if encode(old) != encode(r) {
			d.Changed = append(d.Changed, Change{Key: project(r, keys), From: old, To: r})
		}
	}
	for _, r := range a {
		k := keyOf(r)
		if olds := waiting[k]; len(olds) > 0 {
			d.Removed = append(d.Removed, olds[0])
			waiting[k] = olds[1:]
		}
	}
	return d
}

// identity is the JSON of a record's key columns (of the whole record with no keys).
func identity(r Record, keys []string) string {
	if len(keys) == 0 {
		return encode(r)
	}
	return encode(project(r, keys))
}

func project(r Record, keys []string) Record {
	out := Record{}
	for _, k := range keys {
		out[k] = r[k]
	}
	return out
}

// encode is a record's canonical JSON (encoding/json sorts map keys).
func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
