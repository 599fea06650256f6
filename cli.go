package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
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

// openStore opens the database in the data directory, creating the directory, or a
// hub's in PostgreSQL (store.driver). A long migration reports its progress to logger.
func openStore(ctx context.Context, cfg Config, logger *slog.Logger) (*store.DB, error) {
	if cfg.Store.Driver == "postgres" {
		return store.OpenPostgres(ctx, cfg.Store.DSN, store.Logger(logger))
	}
	if err := os.MkdirAll(cfg.Server.Data, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	return store.Open(ctx, filepath.Join(cfg.Server.Data, "fieldkit.db"), store.Logger(logger))
}

// dbFile is the database of a data directory.
func dbFile(data string) string { return filepath.Join(data, "fieldkit.db") }

// noDatabaseError is a command that reads data run on a data directory without a
// database: it names the path it looked at, where that path came from and how to name
// another, instead of creating an empty database and answering from it.
type noDatabaseError struct {
	path, origin string
	init         bool // the command can make one (user create --init)
}

func (n *noDatabaseError) Error() string {
	msg := fmt.Sprintf("no FieldKit database at %s (%s): name the server's data directory with --data DIR or FIELDKIT_DATA=DIR, or give its --config FILE",
		n.path, n.origin)
	if n.init {
		return msg + "; to start a new install there, add --init"
	}
	return msg + "; a new install gets its database from fieldkit serve or fieldkit user create --init"
}

// dataOrigin says where the data directory came from, for a message.
func (c *common) dataOrigin(e env, cfg Config) string {
	switch {
	case c.data != "":
		return "the data directory given by --data"
	case e.getenv("FIELDKIT_DATA") != "":
		return "the data directory given by FIELDKIT_DATA"
	case e.getenv("FIELDKIT_SERVER_DATA") != "":
		return "the data directory given by FIELDKIT_SERVER_DATA"
	case cfg.Server.Data != defaults().Server.Data:
		return "the data directory given by server.data in the configuration file"
	}
	return "the default data directory, ./fieldkit-data in the current directory"
}

// existing checks that the data directory has a database, before anything is made. A
// hub's PostgreSQL database is made by its first opening, as a new file is by serve.
func (c *common) existing(e env, cfg Config) error {
	if cfg.Store.Driver == "postgres" {
		return nil
	}
	path := dbFile(cfg.Server.Data)
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("database: %w", err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &noDatabaseError{path: path, origin: c.dataOrigin(e, cfg)}
}

// cliLogger is where a command other than serve reports a long migration: stderr.
func cliLogger(cfg Config, e env) *slog.Logger {
	return newLogger(cfg.Log.Format, slog.LevelInfo, e.stderr, false)
}

// open loads the configuration and opens its database, which must exist: the start of
// every command that works on the data directory alone. The caller closes the store.
func (c *common) open(ctx context.Context, e env) (*store.DB, error) {
	cfg, err := c.load(e, nil)
	if err != nil {
		return nil, err
	}
	return c.openExisting(ctx, e, cfg)
}

// openExisting opens the data directory's database, refusing one that has none.
func (c *common) openExisting(ctx context.Context, e env, cfg Config) (*store.DB, error) {
	if err := c.existing(e, cfg); err != nil {
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
	if !o.init {
		var nd *noDatabaseError
		if err := o.existing(e, cfg); errors.As(err, &nd) {
			nd.init = true
			return nd
		} else if err != nil {
			return err
		}
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
		in.Expires = time.Now().Add(time.Duration(o.expires))
	}
	_, key, err := db.CreateToken(ctx, in, store.All)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, key)
	return nil
}

// lifetime is a token's --expires: days and weeks besides Go's hours, minutes and
// seconds, since a token's life is counted in days ("30d", "2w", "1d12h", "720h").
type lifetime time.Duration

// lifetimeForms names the accepted forms in every refusal.
const lifetimeForms = "use days (30d), weeks (2w), hours (12h), minutes (90m) or a mix such as 1d12h"

var lifetimeUnits = map[string]time.Duration{"w": 7 * 24 * time.Hour, "d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second}

func (l *lifetime) String() string {
	if l == nil || *l == 0 {
		return ""
	}
	return time.Duration(*l).String()
}

// Set parses a run of <whole number><unit> parts, units w, d, h, m and s; anything
// else is refused with the forms it takes.
func (l *lifetime) Set(s string) error {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return fmt.Errorf("empty lifetime: %s", lifetimeForms)
	}
	var total time.Duration
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if i <= 0 {
			return fmt.Errorf("%q is not a lifetime: %s", s, lifetimeForms)
		}
		j := i + strings.IndexFunc(rest[i:], func(r rune) bool { return r >= '0' && r <= '9' })
		if j < i {
			j = len(rest)
		}
		unit, ok := lifetimeUnits[rest[i:j]]
		n, err := strconv.ParseInt(rest[:i], 10, 64)
		switch {
		case !ok:
			return fmt.Errorf("%q is not a lifetime (unknown unit %q): %s", s, rest[i:j], lifetimeForms)
		case err != nil || n > int64((time.Duration(1<<63-1)-total)/unit):
			return fmt.Errorf("%q is too long a lifetime: at most about 290 years", s)
		}
		total += time.Duration(n) * unit
		rest = rest[j:]
	}
	if total <= 0 {
		return fmt.Errorf("%q is not a lifetime: it must be longer than zero; %s", s, lifetimeForms)
	}
	*l = lifetime(total)
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
