package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"time"
)

// Keyring encrypts credential secrets with the master key (AES-256-GCM). The set id and
// the field name are the associated data, so a ciphertext copied to another set or
// field does not decrypt.
type Keyring struct {
	aead cipher.AEAD
}

// ErrBadKey is returned when the master key does not decrypt stored secrets.
var ErrBadKey = errors.New("the master key does not decrypt the stored credential secrets")

// NewKeyring makes a keyring from a 32-byte key.
func NewKeyring(key []byte) (*Keyring, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("store: master key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Keyring{aead: aead}, nil
}

// LogValue keeps the key out of logs.
func (k *Keyring) LogValue() slog.Value { return slog.StringValue("REDACTED") }

func ad(setID int64, field string) []byte {
	return []byte("credential_set:" + strconv.FormatInt(setID, 10) + ":" + field)
}

func (k *Keyring) seal(setID int64, field, plain string) []byte {
	if plain == "" {
		return nil
	}
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return k.aead.Seal(nonce, nonce, []byte(plain), ad(setID, field))
}

func (k *Keyring) open(setID int64, field string, sealed []byte) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	n := k.aead.NonceSize()
	if len(sealed) < n {
		return "", ErrBadKey
	}
	plain, err := k.aead.Open(nil, sealed[:n], sealed[n:], ad(setID, field))
	if err != nil {
		return "", ErrBadKey
	}
	return string(plain), nil
}

// CredentialSets is netbox_toolkit_plugin.devicecredentialset as permission
// constraints see it; the sets themselves are managed by the web UI only.
var CredentialSets = declare(&Model{
	Type: TypeCredentialSet, Name: "CredentialSet", Table: "credential_sets",
	Fields: []Field{
		{Name: "name", Column: "name", Kind: KindString, Nested: true},
		{Name: "description", Column: "description", Kind: KindString},
		{Name: "owner", Column: "owner_id", Kind: KindInt, Rel: TypeUser},
		{Name: "is_active", Column: "is_active", Kind: KindBool},
		{Name: "username", Column: "username", Kind: KindString},
		{Name: "enable_mode", Column: "enable_mode", Kind: KindString},
		{Name: "platforms", Kind: KindInt, Rel: TypePlatform, Join: &Join{"credential_set_platforms", "credential_set_id", "platform_id"}},
		{Name: "service", Column: "service", Kind: KindBool},
	},
})

// CredentialSet is a credential set as its owner sees it: never its secrets.
type CredentialSet struct {
	ID, OwnerID                                 int64
	Name, Description, Username, EnableMode     string
	PlatformIDs                                 []int64
	IsActive                                    bool
	Service                                     bool // made for unattended use (schedules), not a person's own
	HasPassword, HasEnableSecret, HasPrivateKey bool
	TokenPrefix                                 string
	LastUsed, Created, LastUpdated              time.Time
}

// CredentialInput creates or changes a set. For secrets, nil leaves them as they are
// and "" clears them.
type CredentialInput struct {
	Name, Description, Username        *string
	EnableMode                         *string // one of exec.EnableModes, as the table's CHECK says
	Password, EnableSecret, PrivateKey *string
	PlatformIDs                        *[]int64
	IsActive                           *bool
	Service                            bool // on create only: a service set (see CreateServiceCredentialSet)
}

// Secret is what an execution needs from a credential set. Version changes with every
// change of the set that matters to a login (secrets, username, enable mode, activation,
// token): sessions kept open for the set are kept per version.
type Secret struct {
	SetID, OwnerID, Version            int64
	Name                               string    // the set's name, which failures name
	LastUsed                           time.Time // zero: never
	IsActive                           bool
	PlatformIDs                        []int64
	Username, EnableMode               string
	Password, EnableSecret, PrivateKey string
}

// LogValue keeps secrets out of logs.
func (s Secret) LogValue() slog.Value {
	return slog.GroupValue(slog.Int64("set_id", s.SetID), slog.String("secrets", "REDACTED"))
}

// String keeps secrets out of fmt output.
func (s Secret) String() string { return fmt.Sprintf("credential set %d (REDACTED)", s.SetID) }

// CredentialTokenPrefix starts every credential token.
const CredentialTokenPrefix = "fkc_"

var credTokenRE = regexp.MustCompile(`^fkc_[A-Za-z0-9_-]{43}$`)

func newCredentialToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return CredentialTokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// CreateCredentialSet stores a set for its owner and returns the id and the token,
// which is shown once and never stored.
func (db *DB) CreateCredentialSet(ctx context.Context, kr *Keyring, ownerID int64, in CredentialInput) (int64, string, error) {
	var id int64
	var token string
	err := db.Write(ctx, func(tx *sql.Tx) error {
		var err error
		id, token, err = db.createSet(ctx, tx, kr, ownerID, in)
		return err
	})
	return id, token, err
}

// createSet inserts a set; its token is returned, never stored.
func (db *DB) createSet(ctx context.Context, tx *sql.Tx, kr *Keyring, ownerID int64, in CredentialInput) (int64, string, error) {
	token := newCredentialToken()
	var id int64
	err := func() error {
		now := Stamp(db.now())
		active := in.IsActive == nil || *in.IsActive
		res, err := tx.ExecContext(ctx, `INSERT INTO credential_sets (owner_id, name, description, username, enable_mode,
			token_hash, token_prefix, is_active, service, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ownerID, deref(in.Name), deref(in.Description), deref(in.Username), deref(in.EnableMode), HashKey(token), token[:12], active,
			in.Service, now, now)
		if err != nil {
			return setConflict(constraintErr(err, "credential set"))
		}
		id, _ = res.LastInsertId()
		if err := writeSecrets(ctx, tx, kr, id, in); err != nil {
			return err
		}
		if in.PlatformIDs != nil {
			return constraintErr(setLinks(ctx, tx, "credential_set_platforms", "credential_set_id", "platform_id", id, *in.PlatformIDs), "credential set platforms")
		}
		return nil
	}()
	return id, token, err
}

func writeSecrets(ctx context.Context, tx *sql.Tx, kr *Keyring, id int64, in CredentialInput) error {
	for _, f := range []struct {
		col string
		v   *string
	}{{"password_enc", in.Password}, {"enable_secret_enc", in.EnableSecret}, {"private_key_enc", in.PrivateKey}} {
		if f.v == nil {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE credential_sets SET `+f.col+` = ? WHERE id = ?`, kr.seal(id, f.col, *f.v), id); err != nil {
			return err
		}
	}
	return nil
}

// UpdateCredentialSet changes one of the owner's sets.
func (db *DB) UpdateCredentialSet(ctx context.Context, kr *Keyring, ownerID, id int64, in CredentialInput) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		if err := ownedBy(ctx, tx, ownerID, id); err != nil {
			return err
		}
		return db.updateSet(ctx, tx, kr, id, in)
	})
}

// updateSet writes a change to a set whose access the caller checked.
func (db *DB) updateSet(ctx context.Context, tx *sql.Tx, kr *Keyring, id int64, in CredentialInput) error {
	set := Set{}
	set.Str("name", in.Name)
	set.Str("description", in.Description)
	set.Str("username", in.Username)
	set.Str("enable_mode", in.EnableMode)
	if in.IsActive != nil {
		set.Val("is_active", *in.IsActive)
	}
	if err := set.Apply(ctx, tx, "credential_sets", id, db.now()); err != nil {
		return setConflict(constraintErr(err, "credential set"))
	}
	if err := writeSecrets(ctx, tx, kr, id, in); err != nil {
		return err
	}
	if in.PlatformIDs != nil {
		return constraintErr(setLinks(ctx, tx, "credential_set_platforms", "credential_set_id", "platform_id", id, *in.PlatformIDs), "credential set platforms")
	}
	return nil
}

func ownedBy(ctx context.Context, tx *sql.Tx, ownerID, id int64) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM credential_sets WHERE id = ? AND owner_id = ? AND NOT service`, id, ownerID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("credential set %d: %w", id, ErrNotFound)
	}
	return nil
}

// RegenerateCredentialToken replaces a set's token; the old one stops working at once.
func (db *DB) RegenerateCredentialToken(ctx context.Context, ownerID, id int64) (string, error) {
	token := newCredentialToken()
	err := db.Write(ctx, func(tx *sql.Tx) error {
		if err := ownedBy(ctx, tx, ownerID, id); err != nil {
			return err
		}
		set := Set{}
		set.Val("token_hash", HashKey(token))
		set.Val("token_prefix", token[:12])
		return set.Apply(ctx, tx, "credential_sets", id, db.now())
	})
	return token, err
}

// DeleteCredentialSet deletes one of the owner's sets.
func (db *DB) DeleteCredentialSet(ctx context.Context, ownerID, id int64) error {
	return db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM credential_sets WHERE id = ? AND owner_id = ? AND NOT service`, id, ownerID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("credential set %d: %w", id, ErrNotFound)
		}
		return nil
	})
}

const credCols = `id, owner_id, name, description, username, enable_mode, is_active, service, password_enc IS NOT NULL,
	enable_secret_enc IS NOT NULL, private_key_enc IS NOT NULL, token_prefix, last_used, created, last_updated`

// CredentialSets lists the owner's own sets by name (never a service set).
func (db *DB) CredentialSets(ctx context.Context, ownerID int64) ([]CredentialSet, error) {
	return db.credentialSets(ctx, `owner_id = ? AND NOT service`, ownerID)
}

// credentialSets lists the sets a condition selects (on the table, aliased t), by name.
func (db *DB) credentialSets(ctx context.Context, where string, args ...any) ([]CredentialSet, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+credCols+` FROM credential_sets t WHERE `+where+` ORDER BY name, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: credential sets: %w", err)
	}
	defer rows.Close()
	var out []CredentialSet
	var ids []int64
	for rows.Next() {
		var c CredentialSet
		var lastUsed sql.NullString
		var created, updated string
		if err := rows.Scan(&c.ID, &c.OwnerID, &c.Name, &c.Description, &c.Username, &c.EnableMode, &c.IsActive, &c.Service, &c.HasPassword,
			&c.HasEnableSecret, &c.HasPrivateKey, &c.TokenPrefix, &lastUsed, &created, &updated); err != nil {
			return nil, err
		}
		c.LastUsed, c.Created, c.LastUpdated = ParseStamp(lastUsed.String), ParseStamp(created), ParseStamp(updated)
		out = append(out, c)
		ids = append(ids, c.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return out, nil
	}
	links, err := db.links(ctx, "credential_set_platforms", "credential_set_id", "platform_id", ids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].PlatformIDs = links[out[i].ID]
	}
	return out, nil
}

// CredentialSet loads one of the owner's sets.
func (db *DB) CredentialSet(ctx context.Context, ownerID, id int64) (CredentialSet, error) {
	sets, err := db.CredentialSets(ctx, ownerID)
	if err != nil {
		return CredentialSet{}, err
	}
	for _, s := range sets {
		if s.ID == id {
			return s, nil
		}
	}
	return CredentialSet{}, fmt.Errorf("credential set %d: %w", id, ErrNotFound)
}

// CredentialByToken finds the set a token belongs to and decrypts its secrets. A
// malformed or unknown token is ErrNotFound, the same as any other miss, so the answer
// tells a guesser nothing.
func (db *DB) CredentialByToken(ctx context.Context, kr *Keyring, token string) (Secret, error) {
	if !credTokenRE.MatchString(token) {
		return Secret{}, fmt.Errorf("credential token: %w", ErrNotFound)
	}
	hash := HashKey(token)
	return cached(ctx, db, fmt.Sprintf("credtoken\x00%p\x00%s", kr, hash), func() (Secret, error) {
		return db.credentialByHash(ctx, kr, hash)
	})
}

func (db *DB) credentialByHash(ctx context.Context, kr *Keyring, hash string) (Secret, error) {
	var s Secret
	var pw, en, pk []byte
	var lastUsed sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT id, owner_id, name, is_active, version, username, enable_mode, password_enc, enable_secret_enc, private_key_enc,
		last_used FROM credential_sets WHERE token_hash = ? AND NOT service`, hash).Scan(&s.SetID, &s.OwnerID, &s.Name, &s.IsActive, &s.Version, &s.Username, &s.EnableMode, &pw, &en, &pk, &lastUsed)
	if errors.Is(err, sql.ErrNoRows) {
		return Secret{}, fmt.Errorf("credential token: %w", ErrNotFound)
	}
	if err != nil {
		return Secret{}, fmt.Errorf("store: credential token: %w", err)
	}
	s.LastUsed = ParseStamp(lastUsed.String)
	return db.openSecret(ctx, kr, s, pw, en, pk)
}

// TouchCredentialSet records that a set was used, at most once a minute (as a token's
// last use): a write per execution would queue every execution behind the one writer.
func (db *DB) TouchCredentialSet(ctx context.Context, s Secret) error {
	now := db.now()
	if db.touched(fmt.Sprint("credset\x00", s.SetID), s.LastUsed, now) {
		return nil
	}
	_, err := db.execer(ctx).ExecContext(ctx, `UPDATE credential_sets SET last_used = ? WHERE id = ?`, Stamp(now), s.SetID)
	return err
}

// CheckKeyring fails when credential sets exist and the key does not decrypt them, so a
// wrong key stops start-up instead of failing every execution later.
func (db *DB) CheckKeyring(ctx context.Context, kr *Keyring) error {
	var id int64
	var pw, en, pk []byte
	err := db.r.QueryRowContext(ctx, `SELECT id, password_enc, enable_secret_enc, private_key_enc FROM credential_sets
		WHERE password_enc IS NOT NULL OR enable_secret_enc IS NOT NULL OR private_key_enc IS NOT NULL LIMIT 1`).Scan(&id, &pw, &en, &pk)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: check master key: %w", err)
	}
	for _, f := range []struct {
		col string
		v   []byte
	}{{"password_enc", pw}, {"enable_secret_enc", en}, {"private_key_enc", pk}} {
		if _, err := kr.open(id, f.col, f.v); err != nil {
			return err
		}
	}
	return nil
}

// HasCredentialSets reports whether any set exists (a missing key is then fatal).
func (db *DB) HasCredentialSets(ctx context.Context) (bool, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM credential_sets`).Scan(&n)
	return n > 0, err
}

// CredentialByID finds one of the owner's sets by id and decrypts its secrets: the web
// interface's logged-in user picks a set instead of pasting its token.
func (db *DB) CredentialByID(ctx context.Context, kr *Keyring, ownerID, id int64) (Secret, error) {
	return cached(ctx, db, fmt.Sprintf("credset\x00%p\x00%d\x00%d", kr, ownerID, id), func() (Secret, error) {
		return db.credentialByID(ctx, kr, ownerID, id)
	})
}

func (db *DB) credentialByID(ctx context.Context, kr *Keyring, ownerID, id int64) (Secret, error) {
	var s Secret
	var pw, en, pk []byte
	var lastUsed sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT id, owner_id, name, is_active, version, username, enable_mode, password_enc, enable_secret_enc, private_key_enc,
		last_used FROM credential_sets WHERE id = ? AND owner_id = ? AND NOT service`, id, ownerID).Scan(&s.SetID, &s.OwnerID, &s.Name, &s.IsActive, &s.Version, &s.Username, &s.EnableMode, &pw, &en, &pk, &lastUsed)
	if errors.Is(err, sql.ErrNoRows) {
		return Secret{}, fmt.Errorf("credential set %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Secret{}, fmt.Errorf("store: credential set %d: %w", id, err)
	}
	s.LastUsed = ParseStamp(lastUsed.String)
	return db.openSecret(ctx, kr, s, pw, en, pk)
}

// openSecret decrypts a set's secrets and loads its platforms.
func (db *DB) openSecret(ctx context.Context, kr *Keyring, s Secret, pw, en, pk []byte) (Secret, error) {
	var err error
	if s.Password, err = kr.open(s.SetID, "password_enc", pw); err != nil {
		return Secret{}, err
	}
	if s.EnableSecret, err = kr.open(s.SetID, "enable_secret_enc", en); err != nil {
		return Secret{}, err
	}
	if s.PrivateKey, err = kr.open(s.SetID, "private_key_enc", pk); err != nil {
		return Secret{}, err
	}
	links, err := db.links(ctx, "credential_set_platforms", "credential_set_id", "platform_id", []int64{s.SetID})
	if err != nil {
		return Secret{}, err
	}
	s.PlatformIDs = links[s.SetID]
	return s, nil
}

// setConflict words a name taken among the owner's sets, as the web interface shows it.
func setConflict(err error) error {
	var fe *FieldError
	if errors.As(err, &fe) && errors.Is(err, ErrConflict) {
		return &FieldError{Field: fe.Field, Err: Problem("A credential set with this name already exists.")}
	}
	return err
}
