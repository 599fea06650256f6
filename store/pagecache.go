package store

import (
	"fmt"
	"runtime"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's page caches take their pages from one pool of slots, made once for the
// process (SQLITE_CONFIG_PAGECACHE), rather than from malloc a page at a time.
//
// A commit empties every reader's page cache at that reader's next statement (SQLite
// cannot tell which pages changed). Each of up to 8,000 pages was then handed back to
// the C allocator, whose emptied 64 KB regions go back to the OS one system call each,
// and allocated again as the next statement read its pages. On a site that logs
// between every two pages, that churn was most of a slow page: at five million logs,
// the duration-ordered first pages took 70-114 ms after a write (2-20 ms without one),
// 20 ms of it in the first statement emptying the cache. From the pool, a page is
// handed back and taken again from a free list. When the pool runs low, a cache takes
// the least recently used page of any connection instead of allocating one, so the
// pool is also the most memory the caches hold together.
const (
	// pageSlotsPerReader sizes the pool: 1,024 slots (4.4 MB) per reader connection,
	// 4,096 on two cores. 4,096 and 8,192 measured alike on two cores.
	pageSlotsPerReader = 1024
	pageSlotsMax       = 16384
	// poolPageSize is the page size the slots fit: SQLite's default, which every
	// file this program makes has. A file with larger pages takes them from malloc.
	poolPageSize = 4096
)

// pagePoolErr is why the pool is not installed, nil when it is.
var pagePoolErr = installPagePool(min(pageSlotsPerReader*readerConns(), pageSlotsMax))

// readerConns is how many connections the readers' pool keeps.
func readerConns() int { return max(4, 2*runtime.NumCPU()) }

// installPagePool gives SQLite a pool of n page slots. It must run before the first
// connection is opened (SQLite refuses it after), which a package variable's
// initialiser does. The pool's memory is reserved here and written when SQLite
// starts, at the first connection; it lives as long as the process.
func installPagePool(n int) error {
	tls := libc.NewTLS()
	defer tls.Close()
	args := libc.Xmalloc(tls, 3*8)
	if args == 0 {
		return fmt.Errorf("store: page cache pool: out of memory")
	}
	defer libc.Xfree(tls, args)
	hdr := new(int32)
	rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PCACHE_HDRSZ, libc.VaList(args, uintptr(unsafe.Pointer(hdr))))
	runtime.KeepAlive(hdr)
	if rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("store: page cache pool: header size: code %d", rc)
	}
	slot := (poolPageSize + int(*hdr) + 7) &^ 7
	buf := libc.Xmalloc(tls, types.Size_t(slot*n))
	if buf == 0 {
		return fmt.Errorf("store: page cache pool: out of memory for %d slots", n)
	}
	if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PAGECACHE, libc.VaList(args, buf, int32(slot), int32(n))); rc != sqlite3.SQLITE_OK {
		libc.Xfree(tls, buf)
		return fmt.Errorf("store: page cache pool: code %d", rc)
	}
	return nil
}

// pagePoolUse is how many of the pool's slots hold a page now, and how many bytes of
// pages are held outside it (taken from malloc because the pool had no slot left or
// the page did not fit one).
func pagePoolUse() (slots, overflow int64) {
	tls := libc.NewTLS()
	defer tls.Close()
	cur, high := new(int64), new(int64)
	sqlite3.Xsqlite3_status64(tls, sqlite3.SQLITE_STATUS_PAGECACHE_USED, uintptr(unsafe.Pointer(cur)), uintptr(unsafe.Pointer(high)), 0)
	slots = *cur
	sqlite3.Xsqlite3_status64(tls, sqlite3.SQLITE_STATUS_PAGECACHE_OVERFLOW, uintptr(unsafe.Pointer(cur)), uintptr(unsafe.Pointer(high)), 0)
	overflow = *cur
	runtime.KeepAlive(cur)
	runtime.KeepAlive(high)
	return slots, overflow
}
