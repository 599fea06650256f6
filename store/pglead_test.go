package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"fieldkit/store/pgtest"
)

// Of two hub processes on one database, one runs the schedules: the other never does
// while the first holds the lock, and takes over once the first's lock connection is
// cut (as a restart of PostgreSQL or the first's death cuts it).
func TestPostgresLeading(t *testing.T) {
	dsn := pgtest.DSN(t)
	dbs := map[string]*DB{"a": openPG(t, dsn), "b": openPG(t, dsn)}
	ctx, cancel := context.WithCancel(context.Background())
	leads, ends := make(chan string, 10), make(chan string, 10)
	var wg sync.WaitGroup
	for name, db := range dbs {
		wg.Go(func() {
			db.Leading(ctx, LockSchedules, 50*time.Millisecond, func(ctx context.Context) {
				leads <- name
				<-ctx.Done()
				ends <- name
			})
		})
	}
	defer func() { cancel(); wg.Wait() }()
	wait := func(what string, ch chan string) string {
		t.Helper()
		select {
		case name := <-ch:
			return name
		case <-time.After(10 * time.Second):
			t.Fatalf("after 10 s: %s", what)
			return ""
		}
	}
	first := wait("a process leads", leads)
	select {
	case l := <-leads:
		t.Fatalf("%s leads beside %s", l, first)
	case <-time.After(time.Second):
	}
	var cut int
	if err := dbs[first].w.QueryRowContext(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND classid = ? AND objsubid = 2
		AND objid::int8 = (hashtext(current_schema())::int8 + 4294967296) % 4294967296`, LockSchedules).Scan(&cut); err != nil || cut != 1 {
		t.Fatalf("the leader's lock connection cut: %d, %v", cut, err)
	}
	if ended := wait("the leader stops once its lock is gone", ends); ended != first {
		t.Fatalf("%s stopped, not the leader %s", ended, first)
	}
	wait("a process leads again", leads) // either: the first may take the lock back first
	select {
	case l := <-leads:
		t.Fatalf("a second leader, %s", l)
	case <-time.After(time.Second):
	}
}
