package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fieldkit/store"
)

// common are the flags every command but version and completion takes.
type common struct {
	config, data string
}

// config loads the configuration for a command; extra holds flag-set settings.
func (c *common) load(e env, extra map[string]string) (Config, error) {
	if extra == nil {
		extra = map[string]string{}
	}
	if c.data != "" {
		extra["server.data"] = c.data
	}
	file := c.config
	if file == "" {
		file = e.getenv("FIELDKIT_CONFIG")
	}
	return loadConfig(file, e.getenv, e.environ, extra)
}

// openStore opens the database in the data directory, creating the directory. A long
// migration reports its progress to logger.
func openStore(ctx context.Context, cfg Config, logger *slog.Logger) (*store.DB, error) {
	if err := os.MkdirAll(cfg.Server.Data, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	return store.Open(ctx, filepath.Join(cfg.Server.Data, "fieldkit.db"), store.Logger(logger))
}

// cliLogger is where a command other than serve reports a long migration: stderr.
func cliLogger(cfg Config, e env) *slog.Logger {
	return newLogger(cfg.Log.Format, slog.LevelInfo, e.stderr, false)
}

// open loads the configuration and opens its database: the start of every command
// that works on the data directory alone. The caller closes the store.
func (c *common) open(ctx context.Context, e env) (*store.DB, error) {
	cfg, err := c.load(e, nil)
	if err != nil {
		return nil, err
	}
	return openStore(ctx, cfg, cliLogger(cfg, e))
}

func cmdUserCreate(ctx context.Context, e env, o *opts) error {
	if strings.TrimSpace(o.args[0]) == "" {
		return &usageError{msg: "fieldkit user create: empty USERNAME", help: "user create"}
	}
	cfg, err := o.load(e, nil)
	if err != nil {
		return err
	}
	password, generated := "", false
	if o.passwordStdin {
		line, err := bufio.NewReader(e.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read password: %w", err)
		}
		password = strings.TrimRight(line, "\r\n")
		if password == "" {
			return errors.New("empty password on stdin")
		}
	} else {
		password, generated = randomPassword(), true
	}
	db, err := openStore(ctx, cfg, cliLogger(cfg, e))
	if err != nil {
		return err
	}
	defer db.Close()
	gids, err := ensureGroups(ctx, db, o.groups)
	if err != nil {
		return err
	}
	name := o.args[0]
	if _, err := db.CreateUser(ctx, store.UserInput{Username: &name, Password: &password, IsSuperuser: &o.superuser, Groups: &gids}, store.All); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("user %q already exists", name)
		}
		return err
	}
	fmt.Fprintf(e.stderr, "created user %s\n", name)
	if generated {
		fmt.Fprintf(e.stdout, "%s\n", password)
		fmt.Fprintln(e.stderr, "(the line above is the generated password; it is not shown again)")
	}
	return nil
}

func ensureGroups(ctx context.Context, db *store.DB, names []string) ([]int64, error) {
	ids := []int64{}
	for _, n := range names {
		id, err := db.GroupIDByName(ctx, n)
		if errors.Is(err, store.ErrNotFound) {
			id, err = db.CreateGroup(ctx, n, store.All)
		}
		if err != nil {
			return nil, fmt.Errorf("group %q: %w", n, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func cmdTokenCreate(ctx context.Context, e env, o *opts) error {
	if o.expires < 0 {
		return &usageError{msg: "fieldkit token create: --expires must be positive", help: "token create"}
	}
	db, err := o.open(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	uid, err := db.UserIDByName(ctx, o.args[0])
	if err != nil {
		return fmt.Errorf("no user %q", o.args[0])
	}
	in := store.TokenInput{UserID: uid, Description: o.description, WriteEnabled: !o.readOnly}
	if o.expires > 0 {
		in.Expires = time.Now().Add(o.expires)
	}
	_, key, err := db.CreateToken(ctx, in, store.All)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, key)
	return nil
}

func cmdBackup(ctx context.Context, e env, o *opts) error {
	if o.output == "" {
		return &usageError{msg: "fieldkit backup: --output FILE is required", help: "backup"}
	}
	if _, err := os.Stat(o.output); err == nil {
		return fmt.Errorf("%s already exists", o.output)
	}
	db, err := o.open(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Backup(ctx, o.output); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "backup written to %s\n", o.output)
	return nil
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func randomPassword() string {
	b := make([]byte, 15)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, fmt.Errorf("%q is not debug, info, warn or error", s)
	}
	return l, nil
}

// validSchedule accepts "", "hourly" and "daily HH:MM".
func validSchedule(s string) error {
	_, err := store.ParseSchedule(s)
	return err
}
