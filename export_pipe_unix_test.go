//go:build !windows

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fieldkit/store"
)

// An export whose --output is not a plain file (a named pipe here; /dev/null or
// /dev/stdout the same) is written into it. Writing it beside and renaming it over the
// name, as for a file, replaced such a device with a plain file: run as root,
// `--output /dev/null` left the machine without its /dev/null.
func TestExportIntoPipeKeepsThePipe(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(data, "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	if err := db.InsertLogs(ctx, []store.Values{{"command_name": "show clock", "command_type": "show", "device_name": "sw1",
		"username": "alice", "success": true, "execution_time": at, "created": at}}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	dir := t.TempDir()
	pipe := filepath.Join(dir, "logs.csv")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(pipe) // blocks until the export opens the pipe to write
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if _, _, err := cli(t, map[string]string{"FIELDKIT_DATA": data}, "", "export", "logs", "--output", pipe); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(pipe)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v, %v", fi.Mode(), err)
	}
	if csv := <-got; !strings.HasPrefix(csv, "id,created,") || !strings.Contains(csv, "show clock") {
		t.Fatalf("the reader of the pipe got %q", csv)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files left beside the pipe: %v", entries)
	}
}
