package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"fieldkit/store"
	"fieldkit/store/pgtest"
)

// A hub whose store is PostgreSQL (store.driver: postgres): its sites are added,
// listed, given a new token and revoked by the same commands, in PostgreSQL, with no
// data directory's database made; the server says it does not run there yet.
func TestHubSitesOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	data := t.TempDir()
	env := map[string]string{"FIELDKIT_HUB_SERVE": "true", "FIELDKIT_STORE_DRIVER": "postgres", "FIELDKIT_STORE_DSN": dsn,
		"FIELDKIT_DATA": data}
	token, stderr, err := cli(t, env, "", "hub", "site", "add", "Paris 1", "--description", "the first")
	token = strings.TrimSpace(token)
	if err != nil || !strings.HasPrefix(token, store.HubSiteTokenPrefix) {
		t.Fatalf("hub site add: %q, %q, %v", token, stderr, err)
	}
	if _, _, err := cli(t, env, "", "hub", "site", "add", "Paris 1"); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("a second site of one name: %v", err)
	}
	out, _, err := cli(t, env, "", "hub", "site", "list")
	if err != nil || !strings.Contains(out, "Paris 1") || !strings.Contains(out, "never") {
		t.Fatalf("hub site list: %q, %v", out, err)
	}
	db, err := store.OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if s, err := db.HubSiteByToken(context.Background(), token); err != nil || s.Name != "Paris 1" {
		t.Fatalf("the token in PostgreSQL: %+v, %v", s, err)
	}
	token2, _, err := cli(t, env, "", "hub", "site", "token", "Paris 1")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := db.HubSiteByToken(context.Background(), strings.TrimSpace(token2)); err != nil || s.Name != "Paris 1" {
		t.Fatalf("the new token in PostgreSQL: %+v, %v", s, err)
	}
	if _, _, err := cli(t, env, "", "hub", "site", "revoke", "Paris 1"); err != nil {
		t.Fatal(err)
	}
	if out, _, err = cli(t, env, "", "hub", "site", "list"); err != nil || !strings.Contains(out, "revoked") {
		t.Fatalf("hub site list after the revoke: %q, %v", out, err)
	}
	if _, _, err := cli(t, env, "", "hub", "site", "revoke", "Lyon"); err == nil || !strings.Contains(err.Error(), `no site "Lyon"`) {
		t.Fatalf("revoking no site: %v", err)
	}
	if _, _, err := cli(t, env, "", "serve"); err == nil || !strings.Contains(err.Error(), "does not run on PostgreSQL yet") {
		t.Fatalf("serve on PostgreSQL: %v", err)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Fatalf("the data directory holds %v: a hub on PostgreSQL makes no SQLite file", entries)
	}
}

// The store settings are checked: each message names its key and never quotes the DSN.
func TestStoreSettings(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"FIELDKIT_STORE_DRIVER": "mysql"}, `store.driver: "mysql" is not sqlite or postgres`},
		{map[string]string{"FIELDKIT_STORE_DRIVER": "postgres", "FIELDKIT_HUB_SERVE": "true"}, "store.dsn: needed with store.driver postgres"},
		{map[string]string{"FIELDKIT_STORE_DRIVER": "postgres", "FIELDKIT_STORE_DSN": "postgres://u:s3cret@db/x"},
			"store.driver: postgres is a hub's store"},
		{map[string]string{"FIELDKIT_STORE_DRIVER": "postgres", "FIELDKIT_HUB_SERVE": "true", "FIELDKIT_STORE_DSN": "postgres://u:s3cret@db:port/x"},
			"store.dsn: not a PostgreSQL connection string"},
	} {
		env := tc.env
		env["FIELDKIT_DATA"] = t.TempDir()
		_, _, err := cli(t, env, "", "hub", "site", "list")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v: %v, want %q (and never the DSN)", tc.env, err, tc.want)
		}
	}
}
