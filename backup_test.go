package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldkit/store"
)

// seedInstall makes what a running install leaves: a master key, a user owning three
// credential sets with every kind of secret, and n command logs with outputs. It
// returns each set's id and the secrets it was made with.
func seedInstall(t *testing.T, data string, n int) map[int64]store.CredentialInput {
	t.Helper()
	ctx := context.Background()
	initData(t, data)
	db, err := store.Open(ctx, dbFile(data))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e := env{getenv: func(string) string { return "" }}
	kr, err := loadKeyring(ctx, e, db, data, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	name, pw, super := "alice", "alice-Pa55word", true
	uid, err := db.CreateUser(ctx, store.UserInput{Username: &name, Password: &pw, IsSuperuser: &super}, store.All)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[int64]store.CredentialInput{}
	for i, s := range []struct{ name, user, pass, enable string }{
		{"core switches", "netops", "c0re-pass-1", "en-secret-1"},
		{"lab", "lab", "lab-pass-2", ""},
		{"édge “quoted”", "edge", "edge-pass-3", "en-3"},
	} {
		in := store.CredentialInput{Name: &s.name, Username: &s.user, Password: &s.pass, EnableSecret: &s.enable}
		id, _, err := db.CreateCredentialSet(ctx, kr, uid, in)
		if err != nil {
			t.Fatalf("set %d: %v", i, err)
		}
		sets[id] = in
	}
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for done := 0; done < n; {
		var logs []store.Values
		for i := 0; i < 1000 && done < n; i, done = i+1, done+1 {
			logs = append(logs, store.Values{"command_name": "show version", "command_type": "show", "device_name": "sw1",
				"username": "alice", "success": done%7 != 0, "output": strings.Repeat("line\n", 1+done%50),
				"execution_time": at, "created": at.Add(time.Duration(done) * time.Second)})
		}
		if err := db.InsertLogs(ctx, logs); err != nil {
			t.Fatal(err)
		}
	}
	return sets
}

// TestBackupRestoreRoundTrip: a backup restores on its own. Backed up, the data
// directory wiped, restored: every credential set decrypts to the secrets it was made
// with, every log exports byte for byte as before, and the server's key check passes.
// The archive never holds the key (nor the passphrase) in clear.
func TestBackupRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	sets := seedInstall(t, data, 2500)
	key, _ := os.ReadFile(keyPath(data))
	raw, err := decodeKey(strings.TrimSpace(string(key)))
	if err != nil {
		t.Fatal(err)
	}
	const pass = "field kit backup passphrase"
	env := map[string]string{"FIELDKIT_DATA": data}
	before, _, err := cli(t, env, "", "export", "logs", "--format", "json")
	if err != nil || !strings.Contains(before, `"count": 2500`) && !strings.Contains(before, `"count":2500`) {
		t.Fatalf("export before: %v %.200s", err, before)
	}
	archive := filepath.Join(t.TempDir(), "fieldkit backup.tar")

	// The passphrase is required, long enough, and never taken from the command line.
	if _, _, err := cli(t, env, "", "backup", "--output", archive); err == nil || !strings.Contains(err.Error(), "--passphrase-file FILE (- for stdin) or FIELDKIT_BACKUP_PASSPHRASE") {
		t.Fatalf("no passphrase: %v", err)
	}
	if _, _, err := cli(t, env, "short pass\n", "backup", "--output", archive, "--passphrase-file", "-"); err == nil || !strings.Contains(err.Error(), "at least 12") {
		t.Fatalf("a short passphrase: %v", err)
	}
	if _, err := os.Stat(archive); err == nil {
		t.Fatal("a refused backup wrote its file")
	}
	env["FIELDKIT_BACKUP_PASSPHRASE"] = pass
	if _, stderr, err := cli(t, env, "", "backup", "--output", archive); err != nil {
		t.Fatalf("backup: %v %s", err, stderr)
	}
	if _, _, err := cli(t, env, "", "backup", "--output", archive); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("backup over an existing file: %v", err)
	}
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	for what, secret := range map[string][]byte{"the key in hex": []byte(hex.EncodeToString(raw)), "the key's bytes": raw,
		"the key file's text": bytes.TrimSpace(key), "the passphrase": []byte(pass)} {
		if bytes.Contains(b, secret) {
			t.Errorf("the archive holds %s in clear", what)
		}
	}
	if st, _ := os.Stat(archive); st.Mode().Perm() != 0o600 {
		t.Errorf("the archive is %v, want 0600", st.Mode().Perm())
	}

	// Wipe, then restore with the passphrase on stdin.
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	delete(env, "FIELDKIT_BACKUP_PASSPHRASE")
	if _, _, err := cli(t, env, "not the passphrase\n", "restore", archive, "--passphrase-file", "-"); err == nil || !strings.Contains(err.Error(), "does not open") {
		t.Fatalf("a wrong passphrase: %v", err)
	}
	if _, err := os.Stat(dbFile(data)); err == nil {
		t.Fatal("a refused restore wrote the database")
	}
	_, stderr, err := cli(t, env, pass+"\n", "restore", archive, "--passphrase-file", "-")
	if err != nil {
		t.Fatalf("restore: %v %s", err, stderr)
	}
	if !strings.Contains(stderr, "3 credential sets") || !strings.Contains(stderr, "2500 command logs") {
		t.Errorf("the restore does not say what came back: %s", stderr)
	}
	for _, f := range []string{dbFile(data), keyPath(data)} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v", f, err)
		}
	}
	after, _, err := cli(t, env, "", "export", "logs", "--format", "json")
	if err != nil || after != before {
		t.Fatalf("the logs differ after the restore (%v): %d bytes before, %d after", err, len(before), len(after))
	}
	db, err := store.Open(ctx, dbFile(data))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kr, err := loadKeyring(ctx, envOf(nil), db, data, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("the server's key check after the restore: %v", err)
	}
	uid, err := db.UserIDByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	for id, in := range sets {
		s, err := db.CredentialByID(ctx, kr, uid, id)
		if err != nil {
			t.Fatalf("set %d: %v", id, err)
		}
		if s.Name != *in.Name || s.Username != *in.Username || s.Password != *in.Password || s.EnableSecret != *in.EnableSecret {
			t.Errorf("set %d came back as %q/%q with other secrets", id, s.Name, s.Username)
		}
	}

	// A second restore into the same directory is refused: nothing is overwritten.
	if _, _, err := cli(t, env, pass+"\n", "restore", archive, "--passphrase-file", "-"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("restore over a database: %v", err)
	}
}

// envOf is an env whose variables are vars.
func envOf(vars map[string]string) env {
	return env{getenv: func(k string) string { return vars[k] }, stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
}

// TestRestoreRefusals: a damaged archive, a key file of another install in the way,
// and a database alone (an older FieldKit's backup) with credential sets but no
// --key-file are refused with what to do, and write nothing.
func TestRestoreRefusals(t *testing.T) {
	// The refusals do not depend on scrypt's cost (the round trip uses the real one);
	// under the race detector each 128 MiB derivation takes seconds.
	defer func(n int) { scryptN = n }(scryptN)
	scryptN = 1 << 10
	data := filepath.Join(t.TempDir(), "data")
	seedInstall(t, data, 10)
	const pass = "another long passphrase"
	env := map[string]string{"FIELDKIT_DATA": data, "FIELDKIT_BACKUP_PASSPHRASE": pass}
	archive := filepath.Join(t.TempDir(), "b.tar")
	if _, _, err := cli(t, env, "", "backup", "--output", archive); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "restored")
	renv := map[string]string{"FIELDKIT_DATA": target, "FIELDKIT_BACKUP_PASSPHRASE": pass}

	// One byte of the database changed.
	b, _ := os.ReadFile(archive)
	damaged := filepath.Join(t.TempDir(), "damaged.tar")
	i := bytes.Index(b, []byte("SQLite format 3"))
	b[i+4096+100] ^= 0xff
	os.WriteFile(damaged, b, 0o600)
	if _, _, err := cli(t, renv, "", "restore", damaged); err == nil || !strings.Contains(err.Error(), "damaged") && !strings.Contains(err.Error(), "altered") {
		t.Fatalf("a damaged archive: %v", err)
	}
	// Cut short.
	short := filepath.Join(t.TempDir(), "short.tar")
	os.WriteFile(short, b[:len(b)/2], 0o600)
	if _, _, err := cli(t, renv, "", "restore", short); err == nil {
		t.Fatal("a cut archive restored")
	}
	if _, err := os.Stat(dbFile(target)); err == nil {
		t.Fatal("a refused restore wrote the database")
	}

	// Another install's key in the way.
	os.MkdirAll(target, 0o700)
	os.WriteFile(keyPath(target), []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
	if _, _, err := cli(t, renv, "", "restore", archive); err == nil || !strings.Contains(err.Error(), "is not the backup's master key") {
		t.Fatalf("a foreign key file: %v", err)
	}
	os.Remove(keyPath(target))

	// A database alone, as older backups were: refused without its key, restored with it.
	plain := filepath.Join(t.TempDir(), "old.db")
	if err := extractBackupDB(archive, plain); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cli(t, renv, "", "restore", plain); err == nil || !strings.Contains(err.Error(), "--key-file FILE") {
		t.Fatalf("a database alone without its key: %v", err)
	}
	if _, err := os.Stat(dbFile(target)); err == nil {
		t.Fatal("a refused restore wrote the database")
	}
	if _, stderr, err := cli(t, renv, "", "restore", plain, "--key-file", keyPath(data)); err != nil || !strings.Contains(stderr, "10 command logs") {
		t.Fatalf("a database alone with --key-file: %v %s", err, stderr)
	}
	k1, _ := os.ReadFile(keyPath(data))
	k2, _ := os.ReadFile(keyPath(target))
	if !bytes.Equal(bytes.TrimSpace(k1), bytes.TrimSpace(k2)) {
		t.Fatal("the restored key is not the install's")
	}
}
