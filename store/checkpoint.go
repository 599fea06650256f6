package store

import (
	"database/sql"
	"sync"
)

// checkpointEvery is how many committed logs wake the checkpointer: at about 25 pages
// of WAL a log, a checkpoint about as often as SQLite's own at 1,000 pages.
const checkpointEvery = 32

// checkpointer copies the write-ahead log back into the database file on a connection
// of its own, after logs are committed. SQLite does that in the committing connection
// once the WAL passes 1,000 pages: the execute whose log crossed it waited for the copy
// and its fsyncs, and so did every log queued behind it for the writer. A passive
// checkpoint here blocks neither the writer nor readers. The writer keeps SQLite's own
// threshold as a backstop for other writes and for a checkpointer that falls behind;
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
