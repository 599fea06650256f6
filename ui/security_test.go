package ui

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"fieldkit/store"
)

// The finding: 200 simultaneous logins for one user were all checked against the
// password, since each saw fewer than five recorded failures, and the right password
// sent among them got in. Attempts beyond the limit, in flight or failed, are refused
// without a password check.
func TestLoginThrottleIsAtomic(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.user("alice", "right password", false)
	const n = 200
	statuses := make([]int, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			body := `{"username": "alice", "password": "wrong"}`
			req, _ := http.NewRequest("POST", e.srv.URL+"/ui/login", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			start.Wait()
			res, err := e.srv.Client().Do(req)
			if err != nil {
				return
			}
			res.Body.Close()
			statuses[i] = res.StatusCode
		}()
	}
	start.Done()
	done.Wait()
	byStatus := map[int]int{}
	for _, s := range statuses {
		byStatus[s]++
	}
	// A 401 is a password checked and found wrong: at most five of the burst may be
	// checked, the rest are refused unchecked. (The right password stays out of the
	// burst: a success resets the count, as any successful login does, which would let
	// a few more be checked and make the bound depend on the order of arrival.)
	if byStatus[401] > loginFailures || byStatus[401]+byStatus[429] != n {
		t.Errorf("statuses of %d simultaneous logins: %v; at most %d may be checked and fail", n, byStatus, loginFailures)
	}
	// Once five failed, the right password is refused as well.
	b := e.browser()
	if r := b.do("POST", "/ui/login", map[string]any{"username": "alice", "password": "right password"}); r.status != 429 {
		t.Errorf("the right password after the burst: %d", r.status)
	}
}

// The finding: a password change left the user's other sessions alive. Changing a
// password, or deactivating the user, ends every session of theirs.
func TestPasswordChangeAndDeactivationEndSessions(t *testing.T) {
	e := newEnv(t, envOptions{})
	_, admin := e.user("admin", "pw", true)
	aliceID, _ := e.user("alice", "old password", false)
	e.grant(aliceID, store.TypeUser, "view")
	laptop, phone := e.browser(), e.browser()
	laptop.login("alice", "old password")
	phone.login("alice", "old password")
	phone.must(200, "GET", "/api/users/users/", nil)

	api := func(method, path string, body string) {
		req, _ := http.NewRequest(method, e.srv.URL+path, bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Token "+admin)
		req.Header.Set("Content-Type", "application/json")
		res, err := e.srv.Client().Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%s %s: %v %v", method, path, res.StatusCode, err)
		}
		res.Body.Close()
	}
	api("PATCH", fmt.Sprintf("/api/users/users/%d/", aliceID), `{"password": "new password"}`)
	for name, b := range map[string]*browser{"laptop": laptop, "phone": phone} {
		if r := b.do("GET", "/api/users/users/", nil); r.status != 401 {
			t.Errorf("%s's session after the password change: %d %s", name, r.status, r.body)
		}
	}
	// The store's own password change (the command line) ends them too.
	laptop.login("alice", "new password")
	if err := e.db.SetPassword(context.Background(), aliceID, "newer password"); err != nil {
		t.Fatal(err)
	}
	if r := laptop.do("GET", "/ui/session", nil); r.status != 401 {
		t.Errorf("session after SetPassword: %d", r.status)
	}

	// Deactivating ends them for good: reactivating does not bring them back.
	laptop.login("alice", "newer password")
	api("PATCH", fmt.Sprintf("/api/users/users/%d/", aliceID), `{"is_active": false}`)
	api("PATCH", fmt.Sprintf("/api/users/users/%d/", aliceID), `{"is_active": true}`)
	if r := laptop.do("GET", "/api/users/users/", nil); r.status != 401 {
		t.Errorf("session after deactivation and reactivation: %d %s", r.status, r.body)
	}
	// Other edits leave sessions alone.
	laptop.login("alice", "newer password")
	api("PATCH", fmt.Sprintf("/api/users/users/%d/", aliceID), `{"first_name": "Alice"}`)
	laptop.must(200, "GET", "/api/users/users/", nil)
}
