package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Session is a web UI login. Its id lives only in the browser's cookie; the store keeps
// its SHA-256.
type Session struct {
	Principal                  Principal
	CSRFToken                  string
	Created, Expires, LastSeen time.Time
}

// lastSeenEvery bounds how often a session's last_seen is written, as for tokens.
const lastSeenEvery = time.Minute

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// CreateSession starts a login for userID lasting ttl and records the user's last_login.
// It returns the session id (for the cookie, never stored) and the session.
func (db *DB) CreateSession(ctx context.Context, userID int64, ttl time.Duration) (string, Session, error) {
	id := randomToken()
	now := db.now()
	s := Session{CSRFToken: randomToken(), Created: now, Expires: now.Add(ttl), LastSeen: now}
	err := db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id_hash, user_id, csrf_token, created, expires, last_seen)
			VALUES (?, ?, ?, ?, ?, ?)`, HashKey(id), userID, s.CSRFToken, Stamp(now), Stamp(s.Expires), Stamp(now)); err != nil {
			return constraintErr(err, "session")
		}
		_, err := tx.ExecContext(ctx, `UPDATE users SET last_login = ? WHERE id = ?`, Stamp(now), userID)
		return err
	})
	if err != nil {
		return "", Session{}, fmt.Errorf("store: create session: %w", err)
	}
	s.Principal, err = db.PrincipalByID(ctx, userID)
	return id, s, err
}

// SessionByID finds the session of a cookie's id. An unknown or expired session is
// ErrNotFound; one whose user has been deactivated is ErrInactive.
func (db *DB) SessionByID(ctx context.Context, id string) (Session, error) {
	var s Session
	var userID int64
	var created, expires, lastSeen string
	var active int
	err := db.r.QueryRowContext(ctx, `SELECT s.user_id, s.csrf_token, s.created, s.expires, s.last_seen, u.is_active
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id_hash = ?`, HashKey(id)).
		Scan(&userID, &s.CSRFToken, &created, &expires, &lastSeen, &active)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("session: %w", ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("store: session: %w", err)
	}
	s.Created, s.Expires, s.LastSeen = ParseStamp(created), ParseStamp(expires), ParseStamp(lastSeen)
	now := db.now()
	if !now.Before(s.Expires) {
		return Session{}, fmt.Errorf("session: expired: %w", ErrNotFound)
	}
	if active == 0 {
		return Session{}, ErrInactive
	}
	if s.Principal, err = db.PrincipalByID(ctx, userID); err != nil {
		return Session{}, err
	}
	if now.Sub(s.LastSeen) > lastSeenEvery {
		if _, err := db.execer(ctx).ExecContext(ctx, `UPDATE sessions SET last_seen = ? WHERE id_hash = ?`, Stamp(now), HashKey(id)); err != nil {
			return Session{}, fmt.Errorf("store: session last_seen: %w", err)
		}
		s.LastSeen = now
	}
	return s, nil
}

// DeleteSession ends a login; deleting an unknown session is not an error (logging out
// twice is fine).
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	if _, err := db.execer(ctx).ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = ?`, HashKey(id)); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes sessions past their expiry and returns how many.
func (db *DB) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	res, err := db.execer(ctx).ExecContext(ctx, `DELETE FROM sessions WHERE expires <= ?`, Stamp(db.now()))
	if err != nil {
		return 0, fmt.Errorf("store: delete expired sessions: %w", err)
	}
	return res.RowsAffected()
}

// ErrBadLogin is returned by CheckPassword for an unknown user, a wrong password or a
// user with no password; the caller must not tell them apart.
var ErrBadLogin = errors.New("invalid username or password")

var dummyHash = sync.OnceValue(func() []byte {
	h, err := bcrypt.GenerateFromPassword([]byte("fieldkit timing equaliser"), bcrypt.DefaultCost)
	if err != nil {
		panic(err) // only fails for a password over 72 bytes or a bad cost
	}
	return h
})

// CheckPassword verifies a user's password. An unknown user costs the same bcrypt
// comparison as a known one, so timing does not reveal which usernames exist. A right
// password of an inactive user is ErrInactive; every other failure is ErrBadLogin.
func (db *DB) CheckPassword(ctx context.Context, username, password string) (Principal, error) {
	var id int64
	var hash string
	var active int
	err := db.r.QueryRowContext(ctx, `SELECT id, password_hash, is_active FROM users WHERE username = ?`, username).
		Scan(&id, &hash, &active)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Principal{}, fmt.Errorf("store: check password: %w", err)
	}
	if err != nil || hash == "" {
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
		return Principal{}, ErrBadLogin
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		return Principal{}, ErrBadLogin
	}
	if active == 0 {
		return Principal{}, ErrInactive
	}
	return db.PrincipalByID(ctx, id)
}
