package pgtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Cluster is a PostgreSQL server of a test's own, which the test may stop and start
// (the shared one of FIELDKIT_TEST_PG_DSN serves other tests meanwhile): initdb and
// pg_ctl of Debian's postgresql-15 (or FIELDKIT_TEST_PG_BIN) on a loopback port, its
// files in a temporary directory, stopped and removed when the test ends.
type Cluster struct {
	// DSN connects to its database postgres as the superuser postgres (trusted: the
	// server listens on 127.0.0.1 alone, for this test).
	DSN        string
	bin, dir   string
	port       int
	asPostgres bool // run its programs as the user postgres (initdb refuses root)
}

// defaultBin is where Debian's postgresql-15 puts initdb and pg_ctl.
const defaultBin = "/usr/lib/postgresql/15/bin"

// NewCluster makes and starts a cluster for t. Without initdb it skips, saying how to
// get it, and fails under CI=true.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	bin := os.Getenv("FIELDKIT_TEST_PG_BIN")
	if bin == "" {
		bin = defaultBin
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		msg := fmt.Sprintf("no initdb in %s: a test that restarts PostgreSQL runs a cluster of its own; "+
			"install Debian's postgresql-15 (bash .ci/peers.sh install) or set FIELDKIT_TEST_PG_BIN", bin)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	c := &Cluster{bin: bin, asPostgres: os.Geteuid() == 0}
	dir, err := os.MkdirTemp("", "fk-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() {
		c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	})
	if c.asPostgres {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("pgtest: running as root, initdb needs the user postgres: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if out, err := c.run("initdb", "-D", c.data(), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8"); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	c.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// run runs one of PostgreSQL's programs, as the user postgres when this is root.
func (c *Cluster) run(program string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, program)
	cmd := exec.Command(path, args...)
	if c.asPostgres {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	cmd.Dir = c.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// start starts the server and waits until it takes connections.
func (c *Cluster) start() error {
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off -c max_connections=100", c.port, c.dir)
	if out, err := c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "postgres.log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
		return fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// Restart stops the server the way an operator's restart does (pg_ctl -m fast: the
// transactions under way are rolled back, every connection is closed), waits pause,
// and starts it again. It may run beside the test's goroutine: it reports, never fails t.
func (c *Cluster) Restart(pause time.Duration) error {
	if out, err := c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out)
	}
	time.Sleep(pause)
	return c.start()
}
