package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"fieldkit/store"
)

// loadKeyring reads the master key that encrypts credential secrets: FIELDKIT_SECRET_KEY
// if set, else <data>/secret.key, created (0600) on first start. A missing or wrong key
// while credential sets exist stops start-up: failing loudly now beats failing every
// execution later.
func loadKeyring(ctx context.Context, e env, db *store.DB, dataDir string, logger *slog.Logger) (*store.Keyring, error) {
	key, source, err := readMasterKey(e, dataDir)
	if err != nil {
		return nil, err
	}
	if key == nil {
		has, err := db.HasCredentialSets(ctx)
		if err != nil {
			return nil, err
		}
		if has {
			return nil, fmt.Errorf("master key %s is missing but credential sets exist: restore the key file (fieldkit restore puts back the key of a backup) or set FIELDKIT_SECRET_KEY", source)
		}
		raw, err := newKeyFile(source)
		if err != nil {
			return nil, err
		}
		if key, err = decodeKey(raw); err != nil {
			return nil, err
		}
	} else if source != secretKeyEnv {
		warnLooseKey(source, logger)
	}
	kr, err := store.NewKeyring(key)
	if err != nil {
		return nil, err
	}
	if err := db.CheckKeyring(ctx, kr); err != nil {
		return nil, fmt.Errorf("master key from %s: %w", source, err)
	}
	return kr, nil
}

// secretKeyEnv overrides <data>/secret.key.
const secretKeyEnv = "FIELDKIT_SECRET_KEY"

// keyPath is a data directory's master key file.
func keyPath(dataDir string) string { return filepath.Join(dataDir, "secret.key") }

// readMasterKey reads the master key in effect: FIELDKIT_SECRET_KEY if set, else
// <data>/secret.key. It returns a nil key (and the file's path as source) when there
// is none yet; it creates nothing.
func readMasterKey(e env, dataDir string) (key []byte, source string, err error) {
	raw := strings.TrimSpace(e.getenv(secretKeyEnv))
	source = secretKeyEnv
	if raw == "" {
		source = keyPath(dataDir)
		b, err := os.ReadFile(source)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, source, nil
		case err != nil:
			return nil, source, fmt.Errorf("master key: %w", err)
		}
		raw = strings.TrimSpace(string(b))
	}
	if key, err = decodeKey(raw); err != nil {
		return nil, source, fmt.Errorf("master key from %s: %w", source, err)
	}
	return key, source, nil
}

// warnLooseKey warns at start-up when users other than FieldKit's may read the master
// key: with it and a copy of the database, anyone may decrypt every device password.
// Windows has no such modes; its ACLs are the administrator's.
func warnLooseKey(path string, logger *slog.Logger) {
	st, err := os.Stat(path)
	if err != nil || runtime.GOOS == "windows" || st.Mode().Perm()&0o077 == 0 {
		return
	}
	logger.Warn("the master key file can be read by other users: run chmod 600 "+path,
		"path", path, "mode", fmt.Sprintf("%04o", st.Mode().Perm()))
}

func newKeyFile(path string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	s := hex.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("master key: create %s: %w", path, err)
	}
	if _, err := f.WriteString(s + "\n"); err != nil {
		f.Close()
		return "", err
	}
	return s, f.Close()
}

// decodeKey accepts 64 hex characters or base64 of 32 bytes.
func decodeKey(s string) ([]byte, error) {
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, errors.New("want 32 bytes as 64 hex characters or base64")
}
