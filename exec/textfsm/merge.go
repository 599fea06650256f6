package textfsm

import (
	"fmt"
	"reflect"
	"slices"
)

// table is the result of one template, or of several merged.
type table struct {
	columns []string
	rows    []map[string]any
}

// mergeTables combines the results of an index row that names several
// templates ("a.textfsm:b.textfsm"), as ntc-templates' clitable does: the
// first table is the base; each later table only adds the columns the
// base lacks.
//
//   - With keys (the Key values of the first template that declares any),
//     a base record takes the new columns from the first later record whose
//     key values are all equal; a base record with no partner gets empty
//     values ("" or [] for a List).
//   - With no keys, records are zipped by position; surplus base records
//     get empty values and surplus later records are dropped.
//
// Later records never add rows: the first template decides what a record
// is.
func mergeTables(tmpls []*template, tables []table) (table, error) {
	var keys []string
	for _, t := range tmpls {
		if len(t.keys) > 0 {
			keys = t.keys
			break
		}
	}
	out := tables[0]
	for i := 1; i < len(tables); i++ {
		for _, k := range keys {
			if !slices.Contains(out.columns, k) || !slices.Contains(tables[i].columns, k) {
				return table{}, fmt.Errorf("merge key %q is not a column of every template", k)
			}
		}
		out = extend(out, tables[i], tmpls[i], keys)
	}
	return out, nil
}

func extend(base, more table, tmpl *template, keys []string) table {
	var added []string
	for _, c := range more.columns {
		if !slices.Contains(base.columns, c) {
			added = append(added, c)
		}
	}
	base.columns = append(slices.Clip(base.columns), added...)
	for i, row := range base.rows {
		partner := findPartner(row, more.rows, i, keys)
		for _, c := range added {
			if partner != nil {
				row[c] = partner[c]
			} else {
				row[c] = tmpl.zero(c)
			}
		}
	}
	return base
}

func findPartner(row map[string]any, rows []map[string]any, i int, keys []string) map[string]any {
	if len(keys) == 0 {
		if i < len(rows) {
			return rows[i]
		}
		return nil
	}
	for _, other := range rows {
		if sameKeys(row, other, keys) {
			return other
		}
	}
	return nil
}

func sameKeys(a, b map[string]any, keys []string) bool {
	for _, k := range keys {
		if !reflect.DeepEqual(a[k], b[k]) {
			return false
		}
	}
	return true
}
