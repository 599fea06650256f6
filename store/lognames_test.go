package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

var (
	searchCommands = []string{"show version", "Show Running-Config", "command 042", "command 0420", "ÉCHO test",
		"straße check", "dev-123 ping", `say "hi"`, "ping 10.0.0.1", "ǅemal's command"}
	searchDevices = []string{"dev-123", "dev-1234", "DEV-12", "Router-É1", "核心-1", "edge-7"}
	searchUsers   = []string{"alice", "Bob", "ǅemal", "ALİCE"}
)

// searchFixture is a database at path of logs of names in several scripts and cases,
// written through the bulk path and one by one, then some deleted, some renamed and a
// device deleted. It is built once (buildSearch) and each test gets a copy.
func searchFixture(t *testing.T, path string) *DB {
	t.Helper()
	db, _ := searchImage.open(t, path, buildSearch)
	return db
}

var searchImage fixtureImage

func buildSearch(t *testing.T, db *DB) []Expr {
	t.Helper()
	ctx := context.Background()
	devices := siteDevices(t, db, 3)
	rng := rand.New(rand.NewPCG(9, 10))
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	mk := func() Values {
		v := Values{"command_name": searchCommands[rng.IntN(len(searchCommands))], "device": devices[rng.IntN(len(devices))],
			"device_name": searchDevices[rng.IntN(len(searchDevices))], "username": searchUsers[rng.IntN(len(searchUsers))],
			"success": rng.IntN(3) > 0, "output": fmt.Sprintf("Interface Gi0/%d is up, command %03d", rng.IntN(50), rng.IntN(60)),
			"created": at.Add(-time.Duration(rng.IntN(10000)) * time.Second)}
		if !v["success"].(bool) {
			v["error_message"] = fmt.Sprintf("%% Invalid input (case %d)", rng.IntN(12))
		}
		return v
	}
	var bulk []Values
	for range 600 {
		bulk = append(bulk, mk())
	}
	if err := db.InsertLogs(ctx, bulk); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := db.CreateLog(ctx, mk()); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM command_logs WHERE id % 5 = 0 OR device_name = 'edge-7'`); err != nil {
			return err
		}
		// Logs are never updated by the API; the names follow if one ever is.
		_, err := tx.ExecContext(ctx, `UPDATE command_logs SET device_name = 'renamed-É', username = 'carol' WHERE id % 13 = 0`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, Devices, devices[1]); err != nil {
		t.Fatal(err)
	}
	return nil
}

// searchQueries are the q to compare: whole and partial names, other cases, quotes,
// words of outputs and errors, and random substrings of names in random case.
func searchQueries(rng *rand.Rand) []string {
	qs := []string{"command 042", "COMMAND 04", "dev-123", "ev-12", "éch", "ÉCH", "STRASSE", "straße", "核心-", "ǆem", "ǅEMAL",
		`"hi"`, `say "`, "show", "sho", "alice", "alİ", "renamed", "ping 10.0", "10.0.0", "command 017", "case 7", "Gi0/4 is",
		"nothing at all", "-1", "'s c"}
	all := slices.Concat(searchCommands, searchDevices, searchUsers)
	for range 40 {
		name := []rune(all[rng.IntN(len(all))])
		i := rng.IntN(len(name))
		j := i + 1 + rng.IntN(len(name)-i)
		sub := name[i:j]
		for k, r := range sub {
			if rng.IntN(2) == 0 {
				sub[k] = unicode.ToUpper(r)
			} else {
				sub[k] = unicode.ToLower(r)
			}
		}
		qs = append(qs, string(sub))
	}
	return qs
}

// TestLogSearchNamesAgree compares ?q= through the distinct names with the match of q
// against the names of every log, which it replaces.
func TestLogSearchNamesAgree(t *testing.T) {
	db := searchFixture(t, filepath.Join(t.TempDir(), "fieldkit.db"))
	ctx := context.Background()
	// The match over every log's names is a trigram index of the three names of every
	// log, built here over the fixture's logs as it stands.
	if _, err := db.w.ExecContext(ctx, `CREATE VIRTUAL TABLE every_log_names USING fts5(
		command_name, device_name, username, content = 'command_logs', content_rowid = 'id', tokenize = 'trigram')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO every_log_names (every_log_names) VALUES ('rebuild')`); err != nil {
		t.Fatal(err)
	}
	ids := func(where Expr) []int64 {
		return plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+where.SQL+` ORDER BY t.id`, where.Args...)
	}
	// The fixture's devices that remain (one was deleted).
	d := plainIDs(t, db, `SELECT id FROM devices ORDER BY id`)
	var scopes []Expr
	for _, c := range []string{
		`{}`, fmt.Sprintf(`{"device": %d}`, d[0]), fmt.Sprintf(`{"device__in": [%d, %d]}`, d[0], d[1]),
		`{"device__isnull": true}`, `{"device__site__slug": "s"}`, fmt.Sprintf(`[{"device": %d}, {"device__isnull": true}]`, d[1]),
		`{"success": false}`, fmt.Sprintf(`{"device": %d, "username": "Bob"}`, d[0]),
	} {
		where, err := CompileConstraints(CommandLogs, c, 1)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		scopes = append(scopes, where)
		_, _, narrowed, err := db.planLogSearch(ctx, Query{Model: TypeCommandLog, Where: []Expr{where, CommandLogs.Search("command")}})
		// Counted by the devices, or by the (device, outcome) pairs; not with a user name.
		if byDevice := !strings.Contains(c, "username"); err != nil || narrowed != byDevice {
			t.Errorf("%s: search narrowed to the devices or outcomes: %v (%v), want %v", c, narrowed, err, byDevice)
		}
	}
	checked := 0
	// Under -short (the race detector's run), every search's matches, and the pages of
	// a sixth of them newest first.
	dirs, pageEvery := []bool{true, false}, 1
	if testing.Short() {
		dirs, pageEvery = []bool{true}, 6
	}
	for i, q := range searchQueries(rand.New(rand.NewPCG(11, 12))) {
		// The match over every log's names, as ?q= was before the distinct names.
		want := Expr{SQL: `t.id IN (SELECT rowid FROM every_log_names WHERE every_log_names MATCH ?)`, Args: []any{ftsPhrase(q)}}
		if len([]rune(q)) < 3 {
			pat := "%" + likeEscape(q) + "%"
			want = Expr{SQL: `t.command_name LIKE ? ESCAPE '\' OR t.device_name LIKE ? ESCAPE '\' OR t.username LIKE ? ESCAPE '\'`,
				Args: []any{pat, pat, pat}}
		}
		if words, ok := logWords(q); ok {
			want = Or(want, Expr{SQL: `t.id IN (` + words.SQL + `)`, Args: words.Args})
		}
		got, exp := ids(logSearch(q)), ids(want)
		if !slices.Equal(got, exp) {
			t.Errorf("q %q: %d logs, want %d", q, len(got), len(exp))
		}
		if len(exp) > 0 {
			checked++
		}
		if i%pageEvery != 0 {
			continue
		}
		for _, scope := range scopes {
			for _, desc := range dirs {
				dir := "ASC"
				if desc {
					dir = "DESC"
				}
				all := And(scope, want)
				wantIDs := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+all.SQL+` ORDER BY t.created `+dir+`, t.id `+dir, all.Args...)
				for _, offset := range []int{0, 3, len(wantIDs) - 2} {
					if offset < 0 || (offset > 0 && offset >= len(wantIDs)) {
						continue
					}
					got, n, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Where: []Expr{scope, CommandLogs.Search(q)},
						Order: []Order{{SQL: "t.created", Desc: desc, NotNull: true}}, Limit: 5, Offset: offset})
					page := wantIDs[min(offset, len(wantIDs)):min(offset+5, len(wantIDs))]
					if err != nil || n != len(wantIDs) || !slices.Equal(got, page) && len(page) > 0 {
						t.Errorf("q %q, scope %s, %s offset %d: %v, count %d (%v); want %v, count %d",
							q, scope.SQL, dir, offset, got, n, err, page, len(wantIDs))
					}
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d queries matched anything", checked)
	}
}

// TestLogNamesCounted checks the distinct names against the logs, after the inserts,
// deletes and renames of the fixture, and after the migration builds them for a
// database that had logs before it.
func TestLogNamesCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fieldkit.db")
	db := searchFixture(t, path)
	check := func(db *DB, when string) {
		var got, want [][3]any
		for _, c := range []struct {
			out   *[][3]any
			query string
		}{
			{&got, `SELECT kind, name, total FROM command_log_names ORDER BY 1, 2`},
			{&want, `SELECT 0, command_name, count(*) FROM command_logs GROUP BY 2 UNION ALL
				SELECT 1, device_name, count(*) FROM command_logs GROUP BY 2 UNION ALL
				SELECT 2, username, count(*) FROM command_logs GROUP BY 2 ORDER BY 1, 2`},
		} {
			rows, err := db.r.Query(c.query)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var r [3]any
				if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
					t.Fatal(err)
				}
				*c.out = append(*c.out, r)
			}
			rows.Close()
		}
		if len(want) < 10 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: distinct names\n got %v\nwant %v", when, got, want)
		}
		var fts int
		if err := db.r.QueryRow(`SELECT count(*) FROM command_log_names_fts`).
			Scan(&fts); err != nil || fts != len(want) {
			t.Errorf("%s: %d names indexed (%v), want %d", when, fts, err, len(want))
		}
	}
	check(db, "kept by triggers")
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TRIGGER command_logs_names_ai`, `DROP TRIGGER command_logs_names_ad`, `DROP TRIGGER command_logs_names_au`,
		`DROP TABLE command_log_names_fts`, `DROP TABLE command_log_names`,
		`DROP INDEX command_logs_command_name`, `DROP INDEX command_logs_device_name`,
		`DELETE FROM schema_migrations WHERE version = '0057_log_name_search'`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	db, err = Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check(db, "built by the migration")
	if got := plainIDs(t, db, `SELECT t.id FROM command_logs t WHERE `+logSearch("command 042").SQL, logSearch("command 042").Args...); len(got) == 0 {
		t.Errorf("q after the migration finds nothing")
	}
	if !strings.Contains(logSearch("abc").SQL, "command_log_names_fts") {
		t.Errorf("q of three characters does not go through the distinct names")
	}
}
