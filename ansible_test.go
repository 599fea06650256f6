//go:build !windows

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestAnsibleNetBoxCollection runs Debian's Ansible with its bundled netbox.netbox
// collection against a started `fieldkit serve`, unmodified: the README's
// nb_inventory file lists every device grouped by site and platform with ansible_host
// and ansible_port, an inventory file with only api_endpoint and token lists them all,
// and the netbox_device module creates a device with `status: active` (reading the
// choices from OPTIONS), then finds it unchanged on a second run.
func TestAnsibleNetBoxCollection(t *testing.T) {
	missing := func(msg string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	inventoryBin, err := exec.LookPath("ansible-inventory")
	if err != nil {
		missing("ansible-inventory not found: apt-get install ansible python3-tz (bash .ci/peers.sh install)")
	}
	if testing.Short() {
		t.Skip("starts the server and runs Ansible: not in -short")
	}
	// Debian's ansible bundles the collection; ansible-core alone (pip's) does not.
	galaxy := filepath.Join(filepath.Dir(inventoryBin), "ansible-galaxy")
	if out, err := exec.Command(galaxy, "collection", "list", "netbox.netbox").CombinedOutput(); err != nil ||
		!regexp.MustCompile(`(?m)^netbox\.netbox\s`).Match(out) {
		missing("the netbox.netbox collection is not installed: apt-get install ansible (Debian's bundles it), " +
			"or ansible-galaxy collection install netbox.netbox")
	}
	t.Parallel() // Ansible's start-up is slow; let the other tests run meanwhile
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	bin := testBinary(t)
	runBin(t, bin, "admin-Pa55word\n", "user", "create", "admin", "--superuser", "--password-stdin", "--init", "--data", data)
	token := strings.TrimSpace(runBin(t, bin, "", "token", "create", "admin", "--data", data))
	base := startServe(t, bin, data)
	api := apiClient{t: t, base: base, token: token}

	paris := api.post("/api/dcim/sites/", map[string]any{"name": "Paris 1", "slug": "paris-1"})
	lyon := api.post("/api/dcim/sites/", map[string]any{"name": "Lyon", "slug": "lyon"})
	ios := api.post("/api/dcim/platforms/", map[string]any{"name": "Cisco IOS", "slug": "cisco_ios"})
	eos := api.post("/api/dcim/platforms/", map[string]any{"name": "Arista EOS", "slug": "arista_eos"})
	devices := []struct {
		name       string
		site, plat float64
		addr       string
		port       any
	}{
		{"par-r1", paris, ios, "192.0.2.11/24", 2222},
		{"par-sw1", paris, eos, "192.0.2.12/24", nil},
		{"lyo-r1", lyon, ios, "2001:db8::21/64", 830},
	}
	for _, d := range devices {
		cf := map[string]any{}
		if d.port != nil {
			cf["ssh_port"] = d.port
		}
		dev := api.post("/api/dcim/devices/", map[string]any{"name": d.name, "site": d.site, "platform": d.plat, "custom_fields": cf})
		iface := api.post("/api/dcim/interfaces/", map[string]any{"name": "mgmt0", "device": dev, "type": "virtual"})
		ip := api.post("/api/ipam/ip-addresses/", map[string]any{"address": d.addr, "assigned_object_type": "dcim.interface",
			"assigned_object_id": iface})
		field := "primary_ip4"
		if strings.Contains(d.addr, ":") {
			field = "primary_ip6"
		}
		api.do("PATCH", fmt.Sprintf("/api/dcim/devices/%v/", dev), map[string]any{field: ip}, 200)
	}

	ansibleEnv := append(serverEnv(), "HOME="+dir, "ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, "ansible-tmp"),
		"ANSIBLE_NOCOLOR=1", "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED=1", "ANSIBLE_PYTHON_INTERPRETER="+ansiblePython())
	inventory := func(file string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(inventoryBin, append([]string{"-i", file}, args...)...)
		cmd.Env, cmd.Dir = ansibleEnv, dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("ansible-inventory %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.Bytes()
	}

	// The README's inventory file, pointed at this server.
	readmeFile := filepath.Join(dir, "fieldkit.netbox.yml")
	writeFile(t, readmeFile, readmeInventory(t, base, token))
	graph := string(inventory(readmeFile, "--graph"))
	for _, want := range []string{"@sites_paris-1:", "@sites_lyon:", "@platforms_cisco_ios:", "@platforms_arista_eos:"} {
		if !strings.Contains(graph, want) {
			t.Errorf("--graph lacks %s:\n%s", want, graph)
		}
	}
	var list struct {
		Meta struct {
			Hostvars map[string]map[string]any `json:"hostvars"`
		} `json:"_meta"`
	}
	out := inventory(readmeFile, "--list")
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("--list: %v\n%s", err, out)
	}
	var groups map[string]struct {
		Hosts []string `json:"hosts"`
	}
	_ = json.Unmarshal(out, &groups)
	for group, hosts := range map[string][]string{"sites_paris-1": {"par-r1", "par-sw1"}, "sites_lyon": {"lyo-r1"},
		"platforms_cisco_ios": {"lyo-r1", "par-r1"}, "platforms_arista_eos": {"par-sw1"}} {
		got := slices.Sorted(slices.Values(groups[group].Hosts))
		if !slices.Equal(got, hosts) {
			t.Errorf("group %s: %v, want %v", group, got, hosts)
		}
	}
	for host, want := range map[string][2]string{"par-r1": {"192.0.2.11", "2222"}, "par-sw1": {"192.0.2.12", ""},
		"lyo-r1": {"2001:db8::21", "830"}} {
		hv := list.Meta.Hostvars[host]
		if hv["ansible_host"] != want[0] {
			t.Errorf("%s: ansible_host %v, want %s", host, hv["ansible_host"], want[0])
		}
		if got := fmt.Sprint(hv["ansible_port"]); want[1] != "" && got != want[1] {
			t.Errorf("%s: ansible_port %v, want %s", host, got, want[1])
		}
	}

	// Only api_endpoint and token: every device, no error on any of the NetBox
	// endpoints FieldKit has no objects for.
	bare := filepath.Join(dir, "bare.netbox.yml")
	writeFile(t, bare, fmt.Sprintf("plugin: netbox.netbox.nb_inventory\napi_endpoint: %s\ntoken: %s\n", base, token))
	var bareList struct {
		Meta struct {
			Hostvars map[string]any `json:"hostvars"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(inventory(bare, "--list"), &bareList); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(bareList.Meta.Hostvars)); !slices.Equal(got, []string{"lyo-r1", "par-r1", "par-sw1"}) {
		t.Errorf("bare inventory hosts: %v", got)
	}

	// The netbox_device module: choices from OPTIONS, the site and platform looked up
	// by slug, then an update that changes nothing.
	playbook := filepath.Join(dir, "device.yml")
	writeFile(t, playbook, fmt.Sprintf(`- hosts: localhost
  gather_facts: false
  tasks:
    - netbox.netbox.netbox_device:
        netbox_url: %s
        netbox_token: %s
        data:
          name: par-r9
          site: Paris 1
          platform: cisco_ios
          status: active
          custom_fields:
            ssh_port: 2022
        state: present
`, base, token))
	play := func() string {
		cmd := exec.Command(filepath.Join(filepath.Dir(inventoryBin), "ansible-playbook"), "-i", "localhost,", "-c", "local", playbook)
		cmd.Env, cmd.Dir = ansibleEnv, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ansible-playbook: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := play(); !regexp.MustCompile(`changed=1\b`).MatchString(out) {
		t.Errorf("first run did not create the device:\n%s", out)
	}
	var found struct {
		Results []map[string]any `json:"results"`
	}
	api.get("/api/dcim/devices/?name=par-r9", &found)
	if len(found.Results) != 1 || found.Results[0]["status"].(map[string]any)["value"] != "active" ||
		found.Results[0]["site"].(map[string]any)["slug"] != "paris-1" ||
		found.Results[0]["custom_fields"].(map[string]any)["ssh_port"] != 2022.0 {
		t.Errorf("device made by netbox_device: %v", found.Results)
	}
	if out := play(); !regexp.MustCompile(`changed=0\b`).MatchString(out) {
		t.Errorf("second run changed the device:\n%s", out)
	}
}

// ansiblePython is the interpreter Ansible's modules run with: one with pynetbox.
func ansiblePython() string {
	if p := os.Getenv("FIELDKIT_TEST_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

// readmeInventory is the README's nb_inventory example with this server's address and
// token.
func readmeInventory(t *testing.T, base, token string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml ansible\n(plugin: netbox.netbox.nb_inventory\n.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no nb_inventory example (a ```yaml ansible block)")
	}
	s := regexp.MustCompile(`(?m)^api_endpoint: .*$`).ReplaceAllString(string(m[1]), "api_endpoint: "+base)
	return regexp.MustCompile(`(?m)^token: .*$`).ReplaceAllString(s, "token: "+token)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// apiClient makes the test's own API calls as a superuser.
type apiClient struct {
	t           *testing.T
	base, token string
}

// post creates an object and returns its id.
func (c apiClient) post(path string, body any) float64 {
	c.t.Helper()
	return c.do("POST", path, body, 201)["id"].(float64)
}

func (c apiClient) get(path string, into any) {
	c.t.Helper()
	b, _ := json.Marshal(c.do("GET", path, nil, 200))
	_ = json.Unmarshal(b, into)
}

func (c apiClient) do(method, path string, body any, want int) map[string]any {
	c.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Authorization", "Token "+c.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != want {
		c.t.Fatalf("%s %s: %d, want %d: %v", method, path, res.StatusCode, want, out)
	}
	return out
}
