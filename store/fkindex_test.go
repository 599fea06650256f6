package store

import (
	"context"
	"testing"
)

// Deleting a device, user or command sets its logs' reference to NULL (ON DELETE SET
// NULL): without an index that starts with the referring column, SQLite reads every
// log to find them, holding the write lock meanwhile (18 s at 5M logs). Every
// foreign key of command_logs has one.
func TestLogForeignKeysAreIndexed(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	rows, err := db.Reader().QueryContext(ctx, `SELECT "from", "table" FROM pragma_foreign_key_list('command_logs')`)
	if err != nil {
		t.Fatal(err)
	}
	var fks [][2]string
	for rows.Next() {
		var from, table string
		if err := rows.Scan(&from, &table); err != nil {
			t.Fatal(err)
		}
		fks = append(fks, [2]string{from, table})
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(fks) < 3 {
		t.Fatalf("command_logs refers to %v; want its device, user and command at least", fks)
	}
	for _, fk := range fks {
		var n int
		err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM pragma_index_list('command_logs') l
			JOIN pragma_index_info(l.name) i WHERE i.seqno = 0 AND i.name = ?`, fk[0]).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("no index of command_logs starts with %s: deleting a row of %s reads every log", fk[0], fk[1])
		}
	}
}
