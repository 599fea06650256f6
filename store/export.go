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
	"strconv"
	"time"
)

// The export formats.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
)

// ExportColumns is the CSV header; "output" is appended when the output is included.
var ExportColumns = []string{"id", "created", "username", "device_id", "device", "command_id", "command",
	"command_type", "success", "execution_duration", "error_message"}

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

// exportRow is one log as the export reads it.
type exportRow struct {
	id                       int64
	commandID, deviceID      sql.NullInt64
	commandName, commandType string
	deviceName, username     string
	success                  bool
	duration                 float64
	created, errorMessage    string
	output                   string
}

// ExportLogs writes every log matching where, in the order they were recorded (by id:
// a sequential scan of the table, where following the created index would cost a
// lookup per row), to w as CSV or JSON, one row
// at a time from a cursor, so memory stays flat however many rows there are. JSON is
// {"count": n, "results": [...]}, the count read first in the same snapshot. It returns
// the number of rows written; an error after output began wraps ErrExportStarted.
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
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -2000`); err != nil {
		return 0, fmt.Errorf("store: export: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA cache_size = -32000`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: export: %w", err)
	}
	defer tx.Rollback()
	count := -1
	if format == FormatJSON {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM command_logs t WHERE `+where.SQL, where.Args...).Scan(&count); err != nil {
			return 0, fmt.Errorf("store: export: %w", err)
		}
	}
	out := "''"
	if includeOutput {
		out = "t.output"
	}
	rows, err := tx.QueryContext(ctx, `SELECT t.id, t.command_id, t.command_name, t.command_type, t.device_id,
		t.device_name, t.username, t.success, t.execution_duration, t.created, t.error_message, `+out+`
		FROM command_logs t WHERE `+where.SQL+` ORDER BY t.id`, where.Args...)
	if err != nil {
		return 0, fmt.Errorf("store: export: %w", err)
	}
	defer rows.Close()
	var enc rowEncoder
	if format == FormatCSV {
		enc = newCSVEncoder(w, includeOutput)
	} else {
		enc = newJSONEncoder(w, count, includeOutput)
	}
	n, err := copyRows(rows, enc)
	if err != nil {
		return n, fmt.Errorf("store: export: %w: %w", ErrExportStarted, err)
	}
	return n, nil
}

func copyRows(rows *sql.Rows, enc rowEncoder) (int, error) {
	if err := enc.begin(); err != nil {
		return 0, err
	}
	n := 0
	var r exportRow
	for rows.Next() {
		if err := rows.Scan(&r.id, &r.commandID, &r.commandName, &r.commandType, &r.deviceID, &r.deviceName,
			&r.username, &r.success, &r.duration, &r.created, &r.errorMessage, &r.output); err != nil {
			return n, err
		}
		if err := enc.row(&r); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, enc.end()
}

// rowEncoder writes one export format.
type rowEncoder interface {
	begin() error
	row(r *exportRow) error
	end() error
}

type csvEncoder struct {
	out           *bufio.Writer
	rec           bytes.Buffer // one record, as encoding/csv writes it
	w             *csv.Writer  // writes into rec
	includeOutput bool
	cells         []string
}

// newCSVEncoder writes RFC 4180 CSV: records end with CRLF, as spreadsheets expect,
// while line breaks inside a quoted cell stay as they were, so that a reader (Python's
// csv among them) gets every cell back exactly. encoding/csv's UseCRLF would turn those
// into CRLF too.
func newCSVEncoder(w io.Writer, includeOutput bool) *csvEncoder {
	e := &csvEncoder{out: bufio.NewWriter(w), includeOutput: includeOutput}
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

func (e *csvEncoder) begin() error {
	head := ExportColumns
	if e.includeOutput {
		head = append(append([]string{}, ExportColumns...), "output")
	}
	return e.write(head)
}

func (e *csvEncoder) row(r *exportRow) error {
	e.cells = append(e.cells[:0], strconv.FormatInt(r.id, 10), r.created, SafeCell(r.username),
		nullIDText(r.deviceID), SafeCell(r.deviceName), nullIDText(r.commandID), SafeCell(r.commandName),
		r.commandType, strconv.FormatBool(r.success), strconv.FormatFloat(r.duration, 'f', -1, 64),
		SafeCell(r.errorMessage))
	if e.includeOutput {
		e.cells = append(e.cells, SafeCell(r.output))
	}
	return e.write(e.cells)
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

func nullIDText(id sql.NullInt64) string {
	if !id.Valid {
		return ""
	}
	return strconv.FormatInt(id.Int64, 10)
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
	w             *bufio.Writer
	buf           bytes.Buffer
	enc           *json.Encoder
	count         int
	includeOutput bool
	first         bool
}

func newJSONEncoder(w io.Writer, count int, includeOutput bool) *jsonEncoder {
	e := &jsonEncoder{w: bufio.NewWriterSize(w, 64<<10), count: count, includeOutput: includeOutput, first: true}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false) // as the API's own encoder: "<iface>" stays readable
	return e
}

func (e *jsonEncoder) begin() error {
	_, err := fmt.Fprintf(e.w, `{"count":%d,"results":[`, e.count)
	return err
}

// exportRef is a log's command or device in the JSON export: id null once deleted.
type exportRef struct {
	ID   *int64 `json:"id"`
	Name string `json:"name"`
}

type exportJSON struct {
	ID                int64     `json:"id"`
	Command           exportRef `json:"command"`
	Device            exportRef `json:"device"`
	Username          string    `json:"username"`
	Success           bool      `json:"success"`
	Created           string    `json:"created"`
	ExecutionDuration float64   `json:"execution_duration"`
	ErrorMessage      string    `json:"error_message"`
	Output            *string   `json:"output,omitempty"`
}

func exportRefOf(id sql.NullInt64, name string) exportRef {
	r := exportRef{Name: name}
	if id.Valid {
		r.ID = &id.Int64
	}
	return r
}

func (e *jsonEncoder) row(r *exportRow) error {
	v := exportJSON{ID: r.id, Command: exportRefOf(r.commandID, r.commandName), Device: exportRefOf(r.deviceID, r.deviceName),
		Username: r.username, Success: r.success, Created: r.created, ExecutionDuration: r.duration,
		ErrorMessage: r.errorMessage}
	if e.includeOutput {
		v.Output = &r.output
	}
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	b := bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))
	if !e.first {
		if err := e.w.WriteByte(','); err != nil {
			return err
		}
	}
	e.first = false
	_, err := e.w.Write(b)
	return err
}

func (e *jsonEncoder) end() error {
	if _, err := e.w.WriteString("]}\n"); err != nil {
		return err
	}
	return e.w.Flush()
}
