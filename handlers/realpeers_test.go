package handlers

import (
	"bytes"
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"fieldkit/store"
)

// frrPeer reads the FRR peer started by .ci/peers.sh (vtysh as the login
// shell over sshd): address, user and password.
func frrPeer(t *testing.T) (host string, port int, user, password string) {
	return peerEnv(t, "FRR")
}

// sshdPeer reads the OpenSSH peer (a plain shell: the linux driver).
func sshdPeer(t *testing.T) (host string, port int, user, password string) {
	return peerEnv(t, "SSHD")
}

// peerEnv reads FIELDKIT_TEST_<prefix>_ADDR, _USER and _PASSWORD. A missing variable
// fails the run in CI and skips the test elsewhere.
func peerEnv(t *testing.T, prefix string) (host string, port int, user, password string) {
	t.Helper()
	var vals [3]string
	for i, key := range []string{"ADDR", "USER", "PASSWORD"} {
		name := "FIELDKIT_TEST_" + prefix + "_" + key
		if vals[i] = os.Getenv(name); vals[i] == "" {
			msg := name + " is not set: the real SSH peers are not running; start them with: bash .ci/peers.sh start; source <(bash .ci/peers.sh env)"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	host, p, err := net.SplitHostPort(vals[0])
	if err != nil {
		t.Fatalf("FIELDKIT_TEST_%s_ADDR: %v", prefix, err)
	}
	if port, err = strconv.Atoi(p); err != nil {
		t.Fatalf("FIELDKIT_TEST_%s_ADDR: %v", prefix, err)
	}
	return host, port, vals[1], vals[2]
}

// peerDevice registers a real peer through the inventory API as a device of the platform
// (by slug) and returns its id.
func (x *xenv) peerDevice(name, platformSlug, host string, port int) int64 {
	x.t.Helper()
	var site int64
	if x.db.Reader().QueryRow(`SELECT id FROM sites WHERE slug = 'peers'`).Scan(&site) != nil {
		site = idOf(x.must(201, "POST", "/api/dcim/sites/", x.admin, map[string]any{"name": "Peers", "slug": "peers"}))
	}
	dev := x.must(201, "POST", "/api/dcim/devices/", x.admin, map[string]any{
		"name": name, "site": site, "platform": map[string]any{"slug": platformSlug},
		"custom_fields": map[string]any{"ssh_port": port}})
	ifc := x.must(201, "POST", "/api/dcim/interfaces/", x.admin, map[string]any{"device": idOf(dev), "name": "lo"})
	ip := x.must(201, "POST", "/api/ipam/ip-addresses/", x.admin, map[string]any{
		"address": host + "/8", "assigned_object_type": "dcim.interface", "assigned_object_id": idOf(ifc)})
	x.must(200, "PATCH", "/api/dcim/devices/"+itoa(idOf(dev))+"/", x.admin, map[string]any{"primary_ip4": idOf(ip)})
	return idOf(dev)
}

// idOf is the id of an object response.
func idOf(m map[string]any) int64 { return int64(m["id"].(float64)) }

// TestExecuteOnRealFRR registers the FRR peer through the inventory API as a
// cisco_ios device and runs commands on it through execute: the whole stack
// against a real IOS-style CLI.
func TestExecuteOnRealFRR(t *testing.T) {
	host, port, user, password := frrPeer(t)
	x := newXEnv(t, 100)
	dev := map[string]any{"id": float64(x.peerDevice("frr1", "cisco_ios", host, port))}

	name := "frr"
	uid, err := x.db.UserIDByName(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := x.db.CreateCredentialSet(context.Background(), x.kr, uid,
		store.CredentialInput{Name: &name, Username: &user, Password: &password})
	if err != nil {
		t.Fatal(err)
	}

	version := x.command("FRR version", "show version", "show")
	m := x.must(200, "POST", execPath(version), x.admin, map[string]any{"device_id": idOf(dev), "credential_token": token})
	out, _ := m["output"].(string)
	if m["success"] != true || !strings.Contains(out, "FRRouting") || m["error_message"] != "" ||
		m["syntax_error"].(map[string]any)["detected"] != false {
		t.Fatalf("execute show version: %v", m)
	}
	if strings.Contains(out, "show version") || strings.HasSuffix(strings.TrimSpace(out), "#") {
		t.Errorf("echo or prompt left in output %q", out)
	}
	var logOut, devName, cmdName, username string
	var success bool
	err = x.db.Reader().QueryRow(`SELECT output, device_name, command_name, username, success FROM command_logs WHERE id = ?`,
		int64(m["command_log_id"].(float64))).Scan(&logOut, &devName, &cmdName, &username, &success)
	if err != nil {
		t.Fatalf("log row: %v", err)
	}
	if !success || logOut != out || devName != "frr1" || cmdName != "FRR version" || username != "admin" {
		t.Errorf("log row: success %v device %q command %q user %q output %q", success, devName, cmdName, username, logOut)
	}

	bogus := x.command("FRR bogus", "show fieldkit-bogus", "show")
	m = x.must(200, "POST", execPath(bogus), x.admin, map[string]any{"device_id": idOf(dev), "credential_token": token})
	se := m["syntax_error"].(map[string]any)
	if m["success"] != false || se["detected"] != true || se["type"] != "unknown_command" || se["vendor"] != "cisco_ios" ||
		se["line"] != "% Unknown command: show fieldkit-bogus" {
		t.Errorf("execute an unknown command: %v", m)
	}

	for _, f := range []string{x.db.Path(), x.db.Path() + "-wal"} {
		raw, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(password)) || bytes.Contains(raw, []byte(token)) {
			t.Errorf("%s holds the FRR password or the credential token", f)
		}
	}
	if strings.Contains(x.logs.String(), password) {
		t.Error("the FRR password reached the server log")
	}
}
