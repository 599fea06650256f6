package store

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// stmtCacheMax bounds the statements kept per pool. The store's SQL is built from
// declarations, so the distinct texts are few; one built from a request's filters may
// be new each time and then simply runs unprepared once the cache is full.
const stmtCacheMax = 512

// pool is a database/sql pool that prepares each distinct statement once and reuses it.
// SQLite parses and plans a statement again on every unprepared call, and with the
// dozen small queries of an execution that parsing cost a quarter of its server CPU.
// Only single statements are kept (a text with a ';' inside runs unprepared, since a
// prepared statement runs only its first). Everything else of *sql.DB is as is.
type pool struct {
	*sql.DB
	mu    sync.RWMutex // read-locked by every query: concurrent requests never wait on each other here
	stmts map[string]*sql.Stmt
	full  bool
}

func newPool(db *sql.DB) *pool { return &pool{DB: db, stmts: map[string]*sql.Stmt{}} }

// stmt returns the prepared statement of query, preparing it at its first use; nil when
// it is not to be kept.
func (p *pool) stmt(ctx context.Context, query string) *sql.Stmt {
	p.mu.RLock()
	s, ok := p.stmts[query]
	full := p.full
	p.mu.RUnlock()
	if ok {
		return s
	}
	if full || strings.Contains(strings.TrimRight(strings.TrimSpace(query), ";"), ";") {
		return nil
	}
	s, err := p.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil // the unprepared call reports the error
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.stmts[query]; ok {
		s.Close()
		return old
	}
	if len(p.stmts) >= stmtCacheMax {
		p.full = true
		s.Close()
		return nil
	}
	p.stmts[query] = s
	return s
}

// QueryContext is sql.DB's, with the statement prepared once.
func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext is sql.DB's, with the statement prepared once.
func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.DB.QueryRowContext(ctx, query, args...)
}

// ExecContext is sql.DB's, with the statement prepared once.
func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := p.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return p.DB.ExecContext(ctx, query, args...)
}

// Close closes the kept statements, then the pool.
func (p *pool) Close() error {
	p.mu.Lock()
	for _, s := range p.stmts {
		s.Close()
	}
	p.stmts = map[string]*sql.Stmt{}
	p.mu.Unlock()
	return p.DB.Close()
}

// kept is the statement of query when it was prepared before, nil otherwise. Unlike
// stmt it never prepares one: inside a write transaction, which holds the writer's one
// connection, preparing through the pool would wait for that connection forever.
func (p *pool) kept(query string) *sql.Stmt {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.stmts[query]
}

// txExec runs query in tx, through the writer's statement of it when one was prepared
// before (prepareLogWrites).
func (db *DB) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if s := db.w.kept(query); s != nil {
		return tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// txQueryRow is txExec for a statement that returns a row.
func (db *DB) txQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if s := db.w.kept(query); s != nil {
		return tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}
