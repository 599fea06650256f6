//go:build !windows

package store

// readerMapSize is the most of the database file each reader maps (mmap_size): 2 GB,
// the most SQLite maps. See dsn.
const readerMapSize = 2147418112
