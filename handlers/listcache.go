package handlers

import (
	"fmt"
	"net/http"
	"sync"

	"fieldkit/store"
	"fieldkit/web"
)

// listCache keeps rendered list pages of resources that change rarely (commands are read
// far more often than written). An entry is keyed by everything the body depends on:
// scheme and host (absolute URLs), path and query, and the caller's permission scope
// (so two users with different constraints never share a page). It is valid only for
// the store generation it was rendered at (store.DB.Snapshot): any committed change, by
// this process or another on the same database, empties it.
type listCache struct {
	mu      sync.Mutex
	gen     int64
	entries map[string][]byte
}

const listCacheMax = 512

func cacheKey(r *http.Request, scope store.Scope) string {
	return fmt.Sprintf("%s|%s|%s|%s|%v", web.Scheme(r), r.Host, r.URL.RequestURI(), scope.Expr.SQL, scope.Expr.Args)
}

func (c *listCache) get(key string, gen int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return nil, false
	}
	b, ok := c.entries[key]
	return b, ok
}

func (c *listCache) put(key string, gen int64, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen < c.gen {
		return // rendered at an older generation: already stale
	}
	if c.gen != gen || c.entries == nil || len(c.entries) >= listCacheMax {
		c.gen, c.entries = gen, map[string][]byte{}
	}
	c.entries[key] = body
}
