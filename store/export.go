package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The export formats.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
)

// ErrExportStarted wraps an error that happened after the first byte was written: the
// caller can no longer answer with an error status.
var ErrExportStarted = errors.New("export already started")

// ParseDay reads a YYYY-MM-DD calendar day and returns its first instant in loc.
func ParseDay(s string, loc *time.Location) (time.Time, error) {
	t, err := time.ParseInLocation("2006-01-02", s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q is not a date (YYYY-MM-DD)", ErrBadValue, s)
	}
	return t, nil
}

// CreatedBetween selects logs created in [from, to); a zero bound is open.
func CreatedBetween(from, to time.Time) Expr {
	var es []Expr
	if !from.IsZero() {
		es = append(es, Expr{SQL: "t.created >= ?", Args: []any{Stamp(from)}})
	}
	if !to.IsZero() {
		es = append(es, Expr{SQL: "t.created < ?", Args: []any{Stamp(to)}})
	}
	return And(es...)
}

// exportField is one field of an export: a column, and for a reference the field
// that keeps its name (for a reference computed in SQL, one that looks it up).
type exportField struct {
	*Field
	kept *Field
}

// Exported lists the fields an export of m carries: id and created, then every field
// marked Export (ExportOnRequest ones only with withRequested), in declaration order.
func (m *Model) Exported(withRequested bool) []*Field {
	id, _ := m.Field("id")
	created, _ := m.Field("created")
	out := []*Field{id, created}
	for i := range m.Fields {
		if f := &m.Fields[i]; f.Export == Exported || (f.Export == ExportOnRequest && withRequested) {
			out = append(out, f)
		}
	}
	return out
}

// ExportHeader is the CSV header of an export of m: each field's name, and before a
// reference's name (the kept one) "<name>_id".
func ExportHeader(m *Model, withRequested bool) []string {
	_, header := exportColumns(exportFields(m, withRequested))
	return header
}

// exportFields are the fields of an export, each with the field keeping its name if it
// is a reference.
func exportFields(m *Model, withRequested bool) []exportField {
	var out []exportField
	for _, f := range m.Exported(withRequested) {
		ef := exportField{Field: f}
		switch {
		case f.KeptName != "":
			ef.kept, _ = m.Field(f.KeptName)
		case f.Ref() && f.Select != "":
			// A reference computed in SQL (a log's site): its object's name, looked up.
			rm := models[f.Rel]
			name, _ := rm.Field(rm.nameField())
			ef.kept = &Field{Name: f.Name + "_name", Kind: KindString,
				Select: fmt.Sprintf("(SELECT r.%s FROM %s r WHERE r.id = %s)", name.Column, rm.Table, f.Select)}
		}
		out = append(out, ef)
	}
	return out
}

// exportColumns is the SELECT list of an export and the CSV header: each field's
// column, and after a reference's id its kept name.
func exportColumns(fields []exportField) (cols, header []string) {
	for _, f := range fields {
		cols = append(cols, f.selected())
		if f.kept != nil {
			cols, header = append(cols, f.kept.selected()), append(header, f.Name+"_id")
		}
		header = append(header, f.Name)
	}
	return cols, header
}

// ExportLogs writes every log matching where, in the order they were recorded (by id:
// a sequential scan of the table, where following the created index would cost a
// lookup per row), to w as CSV or JSON, one row at a time from a cursor, so memory
// stays flat however many rows there are. The columns are the declaration's (see
// exportFields); includeOutput adds the ExportOnRequest ones. JSON is {"count": n,
// "results": [...]}, the count read first in the same snapshot. It returns the number of
// rows written; an error after output began wraps ErrExportStarted.
func (db *DB) ExportLogs(ctx context.Context, w io.Writer, where Expr, format string, includeOutput bool) (int, error) {
	if format != FormatCSV && format != FormatJSON {
		return 0, fmt.Errorf("store: export: %w: format %q", ErrBadValue, format)
	}
	// A connection of its own with a small page cache: a one-pass scan of a large table
	// gains nothing from caching pages, and the cache would otherwise grow to its full
	// size and stay there.
	conn, err := db.r.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: export: %w", err)
	}
	defer conn.Close()
	var opts *sql.TxOptions
	if db.pg {
		// The count and the rows from one snapshot, as SQLite's read transaction gives.
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	} else {
		if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -2000`); err != nil {
			return 0, fmt.Errorf("store: export: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA cache_size = -32000`)
	}
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		return 0, fmt.Errorf("store: export: %w", err)
	}
	defer tx.Rollback()
	m := CommandLogs
	count := -1
	if format == FormatJSON {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+m.Table+` t WHERE `+where.SQL, where.Args...).Scan(&count); err != nil {
			return 0, fmt.Errorf("store: export: %w", err)
		}
	}
	fields := exportFields(m, includeOutput)
	cols, header := exportColumns(fields)
	var enc rowEncoder
	if format == FormatCSV {
		enc = newCSVEncoder(w, header)
	} else {
		enc = newJSONEncoder(w, count, fields)
	}
	n, err := copyRows(ctx, tx, m, cols, where, enc, fields)
	if err != nil {
		return n, fmt.Errorf("store: export: %w: %w", ErrExportStarted, err)
	}
	return n, nil
}

// copyRows encodes the logs' columns cols under where, in id order, a row at a time,
// without holding the rows.
func copyRows(ctx context.Context, tx *sql.Tx, m *Model, cols []string, where Expr, enc rowEncoder, fields []exportField) (int, error) {
	if err := enc.begin(); err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+m.Table+` t WHERE `+where.SQL+
		` ORDER BY t.id`, where.Args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, err
		}
		exportValues(fields, vals)
		if err := enc.row(vals); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, enc.end()
}

// Millis is a duration in seconds to the millisecond, the precision the API states
// durations in: a float's own (0.30000000000000004) never reaches a spreadsheet.
func Millis(seconds float64) float64 { return math.Round(seconds*1000) / 1000 }

// exportValues turns the columns as scanned into what the export shows: a boolean
// (stored as 0 or 1) as a boolean, JSON text as the value it holds, a duration to the
// millisecond.
func exportValues(fields []exportField, vals []any) {
	i := 0
	for _, f := range fields {
		switch v := vals[i]; {
		case f.Kind == KindBool:
			vals[i] = v == int64(1)
		case f.Kind == KindFloat && v != nil:
			if x, ok := v.(float64); ok {
				vals[i] = Millis(x)
			}
		case f.Kind == KindJSON && v != nil:
			vals[i] = json.RawMessage(fmt.Sprint(v))
		}
		i++
		if f.kept != nil {
			i++
		}
	}
}

// rowEncoder writes one export format; row gets the columns of exportColumns.
type rowEncoder interface {
	begin() error
	row(vals []any) error
	end() error
}

type csvEncoder struct {
	out    *bufio.Writer
	rec    bytes.Buffer // one record, as encoding/csv writes it
	w      *csv.Writer  // writes into rec
	header []string
	cells  []string
}

// newCSVEncoder writes RFC 4180 CSV: records end with CRLF, as spreadsheets expect,
// while line breaks inside a quoted cell stay as they were, so that a reader (Python's
// csv among them) gets every cell back exactly. encoding/csv's UseCRLF would turn those
// into CRLF too.
func newCSVEncoder(w io.Writer, header []string) *csvEncoder {
	e := &csvEncoder{out: bufio.NewWriter(w), header: header}
	e.w = csv.NewWriter(&e.rec)
	return e
}

func (e *csvEncoder) write(cells []string) error {
	e.rec.Reset()
	if err := e.w.Write(cells); err != nil {
		return err
	}
	e.w.Flush()
	if err := e.w.Error(); err != nil {
		return err
	}
	b := e.rec.Bytes()
	if _, err := e.out.Write(b[:len(b)-1]); err != nil { // less the record's "\n"
		return err
	}
	_, err := e.out.WriteString("\r\n")
	return err
}

func (e *csvEncoder) begin() error { return e.write(e.header) }

func (e *csvEncoder) row(vals []any) error {
	e.cells = e.cells[:0]
	for _, v := range vals {
		e.cells = append(e.cells, csvCell(v))
	}
	return e.write(e.cells)
}

// csvCell is a column's text: numbers as Go prints them, booleans as true/false, NULL
// empty, text (JSON included) defused (SafeCell).
func csvCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return SafeCell(x)
	case []byte:
		return SafeCell(string(x))
	case json.RawMessage:
		return SafeCell(string(x))
	}
	return SafeCell(fmt.Sprint(v))
}

func (e *csvEncoder) end() error { return e.out.Flush() }

// BOM is the UTF-8 byte order mark: Excel reads a CSV that starts with it as UTF-8
// (without it, as the system's legacy code page).
const BOM = "\uFEFF"

// WithBOM returns a writer that puts the BOM before the first bytes written to w, so
// that an export failing before any output can still answer with a clean error.
func WithBOM(w io.Writer) io.Writer { return &bomWriter{w: w} }

type bomWriter struct {
	w       io.Writer
	started bool
}

func (b *bomWriter) Write(p []byte) (int, error) {
	if !b.started && len(p) > 0 {
		b.started = true
		if _, err := io.WriteString(b.w, BOM); err != nil {
			return 0, err
		}
	}
	return b.w.Write(p)
}

// SafeCell defuses spreadsheet formulas: a cell starting with = + - @, a tab or a
// carriage return gets a leading apostrophe so that a spreadsheet shows it as text.
func SafeCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

type jsonEncoder struct {
	w      *bufio.Writer
	buf    bytes.Buffer
	enc    *json.Encoder
	count  int
	fields []exportField
	keys   [][]byte // `"name":` of each field
	first  bool
}

func newJSONEncoder(w io.Writer, count int, fields []exportField) *jsonEncoder {
	e := &jsonEncoder{w: bufio.NewWriterSize(w, 64<<10), count: count, fields: fields, first: true}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false) // as the API's own encoder: "<iface>" stays readable
	for _, f := range fields {
		k, _ := json.Marshal(f.Name)
		e.keys = append(e.keys, append(k, ':'))
	}
	return e
}

func (e *jsonEncoder) begin() error {
	_, err := fmt.Fprintf(e.w, `{"count":%d,"results":[`, e.count)
	return err
}

// keptRef is a reference in the JSON export: its id (null once the object is gone) and
// its kept name.
type keptRef struct {
	ID   any `json:"id"`
	Name any `json:"name"`
}

// row writes one object: each field under its name, a reference as keptRef.
func (e *jsonEncoder) row(vals []any) error {
	e.buf.Reset()
	e.buf.WriteByte('{')
	i := 0
	for k, f := range e.fields {
		if k > 0 {
			e.buf.WriteByte(',')
		}
		e.buf.Write(e.keys[k])
		v := vals[i]
		i++
		if f.kept != nil {
			if name, _ := vals[i].(string); v != nil || name != "" {
				v = keptRef{v, vals[i]}
			} // else none was ever referenced (a log without a credential set): null
			i++
		}
		if err := e.enc.Encode(v); err != nil {
			return err
		}
		e.buf.Truncate(e.buf.Len() - 1) // the Encode's newline
	}
	e.buf.WriteByte('}')
	if !e.first {
		if err := e.w.WriteByte(','); err != nil {
			return err
		}
	}
	e.first = false
	_, err := e.w.Write(e.buf.Bytes())
	return err
}

func (e *jsonEncoder) end() error {
	if _, err := e.w.WriteString("]}\n"); err != nil {
		return err
	}
	return e.w.Flush()
}
