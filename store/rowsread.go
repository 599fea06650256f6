package store

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
)

// readRows runs SELECT cols FROM from and hands each row's values to each, in the order
// orderBy gives (none: the order SQLite reads them in). It is how the pages of every
// list read their objects' columns.
//
// The rows go through the aggregate fieldkit_rows rather than database/sql's Next and
// Scan. modernc.org/sqlite opens every connection SQLITE_OPEN_FULLMUTEX, so each column
// a Rows reads takes and releases the connection's mutex two to four times (its type,
// then its value, and a text's length); a function's arguments are read without it, all
// of a row in one call. A page of 50 logs' 23 columns takes 188–196 µs through Rows and
// 85–86 µs this way (BenchmarkReadRows).
//
// A value each receives is what Rows would have given (int64, float64, string, []byte
// or nil); the slice is each's only for the call. cols may name at most 999 columns
// (SQLite's bound on a function's arguments, less the sink); a model has at most 24.
func readRows(ctx context.Context, q querier, cols []string, from, orderBy string, args []any,
	each func(vals []driver.Value) error) error {
	s := &rowSink{each: each}
	h := rowSinks.add(s)
	defer rowSinks.drop(h)
	if orderBy != "" {
		orderBy = " ORDER BY " + orderBy
	}
	var n any
	err := q.QueryRowContext(ctx, "SELECT fieldkit_rows(?, "+strings.Join(cols, ", ")+orderBy+") FROM "+from,
		append([]any{h}, args...)...).Scan(&n)
	if s.err != nil {
		return s.err // each's own error, which SQLite reports as text
	}
	return err
}

// assign stores v, a value readRows handed over, in dst, as Rows.Scan would for these
// destinations: a *int64, *float64, *bool (from an integer), *string (from a text or
// blob) or *any.
func assign(dst any, v driver.Value) error {
	switch d := dst.(type) {
	case *any:
		*d = v
		return nil
	case *int64:
		if n, ok := v.(int64); ok {
			*d = n
			return nil
		}
	case *float64:
		switch n := v.(type) {
		case float64:
			*d = n
			return nil
		case int64:
			*d = float64(n)
			return nil
		}
	case *bool:
		if n, ok := v.(int64); ok {
			*d = n != 0
			return nil
		}
	case *string:
		switch s := v.(type) {
		case string:
			*d = s
			return nil
		case []byte:
			*d = string(s)
			return nil
		}
	}
	return fmt.Errorf("cannot store %T in %T", v, dst)
}

// rowSinks hands each read's sink to the SQL function.
var rowSinks handles[rowSink]

// handles hands Go values to SQL functions by a number, which SQLite passes where it
// could not pass a Go value: a function's first argument names the value its calls
// work on.
type handles[T any] struct {
	m    sync.Map // handle → *T
	next atomic.Int64
}

func (h *handles[T]) add(v *T) int64 {
	n := h.next.Add(1)
	h.m.Store(n, v)
	return n
}

// get is the value of handle n, or nil.
func (h *handles[T]) get(n int64) *T {
	v, _ := h.m.Load(n)
	p, _ := v.(*T)
	return p
}

func (h *handles[T]) drop(n int64) { h.m.Delete(n) }

type rowSink struct {
	each func([]driver.Value) error
	err  error
}

// rowFeeder is the aggregate fieldkit_rows(sink, value…): it hands each row's values to
// its sink, and is the number of rows.
type rowFeeder struct {
	s *rowSink
	n int64
}

func (f *rowFeeder) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if f.s == nil {
		h, _ := args[0].(int64)
		if f.s = rowSinks.get(h); f.s == nil {
			return fmt.Errorf("fieldkit_rows: no sink %d", h)
		}
	}
	if f.s.err != nil {
		return f.s.err
	}
	// The arguments are read as views of SQLite's memory (VolatileArgs): the copy of a
	// text or blob made here has its exact bytes, where the driver's own copy of a text
	// would end at its first NUL, which a device's output may hold.
	vals := args[1:]
	for i, v := range vals {
		switch v := v.(type) {
		case string:
			vals[i] = strings.Clone(v)
		case []byte:
			if len(v) == 0 {
				vals[i] = []byte(nil) // as Rows gives an empty blob
			} else {
				vals[i] = bytes.Clone(v)
			}
		}
	}
	if err := f.s.each(vals); err != nil {
		f.s.err = err
		return err
	}
	f.n++
	return nil
}

func (f *rowFeeder) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errors.New("fieldkit_rows: not a window function")
}

func (f *rowFeeder) WindowValue(*sqlite.FunctionContext) (driver.Value, error) { return f.n, nil }

func (f *rowFeeder) Final(*sqlite.FunctionContext) {}

func init() {
	sqlite.MustRegisterFunction("fieldkit_rows", &sqlite.FunctionImpl{
		NArgs:        -1,
		VolatileArgs: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &rowFeeder{}, nil
		},
	})
}
