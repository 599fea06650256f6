package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestReadRowsAgrees reads a table of every kind of value through readRows and through
// database/sql's Rows, and wants the same values in the same order; and an error of the
// callback back as itself, and concurrent reads each with their own rows.
func TestReadRowsAgrees(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	values := [][]any{
		{int64(1), "plain", 0.1 + 0.2, []byte{0, 1, 2}, nil},
		{int64(2), "", math.MaxFloat64, []byte{}, int64(math.MinInt64)},
		{int64(3), "quote \" back\\slash\nnew line, é, 中, \x00 nul", -1.5e-7, nil, "text"},
		{int64(4), strings.Repeat("long ", 20000), 1e-300, []byte(strings.Repeat("b", 70000)), 2.5},
		{int64(5), "2026-11-29T05:00:00Z", float64(3), []byte("x"), int64(math.MaxInt64)},
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE zz_values (id INTEGER PRIMARY KEY, s TEXT, f REAL, b BLOB, a ANY) STRICT`); err != nil {
			return err
		}
		for _, v := range values {
			if _, err := tx.ExecContext(ctx, `INSERT INTO zz_values VALUES (?, ?, ?, ?, ?)`, v...); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cols := []string{"t.id", "t.s", "t.f", "t.b", "t.a", "t.f * 2", "length(t.s)"}
	for _, c := range []struct{ where, order string }{
		{"t.id > 0", ""}, {"t.id > 0", "t.id DESC"}, {"t.id IN (2, 4, 5)", "t.s, t.id"}, {"t.id > 99", ""},
	} {
		var want [][]driver.Value
		rs, err := db.Reader().QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM zz_values t WHERE "+
			c.where+map[bool]string{true: "", false: " ORDER BY " + c.order}[c.order == ""])
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			row := make([]any, len(cols))
			dest := make([]any, len(cols))
			for i := range dest {
				dest[i] = &row[i]
			}
			if err := rs.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			vals := make([]driver.Value, len(row))
			for i, v := range row {
				vals[i] = v
			}
			want = append(want, vals)
		}
		rs.Close()
		var got [][]driver.Value
		if err := readRows(ctx, db.r, cols, "zz_values t WHERE "+c.where, c.order, nil, func(vals []driver.Value) error {
			got = append(got, append([]driver.Value(nil), vals...))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if c.order == "" {
			// unordered: compare as sets, by id
			byID := func(rows [][]driver.Value) map[int64][]driver.Value {
				m := map[int64][]driver.Value{}
				for _, r := range rows {
					m[r[0].(int64)] = r
				}
				return m
			}
			if len(got) != len(want) {
				t.Errorf("%s: got %d rows, want %d", c.where, len(got), len(want))
			}
			g := byID(got)
			for id, w := range byID(want) {
				diffRow(t, c.where, w, g[id])
			}
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s ORDER BY %s: got %d rows, want %d", c.where, c.order, len(got), len(want))
			continue
		}
		for i := range want {
			diffRow(t, c.where+" ORDER BY "+c.order, want[i], got[i])
		}
	}

	// a subquery's own order is the order rows are handed over in (the export's way):
	// SQLite does not flatten an ordered subquery into an aggregate
	var order []int64
	if err := readRows(ctx, db.r, []string{"i"}, "(SELECT t.id AS i FROM zz_values t WHERE t.id > 1 ORDER BY t.s DESC, t.id)", "", nil,
		func(v []driver.Value) error {
			order = append(order, v[0].(int64))
			return nil
		}); err != nil || fmt.Sprint(order) != "[3 4 5 2]" {
		t.Errorf("rows of an ordered subquery: %v (%v), want [3 4 5 2]", order, err)
	}

	// the callback's error comes back as itself, and no row is handed over after it
	stop := errors.New("enough")
	calls := 0
	err := readRows(ctx, db.r, cols, "zz_values t", "t.id", nil, func([]driver.Value) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Errorf("a callback's error: got %v after %d calls, want %v after 2", err, calls, stop)
	}
	// an error of SQL's own
	if err := readRows(ctx, db.r, []string{"t.nothing"}, "zz_values t", "", nil, func([]driver.Value) error { return nil }); err == nil ||
		!strings.Contains(err.Error(), "nothing") {
		t.Errorf("a missing column: got %v", err)
	}

	// every model's columns fit in one call, with the owner's id of a child
	for _, m := range models {
		if _, c := loadedColumns(m, nil, true); len(c)+1 > 999 {
			t.Errorf("%s: %d columns, more than fieldkit_rows takes", m.Type, len(c))
		}
	}
	if err := readRows(ctx, db.r, slices.Repeat([]string{"1"}, 1000), "zz_values t", "", nil, func([]driver.Value) error { return nil }); err == nil {
		t.Error("1,000 columns: read, want SQLite's error")
	}

	// concurrent reads each get their own rows
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for range 20 {
				id := int64(g%5 + 1)
				var ids []int64
				if err := readRows(ctx, db.r, []string{"t.id"}, "zz_values t WHERE t.id = ?", "", []any{id}, func(v []driver.Value) error {
					ids = append(ids, v[0].(int64))
					return nil
				}); err != nil {
					errs <- err
					return
				}
				if len(ids) != 1 || ids[0] != id {
					errs <- fmt.Errorf("read of %d got %v", id, ids)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// diffRow reports the first value of got that is not want's, with both types.
func diffRow(t *testing.T, what string, want, got []driver.Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: row %v: got %d values, want %d", what, want[0], len(got), len(want))
		return
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s: row %v, column %d: got %T %s, want %T %s", what, want[0], i, got[i], short(got[i]), want[i], short(want[i]))
			return
		}
	}
}

// short is v as Go syntax, cut to 60 bytes.
func short(v driver.Value) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// BenchmarkReadRows is a page of 50 logs' columns (all but the output, as a log page
// without output reads them), by id, read through database/sql's Rows and through
// readRows.
func BenchmarkReadRows(b *testing.B) {
	ctx := context.Background()
	db, _ := benchLogDB(b)
	var ids []int64
	rs, err := db.Reader().QueryContext(ctx, `SELECT id FROM command_logs WHERE device_id = 7 ORDER BY created DESC LIMIT 50`)
	if err != nil {
		b.Fatal(err)
	}
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	rs.Close()
	_, cols := loadedColumns(CommandLogs, flatLeaves(CommandLogs, func(n string) bool { return n == "output" }), true)
	from := "command_logs t WHERE t.id IN (" + placeholders(len(ids)) + ")"
	b.Run("rows", func(b *testing.B) {
		vals := make([]any, len(cols))
		dest := make([]any, len(cols))
		for i := range dest {
			dest[i] = &vals[i]
		}
		for b.Loop() {
			rs, err := db.r.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+from, int64Args(ids)...)
			if err != nil {
				b.Fatal(err)
			}
			for rs.Next() {
				if err := rs.Scan(dest...); err != nil {
					b.Fatal(err)
				}
			}
			rs.Close()
		}
	})
	b.Run("fieldkit_rows", func(b *testing.B) {
		for b.Loop() {
			if err := readRows(ctx, db.r, cols, from, "", int64Args(ids), func([]driver.Value) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestAssign stores each kind of value in each destination grouped scans into, and
// refuses what Rows.Scan would refuse for them.
func TestAssign(t *testing.T) {
	var i int64
	var f float64
	var b bool
	var s string
	var a any
	for _, c := range []struct {
		dst, v, want any
	}{
		{&i, int64(-7), int64(-7)}, {&f, 2.5, 2.5}, {&f, int64(3), float64(3)}, {&b, int64(1), true}, {&b, int64(0), false},
		{&s, "é\x00x", "é\x00x"}, {&s, []byte("raw"), "raw"}, {&a, nil, nil}, {&a, []byte("x"), []byte("x")},
	} {
		if err := assign(c.dst, c.v); err != nil {
			t.Errorf("%T ← %#v: %v", c.dst, c.v, err)
			continue
		}
		if got := reflect.ValueOf(c.dst).Elem().Interface(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%T ← %#v: got %#v, want %#v", c.dst, c.v, got, c.want)
		}
	}
	for _, c := range []struct{ dst, v any }{{&i, "1"}, {&i, nil}, {&b, "true"}, {&s, int64(1)}, {&s, nil}, {&f, "1.5"}, {new(int), int64(1)}} {
		if err := assign(c.dst, c.v); err == nil {
			t.Errorf("%T ← %#v: stored, want an error", c.dst, c.v)
		}
	}
}
