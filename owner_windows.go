package main

import "os"

// fileOwner is unknown on Windows, where services run as LocalSystem.
func fileOwner(os.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// isJournal is false on Windows, which has no journal.
func isJournal(*os.File, string) bool { return false }
