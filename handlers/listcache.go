package handlers

import (
	"fmt"
	"net/http"
	"sync"

	"fieldkit/store"
	"fieldkit/web"
)

// listCache keeps rendered list pages of resources read far more often than written
// (commands; the pages of command logs a dashboard polls). An entry is keyed by
// everything the body depends on: scheme and host (absolute URLs), path and query, and
// the caller's permission scope (so two users with different constraints never share a
// page). It is valid only for the database version it was rendered at (store.DB.Changes):
// any write committed to the file, a log's insert or another process's write included,
// empties it.
type listCache struct {
	mu      sync.Mutex
	version int64
	size    int // bytes held
	entries map[string][]byte
	off     bool // benchmarks measure the pages uncached
}

// The cache holds at most listCacheMax pages and listCacheBytes bytes; a page larger
// than listCachePage (a thousand logs with their output) is not kept.
const (
	listCacheMax   = 512
	listCacheBytes = 32 << 20
	listCachePage  = 1 << 20
)

func cacheKey(r *http.Request, scope store.Scope) string {
	return fmt.Sprintf("%s|%s|%s|%s|%v", web.Scheme(r), r.Host, r.URL.RequestURI(), scope.Expr.SQL, scope.Expr.Args)
}

func (c *listCache) get(key string, version int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != version || c.off {
		return nil, false
	}
	b, ok := c.entries[key]
	return b, ok
}

func (c *listCache) put(key string, version int64, body []byte) {
	if len(body) > listCachePage {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if version < c.version {
		return // rendered at an older version: already stale
	}
	if c.version != version || c.entries == nil || len(c.entries) >= listCacheMax || c.size+len(body) > listCacheBytes {
		c.version, c.entries, c.size = version, map[string][]byte{}, 0
	}
	if old, ok := c.entries[key]; ok {
		c.size -= len(old)
	}
	c.entries[key] = body
	c.size += len(body)
}
