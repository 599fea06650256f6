package store

// readerMapSize is 0 on Windows: the readers read the file through the page cache. A
// file mapped there cannot be shortened while mapped, and mapping has not been measured
// or tested on Windows here; FieldKit never shortens its file, but an unmeasured change
// to how every read works is not made blind. See dsn.
const readerMapSize = 0
