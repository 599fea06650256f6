package main

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/scrypt"

	"fieldkit/store"
)

// A backup is a tar archive that restores an install on its own: a manifest, then the
// database. The manifest carries the master key (which decrypts the credential sets'
// secrets) sealed with AES-256-GCM under a key derived from the operator's passphrase
// by scrypt, bound to the database's SHA-256, so the key is never in the archive in
// clear and a database swapped into the archive does not restore.

const (
	backupFormat   = "fieldkit-backup"
	backupVersion  = 1
	manifestName   = "fieldkit-backup.json"
	backupDBName   = "fieldkit.db"
	passphraseEnv  = "FIELDKIT_BACKUP_PASSPHRASE"
	minPassphrase  = 12
	scryptR        = 8
	scryptP        = 1
	manifestLimit  = 64 << 10
	sqliteHeader   = "SQLite format 3\x00"
	passphraseHelp = "--passphrase-file FILE (- for stdin) or " + passphraseEnv
)

// scryptN is scrypt's cost: 128 MiB and 1-2 s of one core, once per backup or
// restore. A test of refusals lowers it; the manifest records the cost used.
var scryptN = 1 << 17

// backupManifest is the archive's first entry.
type backupManifest struct {
	Format   string     `json:"format"`
	Version  int        `json:"version"`
	Created  time.Time  `json:"created"`
	FieldKit string     `json:"fieldkit_version"`
	Database backupFile `json:"database"`
	// Key is the master key sealed under the passphrase; null when the install had none
	// (no credential set was ever made and no server has started).
	Key *sealedKey `json:"master_key"`
}

type backupFile struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// sealedKey is the master key encrypted under a passphrase.
type sealedKey struct {
	KDF        string `json:"kdf"` // scrypt
	N          int    `json:"n"`
	R          int    `json:"r"`
	P          int    `json:"p"`
	Salt       []byte `json:"salt"`
	Cipher     string `json:"cipher"` // aes-256-gcm
	Nonce      []byte `json:"nonce"`
	Ciphertext []byte `json:"ciphertext"`
}

// keyAD binds a sealed key to the database it was archived with.
func keyAD(dbSum string) []byte {
	return []byte(backupFormat + ":" + fmt.Sprint(backupVersion) + ":" + dbSum)
}

func passphraseAEAD(pass, salt []byte, n, r, p int) (cipher.AEAD, error) {
	k, err := scrypt.Key(pass, salt, n, r, p, 32)
	if err != nil {
		return nil, fmt.Errorf("backup key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func sealKey(key, pass []byte, dbSum string) (*sealedKey, error) {
	s := &sealedKey{KDF: "scrypt", N: scryptN, R: scryptR, P: scryptP, Cipher: "aes-256-gcm", Salt: make([]byte, 16)}
	if _, err := rand.Read(s.Salt); err != nil {
		return nil, err
	}
	aead, err := passphraseAEAD(pass, s.Salt, s.N, s.R, s.P)
	if err != nil {
		return nil, err
	}
	s.Nonce = make([]byte, aead.NonceSize())
	if _, err := rand.Read(s.Nonce); err != nil {
		return nil, err
	}
	s.Ciphertext = aead.Seal(nil, s.Nonce, key, keyAD(dbSum))
	return s, nil
}

// errPassphrase is a passphrase that does not open the archive's key.
var errPassphrase = errors.New("the passphrase does not open this backup's master key (or the backup was altered)")

func (s *sealedKey) open(pass []byte, dbSum string) ([]byte, error) {
	// Parameters come from the archive: bound them so a crafted file cannot ask for
	// gigabytes (scrypt needs 128·N·r bytes).
	if s.KDF != "scrypt" || s.Cipher != "aes-256-gcm" || s.N < 2 || s.N > 1<<20 || s.R < 1 || s.R > 32 || s.P < 1 || s.P > 16 {
		return nil, fmt.Errorf("the backup's key is sealed with %s/%s (N=%d r=%d p=%d), which this FieldKit does not open", s.KDF, s.Cipher, s.N, s.R, s.P)
	}
	aead, err := passphraseAEAD(pass, s.Salt, s.N, s.R, s.P)
	if err != nil {
		return nil, err
	}
	if len(s.Nonce) != aead.NonceSize() {
		return nil, errPassphrase
	}
	key, err := aead.Open(nil, s.Nonce, s.Ciphertext, keyAD(dbSum))
	if err != nil || len(key) != 32 {
		return nil, errPassphrase
	}
	return key, nil
}

// readPassphrase reads the backup passphrase from --passphrase-file (a file, or "-"
// for the first line of stdin), else FIELDKIT_BACKUP_PASSPHRASE; never from the command
// line, where other users of the machine would see it.
func readPassphrase(e env, file, what string) ([]byte, error) {
	var pass string
	switch {
	case file == "-":
		line, err := bufio.NewReader(e.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read the passphrase from stdin: %w", err)
		}
		pass = line
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("passphrase: %w", err)
		}
		pass, _, _ = strings.Cut(string(b), "\n")
	default:
		pass = e.getenv(passphraseEnv)
	}
	pass = strings.TrimRight(pass, "\r\n")
	if pass == "" {
		return nil, fmt.Errorf("%s needs the passphrase that protects the master key in the backup: give it with %s", what, passphraseHelp)
	}
	return []byte(pass), nil
}

// cmdBackup writes a restorable backup: the database copied while the server runs,
// and the master key sealed under the operator's passphrase.
func cmdBackup(ctx context.Context, e env, o *opts) error {
	if o.output == "" {
		return &usageError{msg: "fieldkit backup: --output FILE is required", help: "backup"}
	}
	if _, err := os.Stat(o.output); err == nil {
		return fmt.Errorf("%s already exists", o.output)
	}
	cfg, err := o.load(e, nil)
	if err != nil {
		return err
	}
	db, err := o.openExisting(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	key, source, err := readMasterKey(e, cfg.Server.Data)
	if err != nil {
		return err
	}
	var pass []byte
	if key == nil {
		if has, err := db.HasCredentialSets(ctx); err != nil || has {
			return errors.Join(err, fmt.Errorf("no master key at %s but credential sets exist: a backup without it could never decrypt them; set FIELDKIT_SECRET_KEY or restore the key file first", source))
		}
		fmt.Fprintln(e.stderr, "no master key yet (no server has started here and no credential set exists): the backup holds the database alone")
	} else {
		if err := checkKey(ctx, db, key, source); err != nil {
			return err
		}
		if pass, err = readPassphrase(e, o.passphraseFile, "backup"); err != nil {
			return err
		}
		if utf8.RuneCount(pass) < minPassphrase {
			return fmt.Errorf("the passphrase is %d characters long: use at least %d, since it is all that guards every device password in the backup", utf8.RuneCount(pass), minPassphrase)
		}
	}
	err = store.WriteAtomic(o.output, func(tmp string) error {
		copyPath := tmp + "-db" // a stale temp too, should the process die
		defer os.Remove(copyPath)
		if err := db.CopyInto(ctx, copyPath); err != nil {
			return err
		}
		return writeArchive(tmp, copyPath, key, pass)
	})
	if err != nil {
		return fmt.Errorf("backup to %s: %w", o.output, err)
	}
	fmt.Fprintf(e.stderr, "backup written to %s (database and master key; restore with: fieldkit restore %s)\n", o.output, o.output)
	return nil
}

// checkKey refuses to archive a key that does not open the credential sets.
func checkKey(ctx context.Context, db *store.DB, key []byte, source string) error {
	kr, err := store.NewKeyring(key)
	if err != nil {
		return err
	}
	if err := db.CheckKeyring(ctx, kr); err != nil {
		return fmt.Errorf("master key from %s: %w", source, err)
	}
	return nil
}

// writeArchive writes the manifest and the database copy into the tar file path.
func writeArchive(path, dbCopy string, key, pass []byte) error {
	sum, size, err := fileSum(dbCopy)
	if err != nil {
		return err
	}
	m := backupManifest{Format: backupFormat, Version: backupVersion, Created: time.Now().UTC().Truncate(time.Second),
		FieldKit: version, Database: backupFile{Name: backupDBName, Size: size, SHA256: sum}}
	if key != nil {
		if m.Key, err = sealKey(key, pass, sum); err != nil {
			return err
		}
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := bufio.NewWriterSize(f, 1<<20)
	tw := tar.NewWriter(buf)
	if err := tarEntry(tw, manifestName, int64(len(manifest)), m.Created, strings.NewReader(string(manifest))); err != nil {
		return err
	}
	src, err := os.Open(dbCopy)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := tarEntry(tw, backupDBName, size, m.Created, src); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := buf.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func tarEntry(tw *tar.Writer, name string, size int64, mod time.Time, r io.Reader) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: mod, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	n, err := io.Copy(tw, r)
	if err == nil && n != size {
		err = fmt.Errorf("%s changed while it was archived", name)
	}
	return err
}

func fileSum(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}
