package store

import (
	"database/sql"
	"sync"
)

// checkpointEvery is how many committed logs wake the checkpointer: at about 29 pages
// of WAL a log, about 3,700 pages (15 MB) of WAL between checkpoints. A checkpoint
// costs two fsyncs whatever it copies, each about half a millisecond of this process's
// CPU, and the pages it copies are far fewer than the frames written, since successive
// logs change the same counter rows and index leaves. Every 32 logs, checkpoints were
// about 4 % of a warm execute's CPU.
const checkpointEvery = 128

// walBackstop is the WAL size, in pages, at which the writer checkpoints on its own
// (SQLite's wal_autocheckpoint, 1,000 by default): above what the checkpointer lets
// the WAL reach, so that a commit checkpoints only for writes other than logs (an
// import) or when the checkpointer falls behind. At 1,000 a busy writer passed it
// between two of the checkpointer's runs, and the execute whose commit did paid for
// the checkpoint and its fsyncs.
const walBackstop = 8192

// checkpointer copies the write-ahead log back into the database file on a connection
// of its own, after logs are committed. SQLite does that in the committing connection
// once the WAL passes its threshold: the execute whose log crossed it waited for the copy
// and its fsyncs, and so did every log queued behind it for the writer. A passive
// checkpoint here blocks neither the writer nor readers. The writer keeps SQLite's own
// threshold, raised to walBackstop, for other writes and a checkpointer that falls behind;
// a commit is never made to wait for a checkpoint, and is durable as before once
// committed to the WAL.
type checkpointer struct {
	conn    *sql.DB
	mu      sync.Mutex
	pending int           // logs committed since the last wake
	wake    chan struct{} // one waiting signal at most
	stop    chan struct{}
	done    chan struct{}
	closed  sync.Once
}

func startCheckpointer(conn *sql.DB) *checkpointer {
	conn.SetMaxOpenConns(1)
	c := &checkpointer{conn: conn, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// committed counts n logs committed, waking the checkpointer every checkpointEvery.
func (c *checkpointer) committed(n int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.pending += n
	due := c.pending >= checkpointEvery
	if due {
		c.pending = 0
	}
	c.mu.Unlock()
	if due {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
			// A checkpoint that fails (a busy lock) leaves the pages for the next one
			// or the writer's own.
			c.conn.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}
}

// close stops the checkpointer and closes its connection; closing again does nothing,
// as DB.Close may be called twice.
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	var err error
	c.closed.Do(func() {
		close(c.stop)
		<-c.done
		err = c.conn.Close()
	})
	return err
}
