package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fieldkit/store"
)

// common are the flags every command takes.
type common struct {
	config, data string
}

func newFlags(name string, e env) (*flag.FlagSet, *common) {
	fs := flag.NewFlagSet("fieldkit "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	c := &common{}
	fs.StringVar(&c.config, "config", "", "YAML config file (also FIELDKIT_CONFIG)")
	fs.StringVar(&c.data, "data", "", "data directory (default $FIELDKIT_DATA, else ./fieldkit-data)")
	return fs, c
}

// parseArgs parses flags wherever they stand among the positional arguments, so that
// "user create alice --superuser" works as well as "user create --superuser alice".
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
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

// openStore opens the database in the data directory, creating the directory.
func openStore(ctx context.Context, cfg Config) (*store.DB, error) {
	if err := os.MkdirAll(cfg.Server.Data, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	return store.Open(ctx, filepath.Join(cfg.Server.Data, "fieldkit.db"))
}

func cmdUser(ctx context.Context, e env, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New("usage: fieldkit user create USERNAME [--superuser] [--password-stdin] [--group NAME]...")
	}
	fs, c := newFlags("user create", e)
	super := fs.Bool("superuser", false, "make the user a superuser")
	pwStdin := fs.Bool("password-stdin", false, "read the password from the first line of stdin")
	var groups multiFlag
	fs.Var(&groups, "group", "add the user to this group (created if missing); repeatable")
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return errors.New("usage: fieldkit user create USERNAME [--superuser] [--password-stdin] [--group NAME]...")
	}
	cfg, err := c.load(e, nil)
	if err != nil {
		return err
	}
	password, generated := "", false
	if *pwStdin {
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
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	gids, err := ensureGroups(ctx, db, groups)
	if err != nil {
		return err
	}
	name := pos[0]
	if _, err := db.CreateUser(ctx, store.UserInput{Username: &name, Password: &password, IsSuperuser: super, Groups: &gids}, store.All); err != nil {
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

func cmdToken(ctx context.Context, e env, args []string) error {
	const u = "usage: fieldkit token create USERNAME [--read-only] [--expires DURATION] [--description TEXT]"
	if len(args) == 0 || args[0] != "create" {
		return errors.New(u)
	}
	fs, c := newFlags("token create", e)
	ro := fs.Bool("read-only", false, "the token may only read")
	expires := fs.Duration("expires", 0, "lifetime, e.g. 720h (default: never expires)")
	desc := fs.String("description", "", "what the token is for")
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(u)
	}
	if *expires < 0 {
		return errors.New("--expires must be positive")
	}
	cfg, err := c.load(e, nil)
	if err != nil {
		return err
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	uid, err := db.UserIDByName(ctx, pos[0])
	if err != nil {
		return fmt.Errorf("no user %q", pos[0])
	}
	in := store.TokenInput{UserID: uid, Description: *desc, WriteEnabled: !*ro}
	if *expires > 0 {
		in.Expires = time.Now().Add(*expires)
	}
	_, key, err := db.CreateToken(ctx, in, store.All)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, key)
	return nil
}

func cmdBackup(ctx context.Context, e env, args []string) error {
	fs, c := newFlags("backup", e)
	out := fs.String("output", "", "file to write the copy to (must not exist)")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("usage: fieldkit backup --output FILE")
	}
	if _, err := os.Stat(*out); err == nil {
		return fmt.Errorf("%s already exists", *out)
	}
	cfg, err := c.load(e, nil)
	if err != nil {
		return err
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Backup(ctx, *out); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "backup written to %s\n", *out)
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

func newLogger(cfg Config, w io.Writer) *slog.Logger {
	level, _ := parseLevel(cfg.Log.Level)
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// validSchedule accepts "", "hourly" and "daily HH:MM".
func validSchedule(s string) error {
	_, err := store.ParseSchedule(s)
	return err
}
