package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "fieldkit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func ptr[T any](v T) *T { return &v }

func TestCredentialSetsEncryptedAndTokenOnce(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	kr, _ := NewKeyring(bytes.Repeat([]byte{7}, 32))
	uid, err := db.CreateUser(ctx, UserInput{Username: ptr("alice")}, All)
	if err != nil {
		t.Fatal(err)
	}
	const pw, enable = "Sup3r-Secret-Passw0rd", "Enable-S3cret-Value"
	id, token, err := db.CreateCredentialSet(ctx, kr, uid, CredentialInput{Name: ptr("lab"), Username: ptr("netops"),
		Password: ptr(pw), EnableSecret: ptr(enable)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, "fkc_") || len(token) != 47 {
		t.Fatalf("token shape: %q", token)
	}
	s, err := db.CredentialByToken(ctx, kr, token)
	if err != nil || s.Password != pw || s.EnableSecret != enable || s.OwnerID != uid || s.SetID != id {
		t.Fatalf("lookup: %v %v", s.SetID, err)
	}
	if strings.Contains(s.String(), pw) {
		t.Fatal("String leaks the password")
	}
	// nothing in the database file, WAL included, holds the secrets or the token
	db.w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	for _, f := range []string{db.path, db.path + "-wal"} {
		raw, _ := os.ReadFile(f)
		for _, secret := range []string{pw, enable, token} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Fatalf("%s holds a secret in clear text", filepath.Base(f))
			}
		}
	}
	// regenerate: the old token stops working at once
	token2, err := db.RegenerateCredentialToken(ctx, uid, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CredentialByToken(ctx, kr, token); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old token still works: %v", err)
	}
	if _, err := db.CredentialByToken(ctx, kr, token2); err != nil {
		t.Fatal(err)
	}
	// another owner cannot touch the set
	other, _ := db.CreateUser(ctx, UserInput{Username: ptr("mallory")}, All)
	if err := db.DeleteCredentialSet(ctx, other, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete by another owner: %v", err)
	}
	// a wrong master key is refused, by lookup and by the start-up check
	wrong, _ := NewKeyring(bytes.Repeat([]byte{8}, 32))
	if _, err := db.CredentialByToken(ctx, wrong, token2); !errors.Is(err, ErrBadKey) {
		t.Fatalf("wrong key: %v", err)
	}
	if err := db.CheckKeyring(ctx, wrong); !errors.Is(err, ErrBadKey) {
		t.Fatalf("check with wrong key: %v", err)
	}
	if err := db.CheckKeyring(ctx, kr); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "fkc_short", "Token " + token2, strings.ToUpper(token2)} {
		if _, err := db.CredentialByToken(ctx, kr, bad); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

func TestCiphertextBoundToSetAndField(t *testing.T) {
	kr, _ := NewKeyring(bytes.Repeat([]byte{1}, 32))
	sealed := kr.seal(1, "password_enc", "pw")
	if _, err := kr.open(2, "password_enc", sealed); err == nil {
		t.Fatal("ciphertext opened under another set id")
	}
	if _, err := kr.open(1, "enable_secret_enc", sealed); err == nil {
		t.Fatal("ciphertext opened as another field")
	}
	if got, err := kr.open(1, "password_enc", sealed); err != nil || got != "pw" {
		t.Fatal(got, err)
	}
}

func TestDeletingTheOnlyPlatformDeactivatesTheSet(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	kr, _ := NewKeyring(bytes.Repeat([]byte{7}, 32))
	uid, _ := db.CreateUser(ctx, UserInput{Username: ptr("alice")}, All)
	p1, _ := db.Create(ctx, Platforms, Values{"name": "IOS", "slug": "ios"}, All)
	p2, _ := db.Create(ctx, Platforms, Values{"name": "EOS", "slug": "eos"}, All)
	only, _, _ := db.CreateCredentialSet(ctx, kr, uid, CredentialInput{Name: ptr("only"), Username: ptr("u"), PlatformIDs: &[]int64{p1}})
	both, _, _ := db.CreateCredentialSet(ctx, kr, uid, CredentialInput{Name: ptr("both"), Username: ptr("u"), PlatformIDs: &[]int64{p1, p2}})
	if err := db.Delete(ctx, Platforms, p1); err != nil {
		t.Fatal(err)
	}
	a, _ := db.CredentialSet(ctx, uid, only)
	b, _ := db.CredentialSet(ctx, uid, both)
	if a.IsActive || len(a.PlatformIDs) != 0 {
		t.Fatalf("set restricted to the deleted platform must be deactivated: %+v", a)
	}
	if !b.IsActive || len(b.PlatformIDs) != 1 {
		t.Fatalf("set with another platform stays active: %+v", b)
	}
}
