// Package pgtest gives tests a PostgreSQL database of their own: a schema made for the
// test in the server FIELDKIT_TEST_PG_DSN names (.ci/peers.sh starts one), dropped when
// the test ends. Without the variable a test skips, and fails under CI=true.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to make and drop the schema
)

var made atomic.Int64

// DSN is a connection string to a new, empty schema (the search_path of every
// connection made with it), dropped with everything in it when t ends.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("FIELDKIT_TEST_PG_DSN")
	if base == "" {
		msg := "FIELDKIT_TEST_PG_DSN is not set: no PostgreSQL for the hub's store; start one with: " +
			"bash .ci/peers.sh start; source <(bash .ci/peers.sh env)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	schema := fmt.Sprintf("fk_test_%d_%d", os.Getpid(), made.Add(1))
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE; CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("pgtest: make schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		d, err := sql.Open("pgx", base)
		if err != nil {
			t.Error(err)
			return
		}
		defer d.Close()
		if _, err := d.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	return WithSearchPath(t, base, schema)
}

// WithSearchPath is dsn with its connections' search_path set to schema.
func WithSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("pgtest: FIELDKIT_TEST_PG_DSN: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}
