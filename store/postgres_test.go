package store

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"testing"
	"time"

	"fieldkit/store/pgtest"
)

func TestNumberPlaceholders(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT id FROM t WHERE a = ? AND b IN (?, ?)`, `SELECT id FROM t WHERE a = $1 AND b IN ($2, $3)`},
		{`SELECT '?', "a?b", x FROM t WHERE y = ?`, `SELECT '?', "a?b", x FROM t WHERE y = $1`},
		{`SELECT 'it''s ?' WHERE z = ?`, `SELECT 'it''s ?' WHERE z = $1`},
		{"SELECT a -- what? \nFROM t WHERE a = ? /* and? */ AND b = ?", "SELECT a -- what? \nFROM t WHERE a = $1 /* and? */ AND b = $2"},
		{`SELECT 'unterminated ?`, `SELECT 'unterminated ?`},
		{`SELECT json_object('id', t.id) FROM command_logs t INDEXED BY command_logs_created WHERE a = ?`,
			`SELECT json_build_object('id', t.id) FROM command_logs t  WHERE a = $1`},
		{`SELECT x FROM command_logs t NOT INDEXED WHERE my_json_object(1) AND 'json_object(' = ?`,
			`SELECT x FROM command_logs t  WHERE my_json_object(1) AND 'json_object(' = $1`},
		{`SELECT 1 WHERE a LIKE ? ESCAPE '\' AND b NOT LIKE 'LIKE' AND LIKELY(c)`,
			`SELECT 1 WHERE a ILIKE $1 ESCAPE '\' AND b NOT ILIKE 'LIKE' AND LIKELY(c)`},
	} {
		if got := numberPlaceholders(tc.in); got != tc.want {
			t.Errorf("numberPlaceholders(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// openPG opens a store on a PostgreSQL schema of the test's own (pgtest).
func openPG(t *testing.T, dsn string) *DB {
	t.Helper()
	db, err := OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Two hub processes opening one new database at once both find it migrated once, and
// the sites one adds the other sees, with the store's errors for bad writes.
func TestPostgresHubSites(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	dbs := make([]*DB, 2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range dbs {
		wg.Go(func() { dbs[i], errs[i] = OpenPostgres(ctx, dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	a, b := dbs[0], dbs[1]
	if !a.Postgres() {
		t.Fatal("Postgres() = false")
	}
	files, _ := fs.Glob(pgSchema, "pgschema/*.sql")
	var n int
	if err := a.Reader().QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(files) {
		t.Fatalf("migrations recorded: %d, %v; want %d", n, err, len(files))
	}

	id, token, err := a.CreateHubSite(ctx, "Paris 1", "the first", "", All)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = b.CreateHubSite(ctx, "Paris 1", "", "", All)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "name" || !errors.Is(err, ErrConflict) {
		t.Fatalf("a second site of one name: %v, want a conflict on name", err)
	}
	s, err := b.HubSiteByToken(ctx, token)
	if err != nil || s.ID != id || s.Name != "Paris 1" || s.Revoked || s.SiteID == 0 {
		t.Fatalf("HubSiteByToken = %+v, %v", s, err)
	}
	if _, err := b.HubSiteByToken(ctx, token+"x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown token: %v, want ErrNotFound", err)
	}
	rows, err := b.AllHubSites(ctx)
	if err != nil || len(rows) != 1 {
		t.Fatalf("AllHubSites = %v, %v", rows, err)
	}
	if r := rows[0]; r["name"] != "Paris 1" || r["state"] != "never" || r["description"] != "the first" {
		t.Fatalf("the site as listed: %v", r)
	}
	if site, _ := rows[0]["site"].(Row); site["name"] != "Paris 1" || site["slug"] != "paris-1" {
		t.Fatalf("its dcim site: %v", rows[0]["site"])
	}
	if err := a.RevokeHubSite(ctx, id); err != nil {
		t.Fatal(err)
	}
	if s, err := b.HubSiteByToken(ctx, token); err != nil || !s.Revoked {
		t.Fatalf("after the revoke: %+v, %v", s, err)
	}
	token2, err := b.NewHubSiteToken(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := a.HubSiteByToken(ctx, token2); err != nil || s.Revoked {
		t.Fatalf("the new token: %+v, %v", s, err)
	}
	if _, err := a.HubSiteByToken(ctx, token); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the old token: %v, want ErrNotFound", err)
	}
	if err := a.RevokeHubSite(ctx, id+100); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoking no site: %v", err)
	}
}

// The ledger on PostgreSQL, from two hub processes: a push holds its site's row until it
// commits, so the other's push of the same records waits and then finds them stored
// (duplicates), never storing one twice.
func TestPostgresLedgerReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	a, b := openPG(t, dsn), openPG(t, dsn)
	site, _, err := a.CreateHubSite(ctx, "lyon", "", "", All)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC)
	push := func(db *DB, first, last int64, held chan<- struct{}, release <-chan struct{}) (added int, err error) {
		err = db.Batch(ctx, func(ctx context.Context) error {
			s, err := db.LockHubSite(ctx, site, now)
			if err != nil {
				return err
			}
			if s.Epoch != "e1" {
				if err := db.StartHubEpoch(ctx, site, "e1", 1, now); err != nil {
					return err
				}
			}
			if held != nil {
				close(held)
				<-release
			}
			for seq := first; seq <= last; seq++ {
				ok, err := db.AddHubRecord(ctx, HubRecord{Site: site, Epoch: "e1", Seq: seq, Kind: KindLog, Op: OpUpsert,
					EdgeID: seq, UID: "u"}, now)
				if err != nil {
					return err
				}
				if ok {
					added++
				}
			}
			return db.FinishHubPush(ctx, site, HubPushed{NextSeq: last + 1, Applied: added, Records: true, Version: "t",
				Protocol: 1, At: now})
		})
		return added, err
	}
	held, release := make(chan struct{}), make(chan struct{})
	var addedA int
	var errA error
	done := make(chan struct{})
	go func() { addedA, errA = push(a, 1, 10, held, release); close(done) }()
	<-held
	// b's push of overlapping records waits on a's lock of the site's row.
	bDone := make(chan struct{})
	var addedB int
	var errB error
	go func() { addedB, errB = push(b, 5, 15, nil, nil); close(bDone) }()
	select {
	case <-bDone:
		t.Fatalf("the second process stored its push while the first held the site: %d, %v", addedB, errB)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	<-done
	<-bDone
	if errA != nil || errB != nil {
		t.Fatalf("pushes: %v, %v", errA, errB)
	}
	if addedA != 10 || addedB != 5 {
		t.Fatalf("records added: %d and %d, want 10 and 5 (5..10 held already)", addedA, addedB)
	}
	var n, distinct int
	if err := a.Reader().QueryRowContext(ctx, `SELECT count(*), count(DISTINCT seq) FROM hub_records WHERE hub_site_id = ?`,
		site).Scan(&n, &distinct); err != nil || n != 15 || distinct != 15 {
		t.Fatalf("ledger rows %d (%d distinct), %v; want 15", n, distinct, err)
	}
	var records int
	if err := b.Reader().QueryRowContext(ctx, `SELECT records FROM hub_sites WHERE id = ?`, site).Scan(&records); err != nil || records != 15 {
		t.Fatalf("the site's records: %d, %v; want 15", records, err)
	}
	if seen, err := b.HubEpochSeen(ctx, site, "e1"); err != nil || !seen {
		t.Fatalf("HubEpochSeen = %v, %v", seen, err)
	}
	r, ok, err := b.StoredHubRecord(ctx, site, "e1", 7)
	if err != nil || !ok || r.Kind != KindLog || r.EdgeID != 7 {
		t.Fatalf("StoredHubRecord = %+v, %v, %v", r, ok, err)
	}
}

// Two hub processes polling for one site's jobs at once never hand out one job twice.
func TestPostgresJobClaimsReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	a, b := openPG(t, dsn), openPG(t, dsn)
	site, _, err := a.CreateHubSite(ctx, "nice", "", "", All)
	if err != nil {
		t.Fatal(err)
	}
	const jobs = 40
	for i := range jobs {
		if _, err := a.QueueHubJob(ctx, HubJob{Site: site, CommandID: 1, DeviceID: int64(i), EdgeCommandID: 1,
			EdgeDeviceID: int64(i), Timeout: 30, UserID: 1, Username: "noc", Expires: a.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	taken := map[int64]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, db := range []*DB{a, b, a, b} {
		wg.Go(func() {
			for {
				got, err := db.ClaimHubJobs(ctx, site, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, j := range got {
					taken[j.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(taken) != jobs {
		t.Fatalf("%d jobs handed out, want %d", len(taken), jobs)
	}
	for id, n := range taken {
		if n != 1 {
			t.Errorf("job %d handed out %d times", id, n)
		}
	}
	j, err := b.HubJob(ctx, 1)
	if err != nil || j.State != "sent" || j.Username != "noc" {
		t.Fatalf("HubJob = %+v, %v", j, err)
	}
	done, err := b.FinishHubJob(ctx, site, j.ID, 200, []byte(`{"success":true}`), 0)
	if err != nil || !done {
		t.Fatalf("FinishHubJob = %v, %v", done, err)
	}
	if j, err = a.HubJob(ctx, j.ID); err != nil || j.State != "done" || j.Status != 200 || string(j.Answer) != `{"success":true}` {
		t.Fatalf("the job answered: %+v, %v", j, err)
	}
}
