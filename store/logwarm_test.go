package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// WarmSearchCounts keeps the counts of the words most logs hold, for every log and per
// device; a search for one of them, in any ASCII case, reads the kept counts and
// agrees with the plain match; a rare word is left alone; a prune keeps the counts less
// the logs it deletes, or past pruneKeep logs drops them and the next run takes them
// again; a cancelled run keeps nothing.
func TestWarmSearchCounts(t *testing.T) {
	db := searchFixture(t, filepath.Join(t.TempDir(), "fieldkit.db"))
	ctx := context.Background()
	d := plainIDs(t, db, `SELECT id FROM devices ORDER BY id`)
	// The fixture's outputs read "Interface Gi0/N is up, command NNN", a third of them
	// with "% Invalid input (case N)": at 100 logs of its ~560, the words of every
	// output and of the error messages are dense, each number is not.
	db.search.keep, db.search.warmFrom, db.search.warmSample, db.search.warmWords = 1, 100, 200, 16
	kept := func(q string, mark int64) int {
		t.Helper()
		db.Settle() // a search's count is kept after its page
		var n int
		if err := db.r.QueryRow(`SELECT count(*) FROM command_log_search_counts WHERE q = ? AND device_id = ?`, q, mark).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	confined, err := CompileConstraints(CommandLogs, fmt.Sprintf(`{"device": %d}`, d[0]), 1)
	if err != nil {
		t.Fatal(err)
	}
	// agree compares a search's count and first page, for every log and for a viewer
	// of one device, with the match of q as typed, case and all (the names by LIKE,
	// which folds ASCII case, the words through the word index).
	agree := func(when, q string) {
		t.Helper()
		for _, scope := range []Expr{True, confined} {
			pat := "%" + likeEscape(q) + "%"
			want := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE (t.command_name LIKE ?1 ESCAPE '\'
				OR t.device_name LIKE ?1 ESCAPE '\' OR t.username LIKE ?1 ESCAPE '\'
				OR t.id IN (SELECT rowid FROM command_logs_text WHERE command_logs_text MATCH ?2)) AND (`+scope.SQL+`)
				ORDER BY t.created DESC, t.id DESC`, append([]any{pat, ftsPhrase(q)}, scope.Args...)...)
			got, n, _, err := db.ListKeyed(ctx, Query{Model: TypeCommandLog, Where: []Expr{scope, CommandLogs.Search(q)},
				Order: []Order{{SQL: "t.created", Desc: true, NotNull: true}}, Limit: 5, Keyed: true})
			if err != nil || n != len(want) || !slices.Equal(got, want[:min(5, len(want))]) {
				t.Errorf("%s: q %q, scope %s: %v, count %d (%v); want %v, count %d", when, q, scope.SQL, got, n, err,
					want[:min(5, len(want))], len(want))
			}
		}
	}

	warmed, err := db.WarmSearchCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"interface", "gi0", "command", "invalid", "input", "case"} {
		if !slices.Contains(warmed, w) {
			t.Errorf("%q not warmed: %v", w, warmed)
		}
		if kept(w, searchCountAll) != 1 || kept(w, searchCountDevices) != 1 {
			t.Errorf("%q: counts not kept for every log (%d) and per device (%d)", w, kept(w, searchCountAll), kept(w, searchCountDevices))
		}
	}
	if slices.Contains(warmed, "042") || kept("042", searchCountAll) != 0 {
		t.Errorf("a word of few logs warmed: %v", warmed)
	}
	var rows int
	if err := db.r.QueryRow(`SELECT count(*) FROM command_log_search_counts`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"Interface", "INTERFACE", "interface", "Invalid", "CASE", "Gi0", "042"} {
		agree("warmed", q)
	}
	// Searching the warmed words, in any case, took no count of its own.
	db.Settle()
	var after int
	if err := db.r.QueryRow(`SELECT count(*) FROM command_log_search_counts WHERE q NOT IN ('042')`).Scan(&after); err != nil || after != rows {
		t.Errorf("kept counts went from %d to %d (%v): a search in another case was counted anew", rows, after, err)
	}

	// A prune keeps the counts less the logs it deletes; one past pruneKeep logs drops
	// the counts over the logs it deletes, and warming takes them again. (The fixture
	// wrote its logs in no created order: a batch's ids may spread over all of them.)
	db.search.windowSpread = 1 << 40
	db.Settle()
	if n, err := db.PruneLogs(ctx, time.Date(2026, 4, 30, 22, 0, 0, 0, time.UTC)); err != nil || n == 0 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if kept("interface", searchCountAll) != 1 || kept("interface", searchCountDevices) != 1 || kept("042", searchCountAll) != 1 {
		t.Fatal("a prune dropped the kept counts")
	}
	for _, q := range []string{"Interface", "input", "Gi0", "042"} {
		agree("kept over a prune", q)
	}
	// A batch whose ids spread over more than windowSpread times as many as it holds
	// (logs written out of their created order) drops the counts over it too.
	db.search.windowSpread = 0
	if n, err := db.PruneLogs(ctx, time.Date(2026, 4, 30, 22, 20, 0, 0, time.UTC)); err != nil || n == 0 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if kept("interface", searchCountAll) != 0 {
		t.Fatal("a count kept over a prune whose ids spread")
	}
	db.search.windowSpread = 1 << 40
	if _, err := db.WarmSearchCounts(ctx); err != nil || kept("interface", searchCountAll) != 1 {
		t.Fatalf("warming after a prune: %v", err)
	}
	db.search.pruneKeep = 0
	cut := time.Date(2026, 4, 30, 23, 0, 0, 0, time.UTC)
	if n, err := db.PruneLogs(ctx, cut); err != nil || n == 0 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if kept("interface", searchCountAll) != 0 {
		t.Fatal("a count kept over logs pruned past pruneKeep")
	}
	if warmed, err = db.WarmSearchCounts(ctx); err != nil || !slices.Contains(warmed, "interface") || kept("interface", searchCountDevices) != 1 {
		t.Fatalf("after the prune: %v %v", warmed, err)
	}
	for _, q := range []string{"Interface", "input", "Gi0"} {
		agree("warmed after a prune", q)
	}

	// A run cut short keeps nothing it had not finished, and says why.
	db.Settle()
	if _, err := db.w.Exec(`DELETE FROM command_log_search_counts`); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if warmed, err := db.WarmSearchCounts(cancelled); !errors.Is(err, context.Canceled) || len(warmed) != 0 {
		t.Errorf("a cancelled run: %v %v", warmed, err)
	}
	if err := db.r.QueryRow(`SELECT count(*) FROM command_log_search_counts`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("a cancelled run kept %d counts (%v)", rows, err)
	}

	// Below warmFrom logs in all, nothing is read.
	db.search.warmFrom = 1 << 40
	if warmed, err := db.WarmSearchCounts(ctx); err != nil || warmed != nil {
		t.Errorf("a small table warmed: %v %v", warmed, err)
	}
}
