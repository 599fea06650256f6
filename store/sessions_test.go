package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestCheckPassword(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	if _, err := db.CreateUser(ctx, UserInput{Username: ptr("alice"), Password: ptr("pw")}, All); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateUser(ctx, UserInput{Username: ptr("bob"), Password: ptr("pw"), IsActive: ptr(false)}, All); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateUser(ctx, UserInput{Username: ptr("nopass")}, All); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, pw string
		want     error
	}{
		{"alice", "pw", nil},
		{"alice", "PW", ErrBadLogin},
		{"mallory", "pw", ErrBadLogin},
		{"nopass", "", ErrBadLogin},
		{"bob", "wrong", ErrBadLogin}, // an inactive user's status is not told without the password
		{"bob", "pw", ErrInactive},
	} {
		p, err := db.CheckPassword(ctx, tc.user, tc.pw)
		if !errors.Is(err, tc.want) || (err == nil && p.Username != tc.user) {
			t.Errorf("%s/%s: %v %v, want %v", tc.user, tc.pw, p, err, tc.want)
		}
	}
}

func TestSessionLifetime(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db.SetClock(func() time.Time { return now })
	uid, err := db.CreateUser(ctx, UserInput{Username: ptr("alice"), Password: ptr("pw")}, All)
	if err != nil {
		t.Fatal(err)
	}
	id, s, err := db.CreateSession(ctx, uid, time.Hour)
	if err != nil || s.Principal.ID != uid || s.CSRFToken == "" || s.CSRFToken == id {
		t.Fatalf("CreateSession: %v %v", s, err)
	}
	if got, err := db.SessionByID(ctx, id); err != nil || got.CSRFToken != s.CSRFToken || !got.Principal.WriteEnabled {
		t.Errorf("SessionByID: %v %v", got, err)
	}
	if _, err := db.SessionByID(ctx, id+"x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	now = now.Add(time.Hour)
	if _, err := db.SessionByID(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired session: %v", err)
	}
	if n, err := db.DeleteExpiredSessions(ctx); n != 1 || err != nil {
		t.Errorf("DeleteExpiredSessions: %d %v", n, err)
	}
}
