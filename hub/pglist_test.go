package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"fieldkit/store"
)

// siteLogs are a site's inventory and 40 logs of two devices, three users, two
// commands, successes, failures and a cancelled one, over two days before now; their
// outputs name a version and an interface's state, some have notes.
func siteLogs(now time.Time) []Record {
	dev := func(id int64, name string) Record {
		return Record{Kind: store.KindDevice, Op: store.OpUpsert, ID: id, Body: body(fmt.Sprintf(`{"id": %d, "name": %q,
			"platform": {"id": 3, "name": "Cisco IOS", "slug": "cisco_ios"}, "status": "active"}`, id, name))}
	}
	recs := []Record{platformIOS, dev(5, "r1"), dev(6, "r2"), commandVer}
	users := []string{"alice", "bob", "carol"}
	for i := range 40 {
		dv, dn := 5, "r1"
		if i%3 == 0 {
			dv, dn = 6, "r2"
		}
		ok, errMsg, failure := i%4 != 0, "", "null"
		if !ok {
			errMsg = fmt.Sprintf("timeout %d", (i/4)%2)
			failure = `{"reason": "timeout", "stage": "connect"}`
			if i == 8 {
				errMsg, failure = "cancelled", `{"reason": "cancelled", "stage": "run"}`
			}
		}
		cmd := `{"id": 8, "name": "Version"}`
		if i%5 == 0 {
			cmd = `{"id": 99, "name": "show clock"}` // a command the hub has not: its name kept
		}
		state := []string{"up", "down", "administratively down"}[i%3]
		out := fmt.Sprintf("out %d\nCisco IOS XE Software, Version 17.9.%da\nGigabitEthernet0/%d is %s, line protocol is %s",
			i, i%3, i%4, state, state)
		notes := ""
		if i%6 == 1 {
			notes = fmt.Sprintf("change CHG-%d: Uplink check at Café", 1000+i%2)
		}
		created := now.Add(-time.Duration(i) * 73 * time.Minute).UTC().Format(time.RFC3339Nano)
		recs = append(recs, Record{Kind: store.KindLog, Op: store.OpUpsert, ID: int64(100 + i), UID: fmt.Sprint("log", i),
			Body: body(fmt.Sprintf(`{"id": %d, "command": %s, "device": {"id": %d, "name": %q}, "username": %q,
			"success": %t, "error_message": %q, "failure": %s, "execution_duration": %d.25, "output": %q,
			"notes": %q, "created": %q, "execution_time": %q, "source": "api"}`, 100+i, cmd, dv, dn, users[i%3], ok, errMsg,
				failure, i%7, out, notes, created, created))})
	}
	return recs
}

// TestLogListSameOnPostgres: the logs a site pushed read the same from a hub on
// PostgreSQL as from one on SQLite: each filter's page and exact count, each ordering,
// ?q= (names, words, phrases, with filters, after more logs arrive), and the
// statistics.
func TestLogListSameOnPostgres(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	lite, pg := newRig(t), newPGRig(t)
	for _, r := range []*rig{lite, pg} {
		if st, ans := r.push("inst", "e1", 1, siteLogs(now)...); st != 200 || ans.Applied != 44 || len(ans.Problems) != 0 {
			t.Fatalf("push: %d %+v", st, ans)
		}
	}
	ctx := context.Background()
	// A second site, Lyon, with a device r1 of its own and two logs.
	lyon := map[*rig]string{}
	for _, r := range []*rig{lite, pg} {
		_, token, err := r.db.CreateHubSite(ctx, "Lyon", "", "", store.All)
		if err != nil {
			t.Fatal(err)
		}
		lyon[r] = token
		recs := append(siteLogs(now)[:4], siteLogs(now)[10:12]...)
		for i := range recs {
			recs[i].Seq = int64(i + 1)
		}
		raw, _ := json.Marshal(Batch{Protocol: Protocol, Instance: "lyon", Epoch: "l1", EpochStart: 1, SentAt: time.Now(), Records: recs})
		if st, ans := r.post(token, raw); st != 200 || ans.Applied != 6 {
			t.Fatalf("Lyon's push: %d %+v", st, ans)
		}
	}
	dev := lite.hubID(store.KindDevice, "5")
	if got := pg.hubID(store.KindDevice, "5"); got != dev {
		t.Fatalf("device r1 is %d on SQLite, %d on PostgreSQL: the ids should follow the same order", dev, got)
	}
	type filter struct{ key, val string }
	type listCase struct {
		name    string
		q       string
		filters []filter
		order   string
		limit   int
		offset  int
		want    int // the count, checked on SQLite; PostgreSQL must agree
	}
	same := func(t *testing.T, tc listCase) {
		var answers [2]struct {
			ids   []int64
			total int
		}
		for i, r := range []*rig{lite, pg} {
			q := store.Query{Model: store.TypeCommandLog, Limit: tc.limit, Offset: tc.offset, Search: tc.q}
			for _, f := range tc.filters {
				e, err := store.CommandLogs.FilterExpr(f.key, []string{f.val})
				if err != nil {
					t.Fatal(err)
				}
				q.Where = append(q.Where, e)
			}
			if tc.order != "" {
				o, err := store.CommandLogs.Ordering(tc.order)
				if err != nil {
					t.Fatal(err)
				}
				q.Order = o
			}
			ids, total, err := r.db.ListIDs(ctx, q)
			if err != nil {
				t.Fatalf("store %d: %v", i, err)
			}
			answers[i].ids, answers[i].total = ids, total
		}
		if answers[0].total != tc.want {
			t.Errorf("SQLite counts %d, want %d", answers[0].total, tc.want)
		}
		if !reflect.DeepEqual(answers[0], answers[1]) {
			t.Errorf("SQLite answers %v, PostgreSQL %v", answers[0], answers[1])
		}
	}
	paris := fmt.Sprint(lite.site.SiteID)
	for _, tc := range []listCase{
		{name: "all", want: 42, limit: 50},
		{name: "page", want: 42, limit: 7, offset: 7},
		{name: "device", filters: []filter{{"device_id", fmt.Sprint(dev)}}, want: 26, limit: 50},
		{name: "failed", filters: []filter{{"success", "false"}}, want: 10, limit: 50}, // Lyon's two succeeded
		{name: "user", filters: []filter{{"username", "bob"}}, want: 14, limit: 5},
		{name: "user and device", filters: []filter{{"username", "alice"}, {"device_id", fmt.Sprint(dev)}}, want: 0, limit: 50},
		{name: "recent", filters: []filter{{"created__gte", now.Add(-10 * time.Hour).Format(time.RFC3339)}}, want: 11, limit: 50},
		{name: "user name contains", filters: []filter{{"username__ic", "AR"}}, want: 13, limit: 50},
		{name: "site", filters: []filter{{"site_id", fmt.Sprint(lite.site.SiteID)}}, want: 40, limit: 50},
		{name: "site slug and user", filters: []filter{{"site", "paris"}, {"username", "carol"}}, want: 13, limit: 50},
		{name: "another site", filters: []filter{{"site", "lyon"}}, want: 2, limit: 50},
		{name: "both sites", filters: []filter{{"site", "lyon"}, {"site", "paris"}}, want: 0, limit: 50},
		{name: "by duration", order: "execution_duration", want: 42, limit: 10},
		{name: "by user, newest first", order: "-username", want: 42, limit: 10, offset: 3},
		// ?q=: a name holding q, or each word of q in output, error message or notes.
		{name: "q a word of the notes", q: "UPLINK", want: 8, limit: 50},
		{name: "q two words", q: "down version", want: 27, limit: 50},
		{name: "q two words in their order", q: "administratively down", want: 13, limit: 50},
		{name: "q a phrase", q: "GigabitEthernet0/2", want: 11, limit: 50},
		{name: "q a version, a phrase", q: "17.9.1a", want: 14, limit: 50},
		{name: "q a phrase out of order", q: "2/GigabitEthernet0", want: 0, limit: 50},
		{name: "q an error", q: "timeout 1", want: 5, limit: 50},
		{name: "q the prefix of a word", q: "Gigabit", want: 0, limit: 50},
		{name: "q a name's substring", q: "ver", want: 34, limit: 50},
		{name: "q a user's name", q: "CAROL", want: 13, limit: 50},
		{name: "q not a letter", q: "Café -- CHG-1001", want: 8, limit: 50},
		{name: "q no match", q: "nothing-like-it", want: 0, limit: 50},
		{name: "q no letter", q: "-- ::", want: 0, limit: 50},
		{name: "q words, not syntax", q: `"uplink" OR check`, want: 0, limit: 50},
		{name: "q a page", q: "line protocol", want: 42, limit: 5, offset: 5},
		{name: "q by user", q: "up", order: "-username", want: 15, limit: 4, offset: 2},
		{name: "q and a user", q: "down", filters: []filter{{"username", "bob"}}, want: 14, limit: 50},
		{name: "q at a site", q: "uplink", filters: []filter{{"site", "lyon"}}, want: 1, limit: 50},
		{name: "q of a device at a site (a confined viewer)", q: "version",
			filters: []filter{{"site_id", paris}, {"device_id", fmt.Sprint(dev)}}, want: 26, limit: 10},
		{name: "q failed and recent", q: "timeout", filters: []filter{{"success", "false"},
			{"created__gte", now.Add(-20 * time.Hour).Format(time.RFC3339)}}, want: 4, limit: 50},
	} {
		t.Run(tc.name, func(t *testing.T) { same(t, tc) })
	}
	// The statistics of every log (from the counters), of a device's (from the logs'
	// index) and of a user name's (from the logs).
	byDevice, _ := store.CommandLogs.FilterExpr("device_id", []string{fmt.Sprint(dev)})
	byUser, _ := store.CommandLogs.FilterExpr("username", []string{"alice"})
	for _, where := range []store.Expr{store.And(), byDevice, byUser} {
		var stats [2]store.LogStats
		for i, r := range []*rig{lite, pg} {
			st, err := r.db.LogStatistics(ctx, where, now)
			if err != nil {
				t.Fatalf("store %d, %s: %v", i, where.SQL, err)
			}
			stats[i] = st
		}
		if stats[0].Total == 0 || len(stats[0].TopCommands) == 0 {
			t.Errorf("SQLite's statistics of %s: %+v", where.SQL, stats[0])
		}
		if where.SQL == store.True.SQL && (stats[0].Total != 42 || stats[0].Successful != 32 || len(stats[0].TopCommands) != 2 ||
			len(stats[0].CommonErrors) != 2 || stats[0].Last24h.Total == 0) {
			t.Errorf("SQLite's statistics of every log: %+v", stats[0])
		}
		if !reflect.DeepEqual(stats[0], stats[1]) {
			t.Errorf("statistics of %s: SQLite %+v, PostgreSQL %+v", where.SQL, stats[0], stats[1])
		}
	}
	// Logs arrive: a search's count (kept on SQLite, read again on PostgreSQL) follows.
	for _, r := range []*rig{lite, pg} {
		recs := siteLogs(now)[14:18] // logs 10 to 13, one with notes
		for i := range recs {
			recs[i].Seq = int64(7 + i)
		}
		raw, _ := json.Marshal(Batch{Protocol: Protocol, Instance: "lyon", Epoch: "l1", EpochStart: 1, SentAt: time.Now(), Records: recs})
		if st, ans := r.post(lyon[r], raw); st != 200 || ans.Applied != 4 {
			t.Fatalf("Lyon's second push: %d %+v", st, ans)
		}
	}
	same(t, listCase{name: "q after more logs", q: "uplink", want: 9, limit: 50})
}
