package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"

	"fieldkit/exec/devsim"
	"fieldkit/store"
)

// The demo devices are simulated in this process; their login is a fixed demo value
// because they exist only while the demo runs.
const (
	demoDeviceUser = "fieldkit"
	demoDevicePass = "demo-device-password"
	demoEnable     = "demo-enable-secret"
)

// demoDevice is one simulated device of the demo and its inventory.
type demoDevice struct {
	name, vendor, platform string
	ifaces                 []string
}

var demoDevices = []demoDevice{
	{"demo-ios-1", "cisco_ios", "Cisco IOS", []string{"GigabitEthernet1/0/1", "GigabitEthernet1/0/2", "GigabitEthernet1/0/3", "GigabitEthernet1/0/4"}},
	{"demo-eos-1", "arista_eos", "Arista EOS", []string{"Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4"}},
	{"demo-junos-1", "juniper_junos", "Juniper Junos", []string{"ge-0/0/0", "ge-0/0/1", "ge-0/0/2", "ge-0/0/3"}},
}

// seedDemo makes a newcomer productive in one command: it starts simulated devices and
// seeds (idempotently) an admin, inventory that points at the devices, commands with
// variables, a credential set and sample logs, then prints how to use them. What it
// prints to log in with is kept in the data directory, so a restart prints the same
// login and tokens; reset makes new ones. The returned function stops the devices.
func seedDemo(ctx context.Context, e env, db *store.DB, kr *store.Keyring, cfg Config, base string, reset bool) (func(), error) {
	s := &seeder{ctx: ctx, db: db}
	keep := filepath.Join(cfg.Server.Data, "demo", demoSecretsFile)
	prev, err := readDemoSecrets(keep)
	if err != nil {
		return nil, err
	}
	if reset {
		if err := s.forgetToken(prev.APITokenID); err != nil {
			return nil, err
		}
		prev = demoSecrets{}
	}
	admin, adminPass := s.admin(prev.AdminPassword)
	siteID := s.ref(store.TypeSite, map[string]any{"slug": "demo-lab"}, func() (int64, error) {
		return db.Create(ctx, store.Sites, store.Values{"name": "Demo Lab", "slug": "demo-lab", "description": "simulated devices"}, store.All)
	})
	vlans := []int64{s.vlan(siteID, 10, "USERS"), s.vlan(siteID, 20, "VOICE")}
	var devs []*devsim.Device
	stop := func() {
		for _, d := range devs {
			d.Close()
		}
	}
	platforms := map[string]int64{}
	var deviceIDs []int64
	for _, dd := range demoDevices {
		platforms[dd.vendor] = s.platform(dd.platform, dd.vendor)
		d, err := startDemoDevice(cfg.Server.Data, dd)
		if err != nil {
			stop()
			return nil, err
		}
		devs = append(devs, d)
		deviceIDs = append(deviceIDs, s.device(dd, siteID, platforms[dd.vendor], d.Port(), vlans))
	}
	cmdIDs := s.commands(platforms)
	credToken := s.credentials(kr, admin, platforms, prev.CredentialToken)
	s.schedule(kr, admin, siteID, cmdIDs[0])
	s.sampleLogs(admin, deviceIDs, cmdIDs)
	tokenID, key := s.apiToken(admin, prev.APITokenID, prev.APIToken)
	if s.err != nil {
		stop()
		return nil, s.err
	}
	now := demoSecrets{AdminPassword: adminPass, APIToken: key, APITokenID: tokenID, CredentialToken: credToken}
	if adminPass == "" {
		now.AdminPassword = prev.AdminPassword // changed since; kept only to recognise it
	}
	if now != prev {
		if err := writeDemoSecrets(keep, now); err != nil {
			stop()
			return nil, err
		}
	}
	printDemo(e, base, keep, adminPass, key, credToken, devs, deviceIDs[0], cmdIDs[0])
	return stop, nil
}

// printDemo says how to use the demo.
func printDemo(e env, base, keep, adminPass, key, credToken string, devs []*devsim.Device, deviceID, cmdID int64) {
	w := e.stdout
	fmt.Fprintf(w, "\nFieldKit demo is ready at %s\n\n", base)
	if adminPass != "" {
		fmt.Fprintf(w, "  web UI:            %s/  (admin / %s)\n", base, adminPass)
	} else {
		fmt.Fprintf(w, "  web UI:            %s/  (admin's password was changed since the demo set it; --demo-reset sets a new one)\n", base)
	}
	fmt.Fprintf(w, "  API token:         %s\n", key)
	fmt.Fprintf(w, "  credential token:  %s\n", credToken)
	fmt.Fprintf(w, "  API reader:        %s/api/docs/\n", base)
	fmt.Fprintf(w, "  simulated devices: ")
	for i, d := range devs {
		fmt.Fprintf(w, "%s (%s) ", demoDevices[i].name, d.Addr())
	}
	fmt.Fprintf(w, "\n\nThese stay the same at every restart (kept in %s);\n--demo-reset makes new ones.\n", keep)
	fmt.Fprintf(w, "\nRun \"show version\" on %s:\n\n", demoDevices[0].name)
	fmt.Fprintf(w, "  curl -s -X POST -H 'Authorization: Token %s' -H 'Content-Type: application/json' \\\n"+
		"    -d '{\"device_id\": %d, \"credential_token\": \"%s\"}' \\\n    %s/api/plugins/toolkit/commands/%d/execute/\n\n",
		key, deviceID, credToken, base, cmdID)
}

// demoSecretsFile holds, in the data directory's demo folder, what the demo printed to
// log in with.
const demoSecretsFile = "credentials.json"

// demoSecrets is what the demo prints to log in with. The file keeps the API token in
// clear (the database keeps only its hash, as for every token): a convenience of a demo
// on one machine, readable by its owner only (0600), never how a real install keeps
// tokens.
type demoSecrets struct {
	AdminPassword   string `json:"admin_password"`
	APIToken        string `json:"api_token"`
	APITokenID      int64  `json:"api_token_id"`
	CredentialToken string `json:"credential_token"`
}

func readDemoSecrets(path string) (demoSecrets, error) {
	var d demoSecrets
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return demoSecrets{}, fmt.Errorf("%s: %w (delete it or start with --demo-reset)", path, err)
	}
	return d, nil
}

// writeDemoSecrets replaces the file whole (a new file renamed over the old), readable
// by its owner only.
func writeDemoSecrets(path string, d demoSecrets) error {
	raw, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// startDemoDevice starts one simulated device with a host key kept in the data
// directory, so that the trust-on-first-use key stays valid across restarts.
func startDemoDevice(data string, dd demoDevice) (*devsim.Device, error) {
	signer, err := demoHostKey(filepath.Join(data, "demo", dd.name+".key"))
	if err != nil {
		return nil, err
	}
	var ifs []devsim.Interface
	for i, n := range dd.ifaces {
		ifs = append(ifs, devsim.Interface{Name: n, Enabled: true, Mode: "access", VLAN: 10 + 10*(i%2),
			Description: []string{"uplink", "desk 12", "printer", "spare"}[i]})
	}
	return devsim.Start(devsim.Config{Vendor: dd.vendor, Hostname: dd.name, Username: demoDeviceUser,
		Password: demoDevicePass, EnableSecret: demoEnable, HostKey: signer, Interfaces: ifs,
		VLANs: []devsim.VLAN{{ID: 1, Name: "default"}, {ID: 10, Name: "USERS"}, {ID: 20, Name: "VOICE"}}})
}

func demoHostKey(path string) (ssh.Signer, error) {
	if raw, err := os.ReadFile(path); err == nil {
		return ssh.ParsePrivateKey(raw)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "fieldkit demo device")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(priv)
}

// seeder creates what is missing and remembers the first error, so the seeding reads
// as a list of things the demo has.
type seeder struct {
	ctx context.Context
	db  *store.DB
	err error
}

// ref finds an object by unique fields, or creates it.
func (s *seeder) ref(objectType string, attrs map[string]any, create func() (int64, error)) int64 {
	if s.err != nil {
		return 0
	}
	id, err := s.db.ResolveRef(s.ctx, objectType, attrs)
	if errors.Is(err, store.ErrNotFound) {
		id, err = create()
	}
	if err != nil {
		s.err = fmt.Errorf("%s %v: %w", objectType, attrs, err)
	}
	return id
}

// user makes (or finds) a superuser and sets its password.
func (s *seeder) user(name, password string) int64 {
	id := s.ref(store.TypeUser, map[string]any{"username": name}, func() (int64, error) {
		return s.db.CreateUser(s.ctx, store.UserInput{Username: &name, Password: &password, IsSuperuser: ptr(true)}, store.All)
	})
	if s.err == nil {
		s.err = s.db.SetPassword(s.ctx, id, password)
	}
	return id
}

// admin makes sure the demo's superuser exists and returns its id and password: the
// one given when it still logs in, else a new one. A password someone changed since the
// demo set it is left alone, and "" returned.
func (s *seeder) admin(password string) (int64, string) {
	if s.err != nil {
		return 0, ""
	}
	id, err := s.db.UserIDByName(s.ctx, "admin")
	switch {
	case errors.Is(err, store.ErrNotFound):
		password = randomPassword()
		id, err = s.db.CreateUser(s.ctx, store.UserInput{Username: ptr("admin"), Password: &password, IsSuperuser: ptr(true)}, store.All)
		s.err = err
		return id, password
	case err != nil:
		s.err = err
		return 0, ""
	case password == "":
		password = randomPassword()
		s.err = s.db.SetPassword(s.ctx, id, password)
		return id, password
	}
	if _, err := s.db.CheckPassword(s.ctx, "admin", password); errors.Is(err, store.ErrBadLogin) || errors.Is(err, store.ErrInactive) {
		return id, ""
	} else if err != nil {
		s.err = err
	}
	return id, password
}

// apiToken returns the demo's API token: the kept one while it still authenticates the
// admin, else a new one.
func (s *seeder) apiToken(admin, id int64, key string) (int64, string) {
	if s.err != nil {
		return 0, ""
	}
	if key != "" {
		p, err := s.db.Authenticate(s.ctx, key)
		if err == nil && p.ID == admin {
			return id, key
		}
	}
	id, key, err := s.db.CreateToken(s.ctx, store.TokenInput{UserID: admin, WriteEnabled: true, Description: "demo"}, store.All)
	s.err = err
	return id, key
}

// forgetToken deletes the token a reset replaces, so that resets do not pile tokens up.
func (s *seeder) forgetToken(id int64) error {
	if id == 0 {
		return nil
	}
	if err := s.db.Delete(s.ctx, store.Tokens, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("demo: delete the old API token: %w", err)
	}
	return nil
}

func (s *seeder) vlan(site, vid int64, name string) int64 {
	return s.ref(store.TypeVLAN, map[string]any{"vid": vid, "site": site}, func() (int64, error) {
		return s.db.Create(s.ctx, store.VLANs, store.Values{"vid": vid, "name": name, "site": site}, store.All)
	})
}

func (s *seeder) platform(name, driver string) int64 {
	return s.ref(store.TypePlatform, map[string]any{"slug": driver}, func() (int64, error) {
		return s.db.Create(s.ctx, store.Platforms, store.Values{"name": name, "slug": driver, "driver": driver}, store.All)
	})
}

// device registers a simulated device: interfaces, its loopback address as primary IP,
// and the port it listens on this run.
func (s *seeder) device(dd demoDevice, site, platform int64, port int, vlans []int64) int64 {
	id := s.ref(store.TypeDevice, map[string]any{"name": dd.name}, func() (int64, error) {
		return s.db.Create(s.ctx, store.Devices, store.Values{"name": dd.name, "site": site, "status": "active",
			"platform": platform, "description": "simulated " + dd.vendor + " device"}, store.All)
	})
	for i, n := range dd.ifaces {
		v := vlans[i%2]
		ifc := s.ref(store.TypeInterface, map[string]any{"device": id, "name": n}, func() (int64, error) {
			return s.db.Create(s.ctx, store.Interfaces, store.Values{"device": id, "name": n, "type": "1000base-t",
				"enabled": true, "mode": "access", "untagged_vlan": v}, store.All)
		})
		if i == 0 {
			ip := s.ref(store.TypeIPAddress, map[string]any{"assigned_object_id": ifc}, func() (int64, error) {
				return s.db.Create(s.ctx, store.IPAddresses, store.Values{"address": "127.0.0.1/8", "status": "active",
					"assigned_object_id": ifc}, store.All)
			})
			if s.err == nil {
				s.err = s.db.Update(s.ctx, store.Devices, id, store.Values{"primary_ip4": ip,
					"custom_fields": store.Patch{"ssh_port": port}}, store.All)
			}
		}
	}
	return id
}

// commands seeds a few commands, the first being "show version" on every platform.
func (s *seeder) commands(p map[string]int64) []int64 {
	all := []int64{p["cisco_ios"], p["arista_eos"], p["juniper_junos"]}
	sw := []int64{p["cisco_ios"], p["arista_eos"]}
	iface := store.Values{"name": "interface", "display_name": "Interface", "variable_type": "inventory_interface",
		"help_text": "an interface of the device"}
	defs := []struct {
		name, text, typ, desc string
		platforms             []int64
		vars                  []store.Values
	}{
		{"Show version", "show version", "show", "software and hardware of the device", all, nil},
		{"Interface status", "show interfaces status", "show", "state, VLAN and speed of every port", sw, nil},
		{"One interface's addressing", "show ip interface brief | include <interface>", "show", "one port's line of show ip interface brief", sw, []store.Values{iface}},
		{"VLANs", "show vlan brief", "show", "VLANs and their ports", []int64{p["cisco_ios"]}, nil},
		{"Interfaces (Junos)", "show interfaces terse", "show", "interfaces and addresses", []int64{p["juniper_junos"]}, nil},
		{"Set interface description", "interface <interface>\n description <description>", "config", "label a port", sw,
			[]store.Values{iface, {"name": "description", "display_name": "Description"}}},
		{"Tech support", "show tech-support", "show", "everything the device says about itself; slow, as on a real device: watch it stream", sw, nil},
	}
	var ids []int64
	for _, d := range defs {
		d := d
		ids = append(ids, s.ref(store.TypeCommand, map[string]any{"name": d.name}, func() (int64, error) {
			return s.db.Create(s.ctx, store.Commands, store.Values{"name": d.name, "command": d.text, "command_type": d.typ,
				"description": d.desc, "platforms": d.platforms, "variables": d.vars}, store.All)
		}))
	}
	return ids
}

// credentials makes (once) the admin's credential set for the simulated devices and
// returns its token: the kept one while it is still the set's, else a new one (a token is
// shown only when made, so a lost one is regenerated).
func (s *seeder) credentials(kr *store.Keyring, owner int64, p map[string]int64, kept string) string {
	if s.err != nil {
		return ""
	}
	sets, err := s.db.CredentialSets(s.ctx, owner)
	if err != nil {
		s.err = err
		return ""
	}
	for _, set := range sets {
		if set.Name != "Demo devices" {
			continue
		}
		if kept != "" {
			if sec, err := s.db.CredentialByToken(s.ctx, kr, kept); err == nil && sec.SetID == set.ID {
				return kept
			}
		}
		tok, err := s.db.RegenerateCredentialToken(s.ctx, owner, set.ID)
		s.err = err
		return tok
	}
	_, tok, err := s.db.CreateCredentialSet(s.ctx, kr, owner, store.CredentialInput{Name: ptr("Demo devices"),
		Description: ptr("login of the simulated demo devices"), Username: ptr(demoDeviceUser),
		Password: ptr(demoDevicePass), EnableSecret: ptr(demoEnable)})
	s.err = err
	return tok
}

// schedule makes (once) a service credential set for the simulated devices and two
// schedules with it: Show version on the demo site every night, and its config backup.
func (s *seeder) schedule(kr *store.Keyring, admin, site, cmd int64) {
	if s.err != nil {
		return
	}
	set := s.ref(store.TypeCredentialSet, map[string]any{"name": "Demo service", "service": true}, func() (int64, error) {
		return s.db.CreateServiceCredentialSet(s.ctx, kr, admin, store.CredentialInput{Name: ptr("Demo service"),
			Description: ptr("unattended login of the simulated devices, for schedules"), Username: ptr(demoDeviceUser),
			Password: ptr(demoDevicePass), EnableSecret: ptr(demoEnable)}, store.True)
	})
	s.ref(store.TypeSchedule, map[string]any{"name": "Nightly version check"}, func() (int64, error) {
		return s.db.Create(s.ctx, store.Schedules, store.Values{"name": "Nightly version check", "command": cmd,
			"description": "show version on every device of the demo site, at 02:00", "cron": "0 2 * * *",
			"sites": []int64{site}, "credential_set": set, "owner_id": admin}, store.All)
	})
	s.ref(store.TypeSchedule, map[string]any{"name": "Nightly config backup"}, func() (int64, error) {
		return s.db.Create(s.ctx, store.Schedules, store.Values{"name": "Nightly config backup", "kind": "config_backup",
			"description": "the running configuration of every device of the demo site, at 03:00", "cron": "0 3 * * *",
			"sites": []int64{site}, "credential_set": set, "owner_id": admin}, store.All)
	})
}

// sampleLogs writes a day and a half of history once, so statistics have something to show.
func (s *seeder) sampleLogs(user int64, devices, commands []int64) {
	if s.err != nil {
		return
	}
	counts, err := s.db.Counts(s.ctx)
	if err != nil || counts["command_logs"] > 0 {
		s.err = err
		return
	}
	names := []string{"Show version", "Interface status", "One interface's addressing", "VLANs"}
	now := time.Now().UTC()
	var logs []store.Values
	for i := 0; i < 60; i++ {
		at := now.Add(-time.Duration(i*53) * time.Minute)
		ok := i%7 != 3
		l := store.Values{"command": commands[i%4], "command_name": names[i%4], "command_type": "show",
			"device": devices[i%2], "device_name": demoDevices[i%2].name, "user": user, "username": "admin",
			"output": "(sample history)", "success": ok, "execution_duration": float64(2+i%5) / 10, "created": at}
		if !ok {
			l["error_message"] = "Syntax error detected: % Invalid input detected at '^' marker."
		}
		logs = append(logs, l)
	}
	s.err = s.db.InsertLogs(s.ctx, logs)
}

func ptr[T any](v T) *T { return &v }
