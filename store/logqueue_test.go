package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Logs written at once are committed together, and each caller still gets its own
// row's id, or its own row's error: a row the database refuses (here a device that
// does not exist) fails alone, leaving neither the row nor its statistics behind,
// while the rows batched with it are kept.
func TestCreateLogConcurrent(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const n, bad = 60, 10
	ids, errs := createLogsTogether(t, db, n, func(i int) Values {
		v := Values{"command_name": "show clock", "device_name": fmt.Sprintf("dev%d", i), "username": "admin",
			"success": i%2 == 0, "error_message": "", "output": fmt.Sprintf("out %d", i)}
		if i%2 == 1 {
			v["error_message"] = "Timed out after 5 s"
		}
		if i < bad {
			v["device"] = int64(9999 + i)
		}
		return v
	})

	seen := map[int64]bool{}
	for i := range n {
		if i < bad {
			if errs[i] == nil || !strings.Contains(errs[i].Error(), "create log") || ids[i] != 0 {
				t.Errorf("log %d with an unknown device: id %d, err %v", i, ids[i], errs[i])
			}
			continue
		}
		if errs[i] != nil || ids[i] == 0 || seen[ids[i]] {
			t.Fatalf("log %d: id %d, err %v", i, ids[i], errs[i])
		}
		seen[ids[i]] = true
		var dev, out string
		if err := db.r.QueryRowContext(ctx, `SELECT device_name, output FROM command_logs WHERE id = ?`, ids[i]).
			Scan(&dev, &out); err != nil {
			t.Fatal(err)
		}
		if dev != fmt.Sprintf("dev%d", i) || out != fmt.Sprintf("out %d", i) {
			t.Errorf("log %d is %q %q", i, dev, out)
		}
	}
	var rows, total, ok, counted, failed int
	q := `SELECT (SELECT count(*) FROM command_logs), sum(n), sum(CASE WHEN outcome = 1 THEN n ELSE 0 END),
		(SELECT sum(n) FROM command_log_commands WHERE command_name = 'show clock'),
		(SELECT sum(n) FROM command_log_errors WHERE error = 'Timed out after 5 s') FROM command_log_counts`
	if err := db.r.QueryRowContext(ctx, q).Scan(&rows, &total, &ok, &counted, &failed); err != nil {
		t.Fatal(err)
	}
	if want := n - bad; rows != want || total != want || counted != want || ok != want/2 || failed != want/2 {
		t.Errorf("rows %d, totals %d/%d successful, per command %d, per error %d; want %d rows, half of them failed",
			rows, total, ok, counted, failed, want)
	}
	// One log alone goes in as before.
	if id, err := db.CreateLog(ctx, Values{"command_name": "show clock", "device_name": "solo", "username": "admin",
		"success": true}); err != nil || seen[id] {
		t.Errorf("a log alone: id %d, err %v", id, err)
	}
}

// createLogsTogether writes log(i) for i < n from n goroutines while the writer is held,
// so that all but the first wait in one batch, and returns each caller's id and error.
func createLogsTogether(t *testing.T, db *DB, n int, log func(i int) Values) ([]int64, []error) {
	t.Helper()
	ctx := context.Background()
	release := make(chan struct{})
	held := make(chan struct{})
	go db.Write(ctx, func(tx *sql.Tx) error {
		close(held)
		<-release
		return nil
	})
	<-held
	ids := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	create := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i], errs[i] = db.CreateLog(ctx, log(i))
		}()
	}
	// waitQueue waits until the first caller leads, has taken its batch and waits for
	// the writer, and want logs wait behind it.
	deadline := time.Now().Add(10 * time.Second)
	var queued int
	waitQueue := func(want int) bool {
		for {
			db.logs.mu.Lock()
			leading := db.logs.leading
			queued = len(db.logs.pending)
			db.logs.mu.Unlock()
			if leading && queued == want {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// The first log alone, so that its caller takes the lead and a batch of one before
	// the others arrive; were they started together, the leader could take a few of
	// them with it and leave fewer than n-1 in the second batch.
	create(0)
	ok := waitQueue(0)
	if ok {
		for i := 1; i < n; i++ {
			create(i)
		}
		ok = waitQueue(n - 1)
	}
	close(release)
	wg.Wait()
	if !ok {
		t.Fatalf("%d logs queued behind the first, want %d", queued, n-1)
	}
	return ids, errs
}

// A batch the database takes whole goes in as one statement: each caller gets the id
// of its own row, the counters count every row, and ?q= finds each log by a word of its
// output and by its device's name as soon as CreateLog has returned.
func TestCreateLogBatchWhole(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const n = 40
	ids, errs := createLogsTogether(t, db, n, func(i int) Values {
		return Values{"command_name": fmt.Sprintf("show run %d", i%3), "device_name": fmt.Sprintf("edge-%02d", i), "username": "admin",
			"success": i%4 != 0, "output": fmt.Sprintf("line%02d is up", i)}
	})
	seen := map[int64]bool{}
	for i := range n {
		if errs[i] != nil || ids[i] == 0 || seen[ids[i]] {
			t.Fatalf("log %d: id %d, err %v", i, ids[i], errs[i])
		}
		seen[ids[i]] = true
		var dev, out string
		if err := db.r.QueryRowContext(ctx, `SELECT device_name, output FROM command_logs WHERE id = ?`, ids[i]).
			Scan(&dev, &out); err != nil {
			t.Fatal(err)
		}
		if dev != fmt.Sprintf("edge-%02d", i) || out != fmt.Sprintf("line%02d is up", i) {
			t.Errorf("log %d (id %d) is %q %q", i, ids[i], dev, out)
		}
		for _, q := range []string{fmt.Sprintf("line%02d", i), fmt.Sprintf("edge-%02d", i)} {
			search, err := CommandLogs.Search(ctx, db, q)
			if err != nil {
				t.Fatal(err)
			}
			got, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: []Expr{search}, Limit: 10})
			if err != nil || total != 1 || len(got) != 1 || got[0] != ids[i] {
				t.Errorf("q=%q: %v (%d, %v), want [%d]", q, got, total, err, ids[i])
			}
		}
	}
	var total, ok, perCommand int
	if err := db.r.QueryRowContext(ctx, `SELECT sum(n), sum(CASE WHEN outcome = 1 THEN n ELSE 0 END),
		(SELECT sum(n) FROM command_log_commands WHERE command_name = 'show run 1') FROM command_log_counts`).
		Scan(&total, &ok, &perCommand); err != nil {
		t.Fatal(err)
	}
	if total != n || ok != n-n/4 || perCommand != 13 {
		t.Errorf("totals %d, %d successful, %d of show run 1; want %d, %d, 13", total, ok, perCommand, n, n-n/4)
	}
}
