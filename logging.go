package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/kardianos/service"
	"gopkg.in/natefinch/lumberjack.v2"
)

// logSink is the server's log: its logger, its level (changeable on reload) and what
// to close at exit.
type logSink struct {
	logger *slog.Logger
	level  *slog.LevelVar
	file   *lumberjack.Logger // nil when logging to stderr
}

// Close closes the log file, if any.
func (l *logSink) Close() error {
	if l.file == nil {
		return nil
	}
	return l.file.Close()
}

// logFile is where the log goes: log.file if set; <data>/fieldkit.log for a service
// whose stderr reaches no log (SysV, Windows); else "" for stderr (a terminal, the
// systemd journal, a container's log).
// interactive is false under a service manager (systemd, the Windows SCM).
func logFile(cfg Config, getenv func(string) string, interactive bool) string {
	if cfg.Log.File != "" {
		return cfg.Log.File
	}
	if getenv("FIELDKIT_SERVICE") == "sysv" || (!interactive && getenv("JOURNAL_STREAM") == "") {
		return filepath.Join(cfg.Server.Data, "fieldkit.log")
	}
	return ""
}

// openLog opens the log. A file is rotated by size (log.max_size_mb, log.keep).
func openLog(cfg Config, e env) (*logSink, error) {
	sink := &logSink{level: new(slog.LevelVar)}
	level, _ := parseLevel(cfg.Log.Level)
	sink.level.Set(level)
	var w io.Writer = e.stderr
	if path := logFile(cfg, e.getenv, service.Interactive()); path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("log file: %w", err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
		if err != nil {
			return nil, fmt.Errorf("log file: %w", err) // said now, not lost in a later rotation
		}
		f.Close()
		sink.file = &lumberjack.Logger{Filename: path, MaxSize: cfg.Log.MaxSizeMB, MaxBackups: cfg.Log.Keep}
		w = sink.file
	} else if f, ok := e.stderr.(*os.File); ok && isJournal(f, e.getenv("JOURNAL_STREAM")) {
		sink.logger = newLogger(cfg.Log.Format, sink.level, &journalWriter{w: w}, true)
		return sink, nil
	}
	sink.logger = newLogger(cfg.Log.Format, sink.level, w, false)
	return sink, nil
}

// newLogger makes the text or JSON logger. For the journal, which stamps every line
// itself, the time is left out.
func newLogger(format string, level slog.Leveler, w io.Writer, journal bool) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if journal {
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}
	}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// journalWriter prefixes each log line with its syslog priority ("<4>" for a warning),
// which journald reads as the entry's priority: `journalctl -u fieldkit -p warning`
// then shows the security events and errors alone. slog writes a record in one Write.
type journalWriter struct{ w io.Writer }

func (j *journalWriter) Write(p []byte) (int, error) {
	prio := byte('6')
	switch {
	case bytes.Contains(p, []byte("level=ERROR")), bytes.Contains(p, []byte(`"level":"ERROR"`)):
		prio = '3'
	case bytes.Contains(p, []byte("level=WARN")), bytes.Contains(p, []byte(`"level":"WARN"`)):
		prio = '4'
	case bytes.Contains(p, []byte("level=DEBUG")), bytes.Contains(p, []byte(`"level":"DEBUG"`)):
		prio = '7'
	}
	if _, err := j.w.Write(append([]byte{'<', prio, '>'}, p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}
