//go:build !windows

package main

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookReceiver is a webhook receiver on 127.0.0.1 that checks each request's
// X-Hook-Signature against its own HMAC-SHA512 of the body.
type hookReceiver struct {
	url, secret string
	mu          sync.Mutex
	got         []map[string]any
	bad         []string
}

func newHookReceiver(t *testing.T, secret string) *hookReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := &hookReceiver{url: "http://" + ln.Addr().String() + "/hook", secret: secret}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha512.New, []byte(rc.secret))
		mac.Write(body)
		var m map[string]any
		err := json.Unmarshal(body, &m)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		switch {
		case rc.secret != "" && r.Header.Get("X-Hook-Signature") != hex.EncodeToString(mac.Sum(nil)):
			rc.bad = append(rc.bad, "bad signature: "+string(body))
		case err != nil:
			rc.bad = append(rc.bad, "not JSON: "+string(body))
		default:
			m["_x_device"] = r.Header.Get("X-Device")
			rc.got = append(rc.got, m)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return rc
}

// wait waits for n requests (and a moment more, to see no more come).
func (rc *hookReceiver) wait(t *testing.T, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		rc.mu.Lock()
		got, bad := append([]map[string]any(nil), rc.got...), rc.bad
		rc.mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("the receiver refused: %v", bad)
		}
		if len(got) >= n || time.Now().After(deadline) {
			time.Sleep(300 * time.Millisecond)
			rc.mu.Lock()
			got = append([]map[string]any(nil), rc.got...)
			rc.mu.Unlock()
			if len(got) != n {
				t.Fatalf("the receiver got %d requests, want %d: %v", len(got), n, got)
			}
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWebhookClients configures webhooks the way NetBox users do, against a started
// `fieldkit serve`, unchanged: pynetbox makes a webhook and an event rule as on NetBox 4
// (testdata/pynetbox/webhooks.py), Debian's Ansible (its bundled netbox.netbox
// collection, whose netbox_webhook module speaks NetBox 3) makes a webhook with its own
// triggers; then failed executions on a simulated device reach both receivers, signed.
func TestWebhookClients(t *testing.T) {
	python := os.Getenv("FIELDKIT_TEST_PYTHON")
	playbookBin, ansibleErr := exec.LookPath("ansible-playbook")
	switch {
	case python == "" || ansibleErr != nil:
		msg := "FIELDKIT_TEST_PYTHON (a python3 with pynetbox) or ansible-playbook missing; start the peers with: " +
			"bash .ci/peers.sh start; source <(bash .ci/peers.sh env)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	case testing.Short():
		t.Skip("starts the server and runs Python and Ansible: not in -short")
	}
	l := newLab(t, 0)
	s := startServer(t, l, []string{"FIELDKIT_WEBHOOKS_RETRY_MIN=200ms"})
	api := apiClient{t: t, base: s.base, token: l.token}
	bogus := api.post("/api/plugins/toolkit/commands/", map[string]any{"name": "Bogus", "command": "show bogus",
		"platforms": []any{1}})
	fail := func() {
		t.Helper()
		m := api.do("POST", fmt.Sprintf("/api/plugins/toolkit/commands/%v/execute/", bogus), map[string]any{
			"device_id": l.deviceID, "credential_token": l.credToken}, 200)
		if m["success"] != false {
			t.Fatalf("show bogus succeeded: %v", m)
		}
	}

	// pynetbox, NetBox 4's way.
	noc := newHookReceiver(t, "N0c-Secret")
	script := exec.Command(python, filepath.Join("testdata", "pynetbox", "webhooks.py"), s.base, l.token, noc.url, noc.secret)
	script.Env = serverEnv()
	out, err := script.Output()
	if err != nil {
		t.Fatalf("webhooks.py: %v\n%s", err, out)
	}
	fail()
	got := noc.wait(t, 1)[0]
	if got["text"] != "Bogus failed on slow-1" || got["state"] != "firing" || !strings.Contains(got["error"].(string), "Invalid input") ||
		got["_x_device"] != "slow-1" {
		t.Fatalf("the NOC's webhook: %v", got)
	}

	// Ansible's netbox_webhook (NetBox 3's fields): created, then found unchanged.
	siem := newHookReceiver(t, "")
	dir := t.TempDir()
	playbook := filepath.Join(dir, "webhook.yml")
	writeHookPlaybook(t, playbook, s.base, l.token, siem.url, "present")
	ansibleEnv := append(serverEnv(), "HOME="+dir, "ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, "ansible-tmp"), "ANSIBLE_NOCOLOR=1",
		"ANSIBLE_PYTHON_INTERPRETER="+ansiblePython())
	play := func() string {
		t.Helper()
		cmd := exec.Command(playbookBin, "-i", "localhost,", "-c", "local", playbook)
		cmd.Env, cmd.Dir = ansibleEnv, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ansible-playbook: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := play(); !regexp.MustCompile(`changed=1\b`).MatchString(out) {
		t.Fatalf("netbox_webhook did not create the webhook:\n%s", out)
	}
	if out := play(); !regexp.MustCompile(`changed=0\b`).MatchString(out) {
		t.Fatalf("netbox_webhook's second run changed something:\n%s", out)
	}
	// The next failure reaches the SIEM (its webhook's first); the NOC heard of this
	// device's failing command already and hears nothing more until it recovers.
	fail()
	got = siem.wait(t, 1)[0]
	if got["event"] != "created" || got["model"] != "commandlog" || got["data"].(map[string]any)["success"] != false {
		t.Fatalf("the SIEM's webhook: %v", got)
	}
	noc.wait(t, 1)
	writeHookPlaybook(t, playbook, s.base, l.token, siem.url, "absent")
	if out := play(); !regexp.MustCompile(`changed=1\b`).MatchString(out) {
		t.Fatalf("netbox_webhook state absent did not delete:\n%s", out)
	}
}

func writeHookPlaybook(t *testing.T, path, base, token, url, state string) {
	t.Helper()
	writeFile(t, path, fmt.Sprintf(`- hosts: localhost
  gather_facts: false
  tasks:
    - netbox.netbox.netbox_webhook:
        netbox_url: %s
        netbox_token: %s
        data:
          name: SIEM
          content_types:
            - netbox_toolkit_plugin.commandlog
          type_create: true
          payload_url: %s
          http_method: POST
          http_content_type: application/json
          ssl_verification: true
        state: %s
`, base, token, url, state))
}
