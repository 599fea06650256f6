package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"gopkg.in/yaml.v3"

	"fieldkit/events"
	"fieldkit/netbox"
	"fieldkit/schedules"
)

// Config is every setting of FieldKit. Each key is settable in the YAML file as
// section.key, and as the environment variable FIELDKIT_<SECTION>_<KEY>; flags win over
// the environment, the environment over the file, the file over the defaults. A key
// tagged reload:"true" takes effect on SIGHUP; any other needs a restart. Adding a
// setting is adding a field here (with its default below and its check in validate).
type Config struct {
	Server    ServerConfig    `yaml:"server"`
	Log       LogConfig       `yaml:"log"`
	Exec      ExecConfig      `yaml:"exec"`
	SSH       SSHConfig       `yaml:"ssh"`
	RateLimit RateLimitConfig `yaml:"rate_limit"`
	Logs      LogsConfig      `yaml:"logs"`
	Export    ExportConfig    `yaml:"export"`
	TextFSM   TextFSMConfig   `yaml:"textfsm"`
	UI        UIConfig        `yaml:"ui"`
	Metrics   MetricsConfig   `yaml:"metrics"`
	Inventory InventoryConfig `yaml:"inventory"`
	Schedules SchedulesConfig `yaml:"schedules"`
	Webhooks  WebhooksConfig  `yaml:"webhooks"`
	Hub       HubConfig       `yaml:"hub"`
	Store     StoreConfig     `yaml:"store"`
	Backup    BackupConfig    `yaml:"config_backup"`
}

// ServerConfig is the HTTP server.
type ServerConfig struct {
	Listen          string        `yaml:"listen" doc:"address to listen on"`
	Data            string        `yaml:"data" doc:"data directory (database, secret.key, exports); also FIELDKIT_DATA and --data"`
	TLSCert         string        `yaml:"tls_cert" doc:"PEM certificate file; with tls_key, serve HTTPS"`
	TLSKey          string        `yaml:"tls_key" doc:"PEM private key file"`
	TimeZone        string        `yaml:"time_zone" doc:"IANA time zone for export date filters and schedules"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout" doc:"how long a stop waits for running requests and executions; keep it above 5m, the longest execution"`
}

// LogConfig is the process log.
type LogConfig struct {
	Format    string `yaml:"format" doc:"text or json"`
	Level     string `yaml:"level" reload:"true" doc:"debug, info, warn or error"`
	File      string `yaml:"file" doc:"write the log to this file, rotated by size; \"\" = stderr (the journal under systemd; <data>/fieldkit.log as a SysV or Windows service)"`
	MaxSizeMB int    `yaml:"max_size_mb" doc:"rotate the log file when it reaches this many megabytes"`
	Keep      int    `yaml:"keep" doc:"rotated log files kept beside the current one"`
}

// ExecConfig bounds command execution.
type ExecConfig struct {
	MaxOutputBytes    int           `yaml:"max_output_bytes" doc:"output kept per execution; longer output is cut and marked"`
	BulkMax           int           `yaml:"bulk_max" doc:"most executions in one bulk-execute request"`
	BulkConcurrency   int           `yaml:"bulk_concurrency" doc:"bulk executions running at once"`
	SessionIdle       time.Duration `yaml:"session_idle" reload:"true" doc:"how long an SSH session stays open unused, for the next execution on its device with the same credential set; 0 closes each session after use"`
	SessionsPerDevice int           `yaml:"sessions_per_device" reload:"true" doc:"SSH sessions open at once per device, in use or idle, so its few vty lines stay free for people; an execution that finds them all in use waits for one within its timeout"`
}

// BackupConfig is what a config backup's read must pass before it is kept as a version.
type BackupConfig struct {
	MinLines         int           `yaml:"min_lines" doc:"a configuration of fewer lines is quarantined, not kept (a cut or empty read)"`
	MaxShrinkPercent int           `yaml:"max_shrink_percent" doc:"a configuration that lost more than this share of its lines against the last version, with no FieldKit config execution between, is quarantined; 100 turns the check off"`
	MaxAge           time.Duration `yaml:"max_age" doc:"a device whose last good backup is older than this is stale (/metrics, the backup health list, the backup_stale event); a site's custom field backup_max_age_hours overrides it"`
}

// SSHConfig is the SSH client policy.
type SSHConfig struct {
	HostKeyPolicy string `yaml:"host_key_policy" doc:"tofu, strict or insecure"`
}

// RateLimitConfig is the per-device rate limit of successful executions.
type RateLimitConfig struct {
	Enabled            bool     `yaml:"enabled" reload:"true" doc:"apply the per-device rate limit"`
	DeviceCommandLimit int      `yaml:"device_command_limit" reload:"true" doc:"successful executions per device per window"`
	TimeWindowMinutes  int      `yaml:"time_window_minutes" reload:"true" doc:"window length in minutes"`
	BypassUsers        []string `yaml:"bypass_users" reload:"true" doc:"usernames the limit does not apply to (comma-separated in the environment)"`
	BypassGroups       []string `yaml:"bypass_groups" reload:"true" doc:"group names the limit does not apply to"`
}

// LogsConfig is command-log retention.
type LogsConfig struct {
	RetentionDays int `yaml:"retention_days" reload:"true" doc:"delete command logs older than this; 0 keeps them forever"`
}

// ExportConfig is the periodic CSV export of command logs.
type ExportConfig struct {
	Schedule  string `yaml:"schedule" reload:"true" doc:"\"\" (off), \"hourly\" or \"daily HH:MM\""`
	Directory string `yaml:"directory" reload:"true" doc:"where exports are written (default <data>/exports)"`
	Keep      int    `yaml:"keep" reload:"true" doc:"how many export files to keep"`
	BOM       bool   `yaml:"bom" reload:"true" doc:"start exported CSV files (periodic and fieldkit export) with a UTF-8 byte order mark, for Excel"`
}

// TextFSMConfig is output parsing.
type TextFSMConfig struct {
	TemplatesDir string `yaml:"templates_dir" doc:"ntc-templates style directory (with an index file) taking precedence over the built-in templates"`
}

// UIConfig is the web interface.
type UIConfig struct {
	SessionHours int `yaml:"session_hours" doc:"how long a login lasts"`
}

// MetricsConfig is the Prometheus endpoint /metrics.
type MetricsConfig struct {
	Enabled bool   `yaml:"enabled" doc:"serve /metrics in the Prometheus text format"`
	Token   string `yaml:"token" doc:"when set, /metrics requires Authorization: Bearer <token>"`
}

// InventoryConfig is the sync of the inventory from a central NetBox.
type InventoryConfig struct {
	NetBoxURL      string `yaml:"netbox_url" reload:"true" doc:"the NetBox to sync devices from (https://netbox.example.com); \"\" = no sync"`
	NetBoxToken    string `yaml:"netbox_token" reload:"true" doc:"API token of a NetBox user who may view the synced objects; never logged or shown (keep the file 0600)"`
	NetBoxFilter   string `yaml:"netbox_filter" reload:"true" doc:"NetBox device filters as a query string (site=paris-1&tag=managed); \"\" = every device"`
	NetBoxSchedule string `yaml:"netbox_schedule" reload:"true" doc:"\"\" (on demand only), \"hourly\", \"daily HH:MM\" or an interval such as 15m"`
	NetBoxCAFile   string `yaml:"netbox_ca_file" reload:"true" doc:"PEM file of the CA certificates to trust for the NetBox's HTTPS, besides the system's"`
}

// SchedulesConfig bounds the device jobs of the users' schedules, all runs together.
type SchedulesConfig struct {
	Workers          int `yaml:"workers" reload:"true" doc:"device jobs of schedule runs running at once"`
	WorkersPerSite   int `yaml:"workers_per_site" reload:"true" doc:"of those, at most this many on the devices of one site"`
	WorkersPerDriver int `yaml:"workers_per_driver" reload:"true" doc:"of those, at most this many through one driver, so that a slow driver holds only its own"`
}

// WebhooksConfig is how webhook deliveries are sent, retried and kept.
type WebhooksConfig struct {
	Timeout     time.Duration `yaml:"timeout" reload:"true" doc:"how long a receiver has to answer one request"`
	RetryMin    time.Duration `yaml:"retry_min" reload:"true" doc:"a failed delivery is tried again after this long, then twice as long at each failure"`
	RetryMax    time.Duration `yaml:"retry_max" reload:"true" doc:"the longest wait between two tries of a delivery"`
	GiveUpAfter time.Duration `yaml:"give_up_after" reload:"true" doc:"a delivery still failing this long after its event is given up (status failed)"`
	Workers     int           `yaml:"workers" reload:"true" doc:"receivers contacted at once; each webhook's deliveries go one at a time, in order"`
	KeepDays    int           `yaml:"keep_days" reload:"true" doc:"delete delivered and given-up deliveries older than this many days"`
}

func (c WebhooksConfig) events() events.Config {
	return events.Config{Timeout: c.Timeout, RetryMin: c.RetryMin, RetryMax: c.RetryMax, GiveUpAfter: c.GiveUpAfter, Workers: c.Workers}
}

func (c SchedulesConfig) limits() schedules.Limits {
	return schedules.Limits{Workers: c.Workers, PerSite: c.WorkersPerSite, PerDriver: c.WorkersPerDriver}
}

// HubConfig is the hub of many sites: this FieldKit pushes its records to one (url,
// token, ca_file), or is one (serve). See docs/HUB-PROTOCOL.md.
type HubConfig struct {
	Serve  bool   `yaml:"serve" doc:"be a hub: take the pushes of the sites made with fieldkit hub site add, and serve their devices, commands and logs"`
	URL    string `yaml:"url" doc:"the hub to push this site's logs, devices, platforms and commands to (https://hub.example.net); \"\" = none"`
	Token  string `yaml:"token" doc:"this site's token, printed by fieldkit hub site add on the hub; never logged or shown (keep the file 0600)"`
	CAFile string `yaml:"ca_file" doc:"PEM file of the CA certificates to trust for the hub's HTTPS, besides the system's"`
	// CredentialSet is a service credential set's name: the hub never holds a site's
	// device secrets.
	CredentialSet string `yaml:"credential_set" doc:"the service credential set (by name) that the commands the hub sends run with, as its owner; \"\" = the hub's jobs are refused"`
}

// StoreConfig is where the data is kept: the SQLite file of the data directory, or, for
// a hub, PostgreSQL.
type StoreConfig struct {
	Driver string `yaml:"driver" doc:"sqlite (the file fieldkit.db in the data directory) or postgres (a hub's only, with hub.serve; its sites keep SQLite)"`
	DSN    string `yaml:"dsn" doc:"with driver postgres: the database, as libpq takes it (postgres://fieldkit:PASSWORD@db.example.net:5432/fieldkit?sslmode=verify-full); never logged or shown (keep the file 0600)"`
}

// defaults is the configuration with no file, environment or flags.
func defaults() Config {
	return Config{
		Server: ServerConfig{Listen: "127.0.0.1:8080", Data: "./fieldkit-data", TimeZone: "UTC", ShutdownTimeout: 330 * time.Second},
		Log:    LogConfig{Format: "text", Level: "info", MaxSizeMB: 50, Keep: 5},
		Exec: ExecConfig{MaxOutputBytes: 16 << 20, BulkMax: 100, BulkConcurrency: 16,
			SessionIdle: 60 * time.Second, SessionsPerDevice: 1},
		SSH: SSHConfig{HostKeyPolicy: "tofu"},
		RateLimit: RateLimitConfig{Enabled: true, DeviceCommandLimit: 60, TimeWindowMinutes: 1,
			BypassUsers: []string{}, BypassGroups: []string{}},
		Export:    ExportConfig{Keep: 30},
		UI:        UIConfig{SessionHours: 12},
		Store:     StoreConfig{Driver: "sqlite"},
		Metrics:   MetricsConfig{Enabled: true},
		Schedules: SchedulesConfig{Workers: 32, WorkersPerSite: 16, WorkersPerDriver: 16},
		Webhooks: WebhooksConfig{Timeout: 10 * time.Second, RetryMin: 5 * time.Second, RetryMax: 5 * time.Minute,
			GiveUpAfter: 72 * time.Hour, Workers: 4, KeepDays: 7},
		Backup: BackupConfig{MinLines: 5, MaxShrinkPercent: 50, MaxAge: 26 * time.Hour},
	}
}

// setting is one key of the configuration, found by reflection on Config's yaml tags.
type setting struct {
	section, key, doc string
	reload            bool // takes effect on SIGHUP
	field             reflect.Value
}

func (s setting) name() string { return s.section + "." + s.key }
func (s setting) env() string {
	return "FIELDKIT_" + strings.ToUpper(s.section) + "_" + strings.ToUpper(s.key)
}

func settings(c *Config) []setting {
	var out []setting
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		sec := v.Type().Field(i).Tag.Get("yaml")
		sv := v.Field(i)
		for j := 0; j < sv.NumField(); j++ {
			f := sv.Type().Field(j)
			out = append(out, setting{section: sec, key: f.Tag.Get("yaml"), doc: f.Tag.Get("doc"),
				reload: f.Tag.Get("reload") == "true", field: sv.Field(j)})
		}
	}
	return out
}

// envIgnored are FIELDKIT_ variables that are not settings.
var envIgnored = []string{"FIELDKIT_DATA", "FIELDKIT_CONFIG", "FIELDKIT_SECRET_KEY", "FIELDKIT_BACKUP_PASSPHRASE", "FIELDKIT_TEST_", "FIELDKIT_OPENAPI_VALIDATOR", "FIELDKIT_BENCH_", "FIELDKIT_SERVICE"}

// loadConfig builds the configuration from defaults, the file (if any), the environment
// and the flags that were set. Any unknown key or bad value is an error naming it.
func loadConfig(file string, getenv func(string) string, environ []string, flags map[string]string) (Config, error) {
	c := defaults()
	byName := map[string]setting{}
	for _, s := range settings(&c) {
		byName[s.name()] = s
	}
	if file != "" {
		if err := applyFile(file, byName); err != nil {
			return c, err
		}
	}
	if err := applyEnv(getenv, environ, byName); err != nil {
		return c, err
	}
	for name, val := range flags {
		if err := setString(byName[name], val); err != nil {
			return c, fmt.Errorf("flag for %s: %w", name, err)
		}
	}
	return c, c.validate()
}

func applyFile(file string, byName map[string]setting) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var doc map[string]map[string]yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("config %s: not a map of sections to keys: %w", file, err)
	}
	for _, sec := range sortedMapKeys(doc) {
		for _, key := range sortedMapKeys(doc[sec]) {
			s, ok := byName[sec+"."+key]
			if !ok {
				return fmt.Errorf("config %s: unknown key %s.%s", file, sec, key)
			}
			node := doc[sec][key]
			if err := node.Decode(s.field.Addr().Interface()); err != nil {
				// durations are written as "30s" in YAML: decode those by hand
				if s.field.Type() == reflect.TypeOf(time.Duration(0)) {
					if err := setString(s, node.Value); err == nil {
						continue
					}
				}
				return fmt.Errorf("config %s: %s: bad value %q: want %s", file, s.name(), node.Value, kindName(s.field))
			}
		}
	}
	return nil
}

func applyEnv(getenv func(string) string, environ []string, byName map[string]setting) error {
	known := map[string]setting{}
	for _, s := range byName {
		known[s.env()] = s
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "FIELDKIT_") || ignoredEnv(k) {
			continue
		}
		s, ok := known[k]
		if !ok {
			return fmt.Errorf("environment: unknown setting %s", k)
		}
		if err := setString(s, v); err != nil {
			return fmt.Errorf("environment: %s: %w", k, err)
		}
	}
	if d := getenv("FIELDKIT_DATA"); d != "" {
		return setString(byName["server.data"], d)
	}
	return nil
}

func ignoredEnv(k string) bool {
	for _, p := range envIgnored {
		if k == p || (strings.HasSuffix(p, "_") && strings.HasPrefix(k, p)) {
			return true
		}
	}
	return false
}

// setString parses a string into the setting's field.
func setString(s setting, v string) error {
	if !s.field.IsValid() {
		return errors.New("unknown setting")
	}
	switch f := s.field.Addr().Interface().(type) {
	case *string:
		*f = v
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("bad value %q: want an integer", v)
		}
		*f = n
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("bad value %q: want true or false", v)
		}
		*f = b
	case *time.Duration:
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("bad value %q: want a duration like 30s", v)
		}
		*f = d
	case *[]string:
		*f = []string{}
		for _, part := range strings.Split(v, ",") {
			if p := strings.TrimSpace(part); p != "" {
				*f = append(*f, p)
			}
		}
	default:
		return fmt.Errorf("unsupported setting type %T", f)
	}
	return nil
}

func kindName(v reflect.Value) string {
	switch v.Interface().(type) {
	case int:
		return "an integer"
	case bool:
		return "true or false"
	case []string:
		return "a list of strings"
	case time.Duration:
		return "a duration like 30s"
	}
	return "a string"
}

func (c Config) validate() error {
	var errs []error
	bad := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("config: %s: %s", name, fmt.Sprintf(format, a...)))
	}
	if _, _, err := net.SplitHostPort(c.Server.Listen); err != nil {
		bad("server.listen", "%q is not host:port", c.Server.Listen)
	}
	if (c.Server.TLSCert == "") != (c.Server.TLSKey == "") {
		bad("server.tls_cert", "tls_cert and tls_key go together")
	}
	if _, err := time.LoadLocation(c.Server.TimeZone); err != nil {
		bad("server.time_zone", "unknown time zone %q", c.Server.TimeZone)
	}
	if c.Server.ShutdownTimeout <= 0 {
		bad("server.shutdown_timeout", "must be positive")
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		bad("log.format", "%q is not text or json", c.Log.Format)
	}
	if _, err := parseLevel(c.Log.Level); err != nil {
		bad("log.level", "%v", err)
	}
	if c.Log.MaxSizeMB < 1 {
		bad("log.max_size_mb", "must be at least 1")
	}
	if c.Log.Keep < 0 {
		bad("log.keep", "must be 0 or more")
	}
	if c.Exec.MaxOutputBytes < 1024 {
		bad("exec.max_output_bytes", "must be at least 1024")
	}
	if c.Exec.BulkMax < 1 || c.Exec.BulkConcurrency < 1 {
		bad("exec.bulk_max", "bulk_max and bulk_concurrency must be at least 1")
	}
	if c.Exec.SessionIdle < 0 {
		bad("exec.session_idle", "must be 0 (off) or more")
	}
	if c.Exec.SessionsPerDevice < 1 {
		bad("exec.sessions_per_device", "must be at least 1")
	}
	if c.Backup.MaxAge < time.Minute {
		bad("config_backup.max_age", "must be at least 1m")
	}
	if c.Backup.MinLines < 1 {
		bad("config_backup.min_lines", "must be at least 1")
	}
	if c.Backup.MaxShrinkPercent < 1 || c.Backup.MaxShrinkPercent > 100 {
		bad("config_backup.max_shrink_percent", "must be from 1 to 100")
	}
	switch c.SSH.HostKeyPolicy {
	case "tofu", "strict", "insecure":
	default:
		bad("ssh.host_key_policy", "%q is not tofu, strict or insecure", c.SSH.HostKeyPolicy)
	}
	if c.RateLimit.DeviceCommandLimit < 1 || c.RateLimit.TimeWindowMinutes < 1 {
		bad("rate_limit.device_command_limit", "device_command_limit and time_window_minutes must be at least 1")
	}
	if c.Logs.RetentionDays < 0 {
		bad("logs.retention_days", "must be 0 (forever) or more")
	}
	if c.Export.Keep < 1 {
		bad("export.keep", "must be at least 1")
	}
	if err := validSchedule(c.Export.Schedule); err != nil {
		bad("export.schedule", "%v", err)
	}
	if c.UI.SessionHours < 1 {
		bad("ui.session_hours", "must be at least 1")
	}
	if c.Schedules.Workers < 1 || c.Schedules.WorkersPerSite < 1 || c.Schedules.WorkersPerDriver < 1 {
		bad("schedules.workers", "workers, workers_per_site and workers_per_driver must be at least 1")
	}
	w := c.Webhooks
	if w.Timeout <= 0 || w.RetryMin <= 0 || w.RetryMax < w.RetryMin || w.GiveUpAfter <= 0 {
		bad("webhooks.retry_min", "timeout, retry_min and give_up_after must be positive, retry_max at least retry_min")
	}
	if w.Workers < 1 || w.KeepDays < 1 {
		bad("webhooks.workers", "workers and keep_days must be at least 1")
	}
	c.Inventory.validate(bad)
	c.Hub.validate(bad)
	c.Store.validate(c.Hub, bad)
	return errors.Join(errs...)
}

// validate checks the hub's settings. Messages never quote the token.
func (c HubConfig) validate(bad func(name, format string, a ...any)) {
	if c.URL != "" {
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("hub.url", "%q is not an http(s) URL", c.URL)
		}
		if strings.TrimSpace(c.Token) == "" {
			bad("hub.token", "needed with hub.url (fieldkit hub site add on the hub prints it)")
		}
	}
	if c.CAFile != "" {
		if _, err := os.Stat(c.CAFile); err != nil {
			bad("hub.ca_file", "%v", err)
		}
	}
}

// validate checks where the data is kept. Messages never quote the DSN, which holds a
// password.
func (c StoreConfig) validate(hub HubConfig, bad func(name, format string, a ...any)) {
	switch c.Driver {
	case "sqlite":
	case "postgres":
		if strings.TrimSpace(c.DSN) == "" {
			bad("store.dsn", "needed with store.driver postgres")
		} else if _, err := pgx.ParseConfig(c.DSN); err != nil {
			bad("store.dsn", "not a PostgreSQL connection string (postgres://user:password@host:5432/database)")
		}
		if !hub.Serve {
			bad("store.driver", "postgres is a hub's store (hub.serve: true); a site keeps SQLite")
		}
		if hub.URL != "" {
			bad("hub.url", "a hub on PostgreSQL pushes to no other hub; leave it empty")
		}
	default:
		bad("store.driver", "%q is not sqlite or postgres", c.Driver)
	}
}

// validate checks the NetBox sync's settings. Messages never quote the token.
func (c InventoryConfig) validate(bad func(name, format string, a ...any)) {
	if c.NetBoxURL != "" {
		if _, err := netbox.NewClient(c.NetBoxURL, c.NetBoxToken, ""); err != nil {
			bad("inventory.netbox_url", "%q is not an http(s) URL", c.NetBoxURL)
		}
		if strings.TrimSpace(c.NetBoxToken) == "" {
			bad("inventory.netbox_token", "needed with inventory.netbox_url")
		}
	} else if c.NetBoxSchedule != "" {
		bad("inventory.netbox_schedule", "needs inventory.netbox_url")
	}
	if err := netbox.CheckFilter(c.NetBoxFilter); err != nil {
		bad("inventory.netbox_filter", "%v", err)
	}
	if _, err := syncSchedule(c.NetBoxSchedule); err != nil {
		bad("inventory.netbox_schedule", "%v", err)
	}
	if c.NetBoxCAFile != "" {
		if _, err := os.Stat(c.NetBoxCAFile); err != nil {
			bad("inventory.netbox_ca_file", "%v", err)
		}
	}
}

// syncSchedule is a sync schedule as the scheduler reads it: "hourly" and "daily HH:MM"
// as they are, an interval ("15m") as "every 15m".
func syncSchedule(s string) (string, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < time.Minute {
			return "", fmt.Errorf("%q: an interval of at least 1m", s)
		}
		return "every " + s, nil
	}
	if s == "" {
		return "", nil
	}
	if err := validSchedule(s); err != nil {
		return "", fmt.Errorf("%q is not \"\", \"hourly\", \"daily HH:MM\" or an interval such as 15m", s)
	}
	return s, nil
}

// netboxConfig is the sync's configuration.
func (c InventoryConfig) netboxConfig() netbox.Config {
	return netbox.Config{URL: c.NetBoxURL, Token: c.NetBoxToken, Filter: c.NetBoxFilter, CAFile: c.NetBoxCAFile}
}

// needsRestart names the settings that differ between two configurations and take
// effect only at start-up.
func needsRestart(old, cur Config) []string {
	a, b := settings(&old), settings(&cur)
	var names []string
	for i := range a {
		if !a[i].reload && !reflect.DeepEqual(a[i].field.Interface(), b[i].field.Interface()) {
			names = append(names, a[i].name())
		}
	}
	return names
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
