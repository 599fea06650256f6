package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogFileRotates: with log.file the log goes to that file, rotated at
// log.max_size_mb with log.keep old files kept.
func TestLogFileRotates(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "logs", "fieldkit.log")
	cfg, err := loadConfig("", func(string) string { return "" },
		[]string{"FIELDKIT_LOG_FILE=" + file, "FIELDKIT_LOG_MAX_SIZE_MB=1", "FIELDKIT_LOG_KEEP=2"}, map[string]string{"server.data": dir})
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	sink, err := openLog(cfg, env{getenv: func(string) string { return "" }, stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 1000)
	for i := 0; i < 5000; i++ { // about 5 MB
		sink.logger.Info("filler", "i", i, "pad", line)
	}
	sink.Close()
	// old files are removed in the background after a rotation
	var files []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		files, _ = filepath.Glob(filepath.Join(dir, "logs", "fieldkit*.log"))
		if len(files) <= 3 || time.Now().After(deadline) {
			break
		}
	}
	if len(files) != 3 {
		t.Fatalf("want the current file and 2 rotated ones, got %v", files)
	}
	for _, f := range files {
		if st, _ := os.Stat(f); st.Size() > 1<<20 {
			t.Errorf("%s is %d bytes, over log.max_size_mb", f, st.Size())
		}
	}
	if stderr.Len() != 0 {
		t.Fatalf("with log.file nothing goes to stderr: %q", stderr.String())
	}
}

// TestLogDestination: log.file wins; systemd (whose journal takes stderr), a terminal
// and a container get stderr; a SysV or Windows service logs to <data>/fieldkit.log.
func TestLogDestination(t *testing.T) {
	journal := map[string]string{"JOURNAL_STREAM": "8:1234"}
	cases := []struct {
		name        string
		file        string
		env         map[string]string
		interactive bool
		want        string
	}{
		{"log.file as a service", "/var/log/fk.log", journal, false, "/var/log/fk.log"},
		{"log.file in a terminal", "/var/log/fk.log", nil, true, "/var/log/fk.log"},
		{"systemd", "", journal, false, ""},
		{"windows service", "", nil, false, filepath.Join("/data", "fieldkit.log")},
		{"sysv", "", map[string]string{"FIELDKIT_SERVICE": "sysv"}, true, filepath.Join("/data", "fieldkit.log")},
		{"terminal", "", nil, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := defaults()
			cfg.Server.Data, cfg.Log.File = "/data", c.file
			got := logFile(cfg, func(k string) string { return c.env[k] }, c.interactive)
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}
