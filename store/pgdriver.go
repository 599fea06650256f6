package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The store's SQL is written once, with SQLite's `?` placeholders; PostgreSQL (through
// pgx's database/sql adapter) numbers them ($1, $2 …). Rather than two copies of every
// statement, the PostgreSQL connections the store opens are wrapped here: each statement
// has its placeholders numbered as it goes to the server, and each argument is given as
// the column that SQLite's way stores it (a bool as 0/1, a time as its fixed-width text),
// since the PostgreSQL schema keeps SQLite's column types (pgschema/).

// pgConnector opens pgx connections wrapped by pgConn.
type pgConnector struct{ driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{conn}, nil
}

// pgConn is a pgx connection whose statements are renumbered and whose arguments are
// converted. It keeps the adapter's optional interfaces (transactions with options,
// session reset) that database/sql looks for.
type pgConn struct{ driver.Conn }

// The interfaces pgx's *stdlib.Conn has and the wrapper passes on.
type pgInner interface {
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
}

func (c *pgConn) inner() pgInner { return c.Conn.(pgInner) }

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.inner().BeginTx(ctx, opts)
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.inner().PrepareContext(ctx, numberPlaceholders(query))
	if err != nil {
		return nil, err
	}
	return pgStmt{s}, nil
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.inner().ExecContext(ctx, numberPlaceholders(query), pgArgs(args))
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.inner().QueryContext(ctx, numberPlaceholders(query), pgArgs(args))
}

func (c *pgConn) Ping(ctx context.Context) error { return c.inner().Ping(ctx) }

func (c *pgConn) ResetSession(ctx context.Context) error { return c.inner().ResetSession(ctx) }

// CheckNamedValue lets every argument through, as pgx's adapter does: pgArgs converts.
func (c *pgConn) CheckNamedValue(*driver.NamedValue) error { return nil }

// pgStmt is a prepared statement whose arguments are converted.
type pgStmt struct{ driver.Stmt }

func (s pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, pgArgs(args))
}

func (s pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, pgArgs(args))
}

// pgArgs gives each argument as SQLite stores it: a bool as 0 or 1 (the schema's flags
// are integers, compared with 0 and 1 in the SQL), a time as Stamp's text.
func pgArgs(args []driver.NamedValue) []driver.NamedValue {
	for i, a := range args {
		args[i].Value = pgValue(a.Value)
	}
	return args
}

// pgValue is a value as SQLite stores it (pgArgs).
func pgValue(v any) any {
	switch v := v.(type) {
	case bool:
		if v {
			return int64(1)
		}
		return int64(0)
	case time.Time:
		return Stamp(v)
	case int:
		return int64(v)
	}
	return v
}

// copyRows writes rows (values of columns, in order, as the store's SQL takes them)
// into table with PostgreSQL's COPY, in ctx's Batch: one message stream the server
// parses once, where a multi-row INSERT is a statement of thousands of parameters to
// parse, plan and bind. COPY knows no ON CONFLICT: a row that breaks a constraint fails
// the whole copy (and the caller's savepoint). It goes through pgx's own connection
// under the Batch's transaction, as database/sql has no call for COPY.
func (db *DB) copyRows(ctx context.Context, table string, columns []string, rows [][]any) error {
	b, ok := ctx.Value(batchKey{}).(batch)
	if !ok || b.db != db || !db.pg {
		return errors.New("store: COPY outside a batch on PostgreSQL")
	}
	if len(rows) == 0 {
		return nil
	}
	for _, r := range rows {
		for i, v := range r {
			r[i] = pgValue(v)
		}
	}
	return b.conn.Raw(func(dc any) error {
		pc, ok := dc.(*pgConn)
		if !ok {
			return fmt.Errorf("store: COPY on a %T", dc)
		}
		sc, ok := pc.Conn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: COPY on a %T", pc.Conn)
		}
		n, err := sc.Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
		if err == nil && n != int64(len(rows)) {
			err = fmt.Errorf("store: COPY into %s wrote %d rows of %d", table, n, len(rows))
		}
		return err
	})
}

// numberPlaceholders turns each `?` of a statement into PostgreSQL's `$n`, and the words
// of SQLite's that PostgreSQL has not into its own (sqliteWord), leaving string literals,
// quoted names and comments alone.
func numberPlaceholders(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+2])
			i += end + 1
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i - 1
			}
			b.WriteString(query[i : i+end+1])
			i += end
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+4])
			i += end + 3
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		case (c == 'j' || c == 'I' || c == 'N' || c == 'L') && (i == 0 || !isIdentByte(query[i-1])):
			if skip, with, ok := sqliteWord(query[i:]); ok {
				b.WriteString(with)
				i += skip - 1
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sqliteWord recognises, at the start of rest, the few words of SQLite's that the
// store's SQL uses and PostgreSQL spells otherwise or has not: json_object (PostgreSQL's
// json_build_object), LIKE (SQLite's ignores the case of ASCII letters: PostgreSQL's
// ILIKE, which ignores every letter's), and the index hints INDEXED BY name and NOT
// INDEXED, which PostgreSQL's planner does without. It returns how many bytes it read and what to write
// instead. (The functions of SQLite's that PostgreSQL lacks are made by its schema:
// pgschema/0003_sqlite_functions.sql.)
func sqliteWord(rest string) (skip int, with string, ok bool) {
	switch {
	case strings.HasPrefix(rest, "json_object("):
		return len("json_object("), "json_build_object(", true
	case strings.HasPrefix(rest, "LIKE") && (len(rest) == 4 || !isIdentByte(rest[4])):
		return len("LIKE"), "ILIKE", true
	case strings.HasPrefix(rest, "NOT INDEXED") && (len(rest) == 11 || !isIdentByte(rest[11])):
		return len("NOT INDEXED"), "", true
	case strings.HasPrefix(rest, "INDEXED BY "):
		j := len("INDEXED BY ")
		for j < len(rest) && isIdentByte(rest[j]) {
			j++
		}
		return j, "", true
	}
	return 0, "", false
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
