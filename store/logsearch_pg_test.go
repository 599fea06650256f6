package store

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fieldkit/store/pgtest"
)

// The words the store gives a log on PostgreSQL (logWordSet, in Go) are those the
// database makes for a log written without them (log_words, pgschema/0006), and a log
// whose notes change gets the new notes' words: a search finds a log by the same words
// whichever wrote them.
func TestPostgresLogWords(t *testing.T) {
	db := openPG(t, pgtest.DSN(t))
	ctx := context.Background()
	for _, text := range []string{
		"",
		"  -- ",
		"Cisco IOS XE Software, Version 17.9.4a\nuptime is 3 weeks",
		"GigabitEthernet0/1 is up, line protocol is up\tGi0/1\r\n10.0.0.1/24 a_b-c",
		"Café ÉCOLE naïve Straße x²y İstanbul",
		"東京の機器 Ελληνικά Русский текст",
		strings.Repeat("a", 200) + " " + strings.Repeat("b", 201) + " short",
	} {
		var joined string
		if err := db.r.QueryRowContext(ctx, `SELECT coalesce(string_agg(w, ' ' ORDER BY w), '') FROM unnest(log_words(?)) w`,
			text).Scan(&joined); err != nil {
			t.Fatal(err)
		}
		var fromPG []string
		if joined != "" {
			fromPG = strings.Split(joined, " ")
		}
		fromGo := slices.Clone(logWordSet(text))
		slices.Sort(fromGo)
		if !slices.Equal(fromGo, fromPG) {
			t.Errorf("the words of %q: Go %q, PostgreSQL %q", text, fromGo, fromPG)
		}
	}

	// A log written without its words gets them; its notes changed, their words follow.
	if err := db.InsertLogs(ctx, []Values{{"command_name": "show version", "device_name": "r1", "username": "alice",
		"success": true, "output": "Cisco IOS XE Software", "notes": "before the change"}}); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.r.QueryRowContext(ctx, `SELECT max(id) FROM command_logs`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	find := func(q string) int {
		t.Helper()
		_, total, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Search: q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return total
	}
	if find("software before") != 1 || find("after") != 0 {
		t.Fatalf("a log written without its words: software before %d, after %d", find("software before"), find("after"))
	}
	// A log a site pushed has its words from the store (logWordsOf, in the COPY): the
	// same set as the database makes.
	site, _, err := db.CreateHubSite(ctx, "Paris", "", "", All)
	if err != nil {
		t.Fatal(err)
	}
	pushed := HubLog{Key: "1", Record: HubRecord{Site: site, Epoch: "e", Seq: 1, Kind: KindLog, Op: OpUpsert, EdgeID: 1, UID: "u1"},
		Values: Values{"command_name": "show version", "device_name": "r2", "username": "bob", "success": false,
			"error_message": "Connection refused by peer", "output": "Gi0/1 is DOWN, naïve Café", "notes": "CHG-1001"}}
	// The database's trigger off for the push: the words are the store's or none.
	if _, err := db.w.ExecContext(ctx, `ALTER TABLE command_logs DISABLE TRIGGER command_logs_words_bi`); err != nil {
		t.Fatal(err)
	}
	if err := db.Batch(ctx, func(ctx context.Context) error { return db.AddHubLogs(ctx, site, []HubLog{pushed}, db.now()) }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `ALTER TABLE command_logs ENABLE TRIGGER command_logs_words_bi`); err != nil {
		t.Fatal(err)
	}
	var same bool
	if err := db.r.QueryRowContext(ctx, `SELECT words @> w AND words <@ w AND cardinality(words) = 12 FROM command_logs,
		LATERAL (SELECT log_words(output || ' ' || error_message || ' ' || notes) AS w) x WHERE device_name = 'r2'`).Scan(&same); err != nil || !same {
		t.Fatalf("a pushed log's words are not the database's: %v", err)
	}
	if find("refused gi0/1 CAFÉ chg-1001") != 1 {
		t.Fatal("a pushed log is not found by its words")
	}
	if _, err := db.SetLogNotes(ctx, id, "after the maintenance window"); err != nil {
		t.Fatal(err)
	}
	if find("maintenance window") != 1 || find("before") != 0 || find("XE software") != 1 {
		t.Fatalf("a log whose notes changed: maintenance window %d, before %d, XE software %d",
			find("maintenance window"), find("before"), find("XE software"))
	}
}

// BenchmarkLogSearchPostgres: ?q= at a hub on PostgreSQL with FIELDKIT_BENCH_LOGS logs
// (100,000 unless set; 200 bytes of output each, 10 users, 20 % failed), each op a
// list's first page of 50 with its exact count: a word of one log, of 10 % of them,
// of every log, a phrase, and a word of 10 % within a user's logs (a viewer's
// confined list). The logs are generated once per run, their words by the database.
func BenchmarkLogSearchPostgres(b *testing.B) {
	db, err := OpenPostgres(context.Background(), pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("FIELDKIT_BENCH_LOGS")); err == nil && v > 0 {
		n = v
	}
	seedSearchLogs(b, db, n)
	user, _ := CommandLogs.FilterExpr("username", []string{"user3"})
	newest, err := CommandLogs.Ordering("-created")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name, q string
		where   []Expr
	}{
		{"one log", "FOC4242", nil},
		{"10 percent", "case 7", nil},
		{"every log", "GigabitEthernet0", nil},
		{"a phrase", "17.9.3a", nil},
		{"confined 10 percent", "case 7", []Expr{user}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				if _, _, err := db.ListIDs(ctx, Query{Model: TypeCommandLog, Search: bc.q, Where: bc.where, Limit: 50,
					Order: newest}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// seedSearchLogs adds n logs to db for BenchmarkLogSearchPostgres, and analyzes them.
func seedSearchLogs(b testing.TB, db *DB, n int) {
	ctx := context.Background()
	for start := 0; start < n; start += 50_000 {
		if _, err := db.BulkLogs(ctx, func(tx *sql.Tx) (int, error) {
			res, err := tx.ExecContext(ctx, `INSERT INTO command_logs (command_name, device_name, username, success,
				error_message, execution_time, created, last_updated, output)
				SELECT 'show version', 'rtr-' || (i % 500), 'user' || (i % 10), CASE WHEN i % 5 = 0 THEN 0 ELSE 1 END,
					CASE WHEN i % 5 = 0 THEN 'timeout ' || (i % 7) ELSE '' END, s, s, s,
					'Cisco IOS XE Software, Version 17.9.' || (i % 10) || 'a' || chr(10) || 'GigabitEthernet0/' || (i % 48) ||
					' is up, line protocol is up' || chr(10) || 'case ' || (i % 10) || ' serial FOC' || i || chr(10) ||
					'uptime is ' || (i % 52) || ' weeks, ' || (i % 7) || ' days'
				FROM generate_series(CAST(? AS BIGINT), CAST(? AS BIGINT)) i,
					LATERAL (SELECT to_char(timestamp '2030-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS s) t`,
				start+1, min(start+50_000, n))
			if err != nil {
				return 0, err
			}
			added, err := res.RowsAffected()
			return int(added), err
		}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.w.ExecContext(ctx, `VACUUM ANALYZE command_logs`); err != nil {
		b.Fatal(err)
	}
}
