package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"fieldkit/store"
)

// cmdRestore puts a backup back into a data directory that has no database: the
// database, checked against the manifest's digest, migrated to this version and proved
// to open every credential set with the key; then the key as <data>/secret.key. Nothing
// appears under the final names until all of that has passed.
func cmdRestore(ctx context.Context, e env, o *opts) error {
	cfg, err := o.load(e, nil)
	if err != nil {
		return err
	}
	data := cfg.Server.Data
	if abs, err := filepath.Abs(data); err == nil {
		data = abs
	}
	if _, err := os.Stat(dbFile(data)); err == nil {
		return fmt.Errorf("%s already exists: restore into a data directory without a database (stop the server and move the data directory away first, or name another with --data DIR)", dbFile(data))
	}
	f, err := os.Open(o.args[0])
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	in := bufio.NewReaderSize(f, 1<<20)
	head, _ := in.Peek(len(sqliteHeader))
	var r restoring
	if string(head) == sqliteHeader {
		err = r.plain(e, o, in)
	} else {
		err = r.archive(e, o, in)
	}
	if err != nil {
		return fmt.Errorf("restore %s: %w", o.args[0], err)
	}
	if err := r.checkKeyFile(data); err != nil {
		return err
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	var counts store.Counts
	var sets int
	// The key goes in once the database has passed, just before the database itself:
	// a failure between the two leaves the key alone, which a second try accepts.
	err = store.WriteAtomic(dbFile(data), func(tmp string) error {
		if err := r.copyDB(tmp); err != nil {
			return err
		}
		if counts, sets, err = r.verify(ctx, tmp, cliLogger(cfg, e)); err != nil {
			return err
		}
		return r.writeKey(data)
	})
	if err != nil {
		return fmt.Errorf("restore %s: %w", o.args[0], err)
	}
	opened := ""
	if sets > 0 {
		opened = ", each decrypted with the restored key"
	}
	fmt.Fprintf(e.stderr, "restored %s: %d users, %d credential sets%s, %d command logs\n",
		dbFile(data), counts.Users, counts.CredentialSets, opened, counts.CommandLogs)
	if r.key != nil {
		fmt.Fprintf(e.stderr, "master key restored to %s\n", keyPath(data))
	}
	if env := strings.TrimSpace(e.getenv(secretKeyEnv)); env != "" && r.key != nil {
		if k, err := decodeKey(env); err != nil || !bytes.Equal(k, r.key) {
			fmt.Fprintf(e.stderr, "warning: %s is set and is not the restored key; the server reads it before secret.key: unset it before starting the server\n", secretKeyEnv)
		}
	}
	return nil
}

// restoring is a restore under way: where the database comes from, its expected size
// and digest (an archive's), and the key.
type restoring struct {
	src  io.Reader
	size int64
	sum  string // "" for a database alone
	key  []byte // nil: the backup had none
}

// archive reads the manifest, opens the key with the passphrase and leaves src at the
// database's bytes.
func (r *restoring) archive(e env, o *opts, in io.Reader) error {
	if o.keyFile != "" {
		return errors.New("--key-file is for a backup that is a database alone; this backup holds its own key")
	}
	tr := tar.NewReader(in)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != manifestName {
		return errors.New("not a FieldKit backup: neither a backup archive (fieldkit backup) nor a SQLite database")
	}
	var m backupManifest
	if err := json.NewDecoder(io.LimitReader(tr, manifestLimit)).Decode(&m); err != nil || m.Format != backupFormat {
		return errors.New("not a FieldKit backup: its manifest does not read")
	}
	if m.Version != backupVersion {
		return fmt.Errorf("a backup of format %d, made by FieldKit %s: this FieldKit reads format %d", m.Version, m.FieldKit, backupVersion)
	}
	if m.Key != nil {
		pass, err := readPassphrase(e, o.passphraseFile, "restore")
		if err != nil {
			return err
		}
		if r.key, err = m.Key.open(pass, m.Database.SHA256); err != nil {
			return err
		}
	}
	if hdr, err = tr.Next(); err != nil || hdr.Name != m.Database.Name || hdr.Size != m.Database.Size {
		return errors.New("the backup holds no database where its manifest says: the file is cut short or altered")
	}
	r.src, r.size, r.sum = tr, m.Database.Size, m.Database.SHA256
	return nil
}

// plain takes a database alone, the backup of FieldKit before backups held the key.
func (r *restoring) plain(e env, o *opts, in io.Reader) error {
	r.src, r.size = in, -1
	if o.keyFile == "" {
		return nil
	}
	b, err := os.ReadFile(o.keyFile)
	if err != nil {
		return fmt.Errorf("--key-file: %w", err)
	}
	if r.key, err = decodeKey(strings.TrimSpace(string(b))); err != nil {
		return fmt.Errorf("--key-file %s: %w", o.keyFile, err)
	}
	return nil
}

// checkKeyFile refuses to replace a key file that is not the backup's own.
func (r *restoring) checkKeyFile(data string) error {
	b, err := os.ReadFile(keyPath(data))
	if errors.Is(err, fs.ErrNotExist) || r.key == nil && err == nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("master key: %w", err)
	}
	if k, err := decodeKey(strings.TrimSpace(string(b))); err == nil && bytes.Equal(k, r.key) {
		return nil
	}
	return fmt.Errorf("%s exists and is not the backup's master key: move it away first (it may be the only key of another backup)", keyPath(data))
}

// copyDB writes the database's bytes to path, checking the manifest's size and digest.
func (r *restoring) copyDB(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r.src)
	if err != nil {
		return fmt.Errorf("read the database: %w", err)
	}
	if r.sum != "" && (n != r.size || hex.EncodeToString(h.Sum(nil)) != r.sum) {
		return errors.New("the database in the backup does not match its manifest's digest: the file is damaged")
	}
	return f.Close()
}

// verify opens the restored database (migrating it to this version), proves the key
// opens every credential set and counts what came back. The database is closed (its
// write-ahead log folded in) when it returns.
func (r *restoring) verify(ctx context.Context, path string, logger *slog.Logger) (counts store.Counts, sets int, err error) {
	db, err := store.Open(ctx, path, store.Logger(logger))
	if err != nil {
		return counts, 0, fmt.Errorf("the restored database does not open: %w", err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	if counts, err = db.Count(ctx); err != nil {
		return counts, 0, err
	}
	if r.key == nil {
		if counts.CredentialSets > 0 {
			return counts, 0, fmt.Errorf("the backup is a database alone and has %d credential sets: give the secret.key of the install it came from with --key-file FILE", counts.CredentialSets)
		}
		return counts, 0, nil
	}
	kr, err := store.NewKeyring(r.key)
	if err != nil {
		return counts, 0, err
	}
	if sets, err = db.CheckEveryCredentialSet(ctx, kr); err != nil {
		return counts, sets, fmt.Errorf("the key does not open the restored credential sets: %w", err)
	}
	return counts, sets, nil
}

// writeKey writes the key as <data>/secret.key (0600), unless it is already there.
func (r *restoring) writeKey(data string) error {
	if r.key == nil {
		return nil
	}
	if _, err := os.Stat(keyPath(data)); err == nil {
		return nil // checkKeyFile found the same key
	}
	return store.WriteAtomic(keyPath(data), func(tmp string) error {
		return os.WriteFile(tmp, []byte(hex.EncodeToString(r.key)+"\n"), 0o600)
	})
}
