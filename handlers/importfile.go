package handlers

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// An import file is what NetBox's bulk import takes: CSV with a header row of field
// names, or a YAML or JSON list of objects, for one object type; a YAML or JSON
// mapping of object types to such lists holds several.

// importRecord is one object of an import file: its position (a CSV row as a
// spreadsheet numbers it, the header being row 1; an item of a YAML or JSON list) and
// its values by column. A CSV value is a string ("" for an empty cell, which sets
// nothing); a YAML or JSON value keeps its type.
type importRecord struct {
	pos  int
	item bool // a list item rather than a CSV row
	vals map[string]any
	cols []string // the columns in the file's order
}

// where says where a record is: "row 12" or "item 3".
func (r *importRecord) where() string {
	if r.item {
		return fmt.Sprintf("item %d", r.pos)
	}
	return fmt.Sprintf("row %d", r.pos)
}

// importSet is the records of one object type.
type importSet struct {
	kind *importKind
	recs []*importRecord
}

// importFormats are the formats an import file may have.
var importFormats = []string{"csv", "yaml", "json"}

// decodeImport reads an import file. kind ("" to tell from the file) names the object
// type of a list; format ("" to tell from the name or the content) is csv, yaml or json.
func decodeImport(name string, data []byte, kind, format string) ([]importSet, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // Excel's byte order mark
	if format == "" {
		format = sniffFormat(name, data)
	}
	var k *importKind
	if kind != "" {
		if k = importKindNamed(kind); k == nil {
			return nil, fmt.Errorf("unknown object type %q (one of %s)", kind, strings.Join(importKindNames(), ", "))
		}
	} else {
		k = kindFromName(name)
	}
	switch format {
	case "csv":
		recs, cols, err := decodeCSV(data)
		if err == nil && k == nil {
			k, err = kindOfColumns(name, cols)
		}
		return []importSet{{kind: k, recs: recs}}, err
	case "yaml", "json":
		var doc any
		var err error
		if format == "json" {
			err = json.Unmarshal(data, &doc)
		} else {
			err = yaml.Unmarshal(data, &doc)
		}
		if err != nil {
			return nil, fmt.Errorf("not valid %s: %v", strings.ToUpper(format), err)
		}
		return listsOf(doc, k, name)
	}
	return nil, fmt.Errorf("unknown format %q (one of %s)", format, strings.Join(importFormats, ", "))
}

func errNoKind(name string) error {
	return fmt.Errorf("cannot tell which objects %q holds from its name or its columns: name the file after them (devices.csv) or give the type (one of %s)",
		name, strings.Join(importKindNames(), ", "))
}

// kindOfColumns is the kind a list's columns tell (kindFromColumns), or why none.
func kindOfColumns(name string, cols []string) (*importKind, error) {
	k, tied := kindFromColumns(cols)
	if k != nil {
		return k, nil
	}
	if len(tied) == 0 {
		return nil, errNoKind(name)
	}
	names := make([]string, len(tied))
	for i, t := range tied {
		names[i] = t.name
	}
	return nil, fmt.Errorf("cannot tell which objects %q holds: its columns (%s) fit %s alike: name the file after them (devices.csv) or give the type",
		name, strings.Join(cols, ", "), strings.Join(names, " or "))
}

// sniffFormat tells the format from the file name's extension, else from the content.
func sniffFormat(name string, data []byte) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv", ".txt":
		return "csv"
	case ".yaml", ".yml":
		return "yaml"
	case ".json":
		return "json"
	}
	t := bytes.TrimSpace(data)
	switch {
	case len(t) > 0 && (t[0] == '[' || t[0] == '{'):
		return "json"
	case bytes.HasPrefix(t, []byte("---")) || bytes.HasPrefix(t, []byte("- ")):
		return "yaml"
	}
	first, _, _ := bytes.Cut(t, []byte("\n"))
	if bytes.Contains(first, []byte(": ")) && !bytes.Contains(first, []byte(",")) {
		return "yaml"
	}
	return "csv"
}

// decodeCSV reads a header row of column names, then one record a row; it returns
// the records and the columns.
func decodeCSV(data []byte) ([]*importRecord, []string, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, errors.New("the file is empty: it needs a header row of column names")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("not valid CSV: %v", err)
	}
	cols := make([]string, len(header))
	seen := map[string]bool{}
	for i, h := range header {
		cols[i] = strings.ToLower(strings.TrimSpace(h))
		if cols[i] == "" {
			return nil, nil, fmt.Errorf("row 1, column %d: a column without a name", i+1)
		}
		if seen[cols[i]] {
			return nil, nil, fmt.Errorf("row 1: column %s appears twice", cols[i])
		}
		seen[cols[i]] = true
	}
	var out []*importRecord
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, cols, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("not valid CSV: %v", err)
		}
		line, _ := cr.FieldPos(0)
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue // a blank line
		}
		if len(row) != len(cols) {
			return nil, nil, fmt.Errorf("row %d: %d values for %d columns", line, len(row), len(cols))
		}
		rec := &importRecord{pos: line, vals: map[string]any{}, cols: cols}
		for i, v := range row {
			rec.vals[cols[i]] = strings.TrimSpace(v)
		}
		out = append(out, rec)
	}
}

// itemColumns are the keys the items of a list use, each once, in their first order.
func itemColumns(recs []*importRecord) []string {
	var cols []string
	for _, r := range recs {
		for _, c := range r.cols {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	return cols
}

// listsOf reads a decoded YAML or JSON document: a list of objects of kind, or a
// mapping of object types to lists.
func listsOf(doc any, k *importKind, name string) ([]importSet, error) {
	switch d := doc.(type) {
	case []any:
		recs, err := itemsOf(d, "")
		if err == nil && k == nil {
			k, err = kindOfColumns(name, itemColumns(recs))
		}
		return []importSet{{kind: k, recs: recs}}, err
	case map[string]any:
		var sets []importSet
		for _, kind := range importOrder {
			for key, v := range d {
				if importKindNamed(key) != kind {
					continue
				}
				list, ok := v.([]any)
				if !ok {
					return nil, fmt.Errorf("%s: expected a list of objects", key)
				}
				recs, err := itemsOf(list, key+" ")
				if err != nil {
					return nil, err
				}
				sets = append(sets, importSet{kind: kind, recs: recs})
			}
		}
		for key := range d {
			if importKindNamed(key) == nil {
				return nil, fmt.Errorf("unknown object type %q (one of %s)", key, strings.Join(importKindNames(), ", "))
			}
		}
		return sets, nil
	case nil:
		return nil, errors.New("the file is empty")
	}
	return nil, errors.New("expected a list of objects, or a mapping of object types to lists")
}

func itemsOf(list []any, prefix string) ([]*importRecord, error) {
	out := make([]*importRecord, 0, len(list))
	for i, it := range list {
		obj, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%sitem %d: expected an object", prefix, i+1)
		}
		rec := &importRecord{pos: i + 1, item: true, vals: map[string]any{}}
		for k, v := range obj {
			col := strings.ToLower(strings.TrimSpace(k))
			rec.vals[col] = v
			rec.cols = append(rec.cols, col)
		}
		sort.Strings(rec.cols)
		out = append(out, rec)
	}
	return out, nil
}
