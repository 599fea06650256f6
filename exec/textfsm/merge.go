package textfsm

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// table is the result of one template, or of several merged: rows of
// values in header order.
type table struct {
	header []string
	rows   [][]any
}

// runRow parses output with every template of an index row and merges the
// tables as ntc-templates' clitable does: the first table is the base and
// decides what a record is; each later table adds the columns the base
// lacks. The key is the set of Key values of the first template that has
// any. With a key, a base record takes the new columns from the first
// later record with equal key values; without one, records pair up by
// position. A base record with no partner gets "" in the new columns.
func runRow(ctx context.Context, tmpls []*template, output string) (table, error) {
	var keys []string
	var out table
	for i, t := range tmpls {
		rows, err := t.prog.run(ctx, output)
		if err != nil {
			return table{}, fmt.Errorf("%s: %w", t.name, err)
		}
		if len(keys) == 0 {
			keys = t.keys
		}
		for _, row := range rows {
			for j, v := range row {
				row[j] = pyStrValue(v)
			}
		}
		next := table{header: t.prog.header(), rows: rows}
		if i == 0 {
			out = next
			continue
		}
		if out, err = extend(out, next, keys); err != nil {
			return table{}, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return out, nil
}

func extend(base, more table, keys []string) (table, error) {
	for _, k := range keys {
		if !slices.Contains(base.header, k) || !slices.Contains(more.header, k) {
			return table{}, fmt.Errorf("merge key %q is not a column of every template", k)
		}
	}
	var added []int // columns of more that base lacks
	for i, c := range more.header {
		if !slices.Contains(base.header, c) {
			added = append(added, i)
		}
	}
	if len(added) == 0 {
		return base, nil
	}
	width := len(base.header)
	for _, i := range added {
		base.header = append(base.header, more.header[i])
	}
	for r, row := range base.rows {
		grown := append(slices.Clip(row), make([]any, len(added))...)
		partner := findPartner(base, row, more, r, keys)
		for j, i := range added {
			grown[width+j] = ""
			if partner != nil {
				grown[width+j] = partner[i]
			}
		}
		base.rows[r] = grown
	}
	return base, nil
}

func findPartner(base table, row []any, more table, r int, keys []string) []any {
	if len(keys) == 0 {
		if r < len(more.rows) {
			return more.rows[r]
		}
		return nil
	}
	for _, other := range more.rows {
		same := true
		for _, k := range keys {
			if !reflect.DeepEqual(row[slices.Index(base.header, k)], other[slices.Index(more.header, k)]) {
				same = false
				break
			}
		}
		if same {
			return other
		}
	}
	return nil
}

// records turns a table into one map per row keyed by the lower-cased
// header, as ntc's parse_output returns them: should two headers lower to
// the same key, the later value wins in the earlier position.
func (t table) records() (columns []string, data []map[string]any) {
	lower := make([]string, len(t.header))
	for i, h := range t.header {
		lower[i] = strings.ToLower(h)
		if !slices.Contains(columns, lower[i]) {
			columns = append(columns, lower[i])
		}
	}
	data = make([]map[string]any, len(t.rows))
	for r, row := range t.rows {
		d := make(map[string]any, len(columns))
		for i, v := range row {
			d[lower[i]] = v
		}
		data[r] = d
	}
	return columns, data
}
