package netbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"fieldkit/store"
)

// Config is where a sync reads from.
type Config struct {
	URL    string // the NetBox, "https://netbox.example.com"
	Token  string // an API token of a NetBox user who may view what is synced
	Filter string // a device query string: "site=paris-1&tag=managed"
	CAFile string // PEM certificates to trust besides the system's
	// PageSize is the objects a page asks for (NetBox's limit); 0 is 500.
	PageSize int
	// AllowEmpty lets a filter that matches no device remove every device synced
	// before. Without it such a sync is refused: an emptied tag or a token that lost
	// its permissions in NetBox would otherwise empty the site's inventory.
	AllowEmpty bool
}

// ErrEmpty is a sync refused because NetBox answered no device where some were synced
// before (see Config.AllowEmpty).
var ErrEmpty = errors.New("no device to sync")

// Configured reports whether a sync has a NetBox to read.
func (c Config) Configured() bool { return c.URL != "" }

// CheckFilter checks a device filter: a query string of NetBox device filters.
func CheckFilter(filter string) error {
	q, err := url.ParseQuery(strings.TrimPrefix(strings.TrimSpace(filter), "?"))
	if err != nil {
		return fmt.Errorf("%q is not a query string (site=paris-1&tag=managed): %v", filter, err)
	}
	for k := range q {
		if reserved[k] {
			return fmt.Errorf("%s is set by the sync itself", k)
		}
	}
	return nil
}

// reserved are the query parameters the sync sets itself.
var reserved = map[string]bool{"limit": true, "offset": true, "ordering": true, "brief": true}

// Report is what a sync did.
type Report struct {
	Source   string            `json:"source"`
	Resumed  bool              `json:"resumed"`
	Pages    int               `json:"pages"`
	Duration float64           `json:"duration_seconds"`
	Objects  map[string]*Count `json:"objects"`
	Warnings []string          `json:"warnings"`
}

// Count is what a sync did to one object type.
type Count struct {
	Fetched   int `json:"fetched"`
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Deleted   int `json:"deleted"`
	// Kept are objects NetBox no longer has that FieldKit keeps, as its own, because
	// something here still uses them (a device's command logs; it is then offline).
	Kept int `json:"kept"`
}

// Progress is told what a sync is doing, a line at a time.
type Progress func(msg string)

// Syncer runs syncs from one NetBox, one at a time.
type Syncer struct {
	DB     *store.DB
	Logger *slog.Logger
	mu     sync.Mutex // one sync at a time in this process
	cfgMu  sync.Mutex
	cfg    Config
	owner  string
	state  Status
}

// Status is what this process's syncer is doing.
type Status struct {
	Running bool      `json:"running"`
	Started time.Time `json:"started"`
	Last    string    `json:"progress"` // the last progress line
}

// Status is what the syncer is doing now.
func (s *Syncer) Status() Status {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.state
}

func (s *Syncer) setStatus(f func(*Status)) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	f(&s.state)
}

// NewSyncer is a syncer writing to db.
func NewSyncer(db *store.DB, cfg Config, logger *slog.Logger) *Syncer {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Syncer{DB: db, Logger: logger, cfg: cfg, owner: hex.EncodeToString(b)}
}

// Configure changes where the next sync reads from (a reload of the settings).
func (s *Syncer) Configure(cfg Config) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	s.cfg = cfg
}

// Config is where the next sync reads from.
func (s *Syncer) Config() Config {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.cfg
}

// ErrNotConfigured is a sync with no NetBox to read.
var ErrNotConfigured = errors.New("no NetBox to sync from: set inventory.netbox_url and inventory.netbox_token")

// ErrRunning is a sync asked for while one runs in this process.
var ErrRunning = errors.New("a NetBox sync is already running")

// How long a claim on a run lasts without news, and how old an interrupted run may be
// to be resumed rather than started over.
const (
	staleClaim   = 2 * time.Minute
	resumeWithin = 24 * time.Hour
)

// Sync fetches what the filter selects and applies it. An interrupted or failed fetch
// leaves the inventory as it was and the pages it got staged: the next sync of the same
// NetBox and filter resumes from there. A failed apply changes nothing.
func (s *Syncer) Sync(ctx context.Context, progress Progress) (*Report, error) {
	if !s.mu.TryLock() {
		return nil, ErrRunning
	}
	defer s.mu.Unlock()
	cfg := s.Config()
	if !cfg.Configured() {
		return nil, ErrNotConfigured
	}
	s.setStatus(func(st *Status) { *st = Status{Running: true, Started: time.Now(), Last: "starting"} })
	defer s.setStatus(func(st *Status) { st.Running = false })
	report := progress
	progress = func(msg string) {
		s.setStatus(func(st *Status) { st.Last = msg })
		if report != nil {
			report(msg)
		}
	}
	c, err := NewClient(cfg.URL, cfg.Token, cfg.CAFile)
	if err != nil {
		return nil, err
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 500
	}
	start := time.Now()
	source := c.base.String() + "/api/dcim/devices/?" + strings.TrimPrefix(strings.TrimSpace(cfg.Filter), "?")
	run, resumed, err := s.DB.ClaimSyncRun(ctx, source, s.owner, staleClaim, resumeWithin)
	if err != nil {
		return nil, fmt.Errorf("netbox: %w", err)
	}
	if resumed {
		progress(fmt.Sprintf("resuming the sync started %s (%d pages fetched)", run.Started.Local().Format(time.DateTime), run.Pages))
	}
	f := &fetcher{s: s, c: c, cfg: cfg, run: run, progress: progress}
	rep := &Report{Source: show(source), Resumed: resumed, Objects: map[string]*Count{}, Warnings: []string{}}
	if err := f.fetch(ctx); err != nil {
		// Keep what was fetched for the next try; record why this one stopped.
		_ = s.DB.ReleaseSyncRun(context.WithoutCancel(ctx), run.ID, "fetching", err.Error(), nil)
		return nil, err
	}
	rep.Pages = f.run.Pages
	progress("applying")
	err = apply(ctx, s.DB, run.ID, rep, cfg.AllowEmpty)
	rep.Duration = time.Since(start).Seconds()
	summary, _ := json.Marshal(rep)
	if err != nil {
		err = fmt.Errorf("netbox: nothing was changed: %w", err)
		_ = s.DB.ReleaseSyncRun(context.WithoutCancel(ctx), run.ID, "failed", err.Error(), summary)
		return nil, err
	}
	if err := s.DB.ReleaseSyncRun(ctx, run.ID, "done", "", summary); err != nil {
		return nil, err
	}
	return rep, nil
}

// The phases of a fetch, in order: each one's URLs come from what the ones before
// fetched.
const (
	phaseDevices = "devices"
	phaseRelated = "related" // sites, platforms, interfaces, IP addresses
	phaseVLANs   = "vlans"
	phaseTags    = "tags"
	phaseDone    = "fetched"
)

// fetcher fetches one run's pages.
type fetcher struct {
	s        *Syncer
	c        *Client
	cfg      Config
	run      store.SyncRun
	progress Progress
}

// fetch works through the run's queue, phase by phase, staging each page.
func (f *fetcher) fetch(ctx context.Context) error {
	if f.run.Phase == "" {
		q := url.Values{}
		if filter := strings.TrimPrefix(strings.TrimSpace(f.cfg.Filter), "?"); filter != "" {
			q, _ = url.ParseQuery(filter) // checked with the settings
		}
		q.Set("limit", strconv.Itoa(f.cfg.PageSize))
		q.Set("ordering", "id")
		q.Set("exclude", "config_context")
		if err := f.next(ctx, phaseDevices, []string{f.c.endpoint("/api/dcim/devices/", q)}); err != nil {
			return err
		}
	}
	for f.run.Phase != phaseDone {
		for len(f.run.Queue) > 0 {
			if err := f.page(ctx); err != nil {
				return err
			}
		}
		urls, phase, err := f.following(ctx)
		if err != nil {
			return err
		}
		if err := f.next(ctx, phase, urls); err != nil {
			return err
		}
	}
	return nil
}

// next starts a phase.
func (f *fetcher) next(ctx context.Context, phase string, urls []string) error {
	if err := f.s.DB.SetSyncPhase(ctx, f.run.ID, f.s.owner, phase, urls); err != nil {
		return err
	}
	f.run.Phase, f.run.Queue = phase, urls
	return nil
}

// page fetches the queue's first URL and stages its objects under the kind its path
// names; a next page takes the URL's place in the queue.
func (f *fetcher) page(ctx context.Context) error {
	u := f.run.Queue[0]
	p, err := f.c.get(ctx, u)
	if err != nil {
		return err
	}
	kind := kindOf(u)
	objs := make([]store.StagedObject, 0, len(p.Results))
	for _, raw := range p.Results {
		var id struct {
			ID int64 `json:"id"`
		}
		if json.Unmarshal(raw, &id) != nil || id.ID == 0 {
			return fmt.Errorf("netbox: GET %s: a result without an id", show(u))
		}
		objs = append(objs, store.StagedObject{NetBoxID: id.ID, Body: raw})
	}
	queue := f.run.Queue[1:]
	if p.Next != nil && *p.Next != "" {
		next, err := f.c.nextURL(*p.Next)
		if err != nil {
			return err
		}
		queue = append([]string{next}, queue...)
	}
	if err := f.s.DB.SaveSyncPage(ctx, f.run.ID, f.s.owner, kind, objs, queue); err != nil {
		return err
	}
	f.run.Queue, f.run.Pages = queue, f.run.Pages+1
	f.progress(fmt.Sprintf("%s: page %d of the sync, %d of %d", kind, f.run.Pages, offsetOf(u)+len(p.Results), p.Count))
	return nil
}

// kindOf is the staged kind of a list URL: its path's last segment ("devices",
// "ip-addresses").
func kindOf(rawURL string) string {
	u, _ := url.Parse(rawURL)
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	return parts[len(parts)-1]
}

func offsetOf(rawURL string) int {
	u, _ := url.Parse(rawURL)
	n, _ := strconv.Atoi(u.Query().Get("offset"))
	return n
}

// following is the next phase and its URLs, from what was staged so far.
func (f *fetcher) following(ctx context.Context) ([]string, string, error) {
	st := func(kind string) ([]store.StagedObject, error) { return f.s.DB.StagedObjects(ctx, f.run.ID, kind) }
	switch f.run.Phase {
	case phaseDevices:
		devs, err := st("devices")
		if err != nil {
			return nil, "", err
		}
		var sites, plats, ids []int64
		for _, o := range devs {
			var d nbDevice
			if err := json.Unmarshal(o.Body, &d); err != nil {
				return nil, "", fmt.Errorf("netbox: device %d: %w", o.NetBoxID, err)
			}
			ids = append(ids, d.ID)
			if d.Site != nil {
				sites = append(sites, d.Site.ID)
			}
			if d.Platform != nil {
				plats = append(plats, d.Platform.ID)
			}
		}
		var urls []string
		urls = append(urls, f.byIDs("/api/dcim/sites/", "id", sites)...)
		urls = append(urls, f.byIDs("/api/dcim/platforms/", "id", plats)...)
		urls = append(urls, f.byIDs("/api/dcim/interfaces/", "device_id", ids)...)
		urls = append(urls, f.byIDs("/api/ipam/ip-addresses/", "device_id", ids)...)
		return urls, phaseRelated, nil
	case phaseRelated:
		ifaces, err := st("interfaces")
		if err != nil {
			return nil, "", err
		}
		sites, err := st("sites")
		if err != nil {
			return nil, "", err
		}
		var vlans, siteIDs []int64
		for _, o := range ifaces {
			var i nbInterface
			if err := json.Unmarshal(o.Body, &i); err != nil {
				return nil, "", fmt.Errorf("netbox: interface %d: %w", o.NetBoxID, err)
			}
			if i.UntaggedVLAN != nil {
				vlans = append(vlans, i.UntaggedVLAN.ID)
			}
			for _, v := range i.TaggedVLANs {
				vlans = append(vlans, v.ID)
			}
		}
		for _, o := range sites {
			siteIDs = append(siteIDs, o.NetBoxID)
		}
		// The VLANs the interfaces use, and every VLAN of the synced sites (what a
		// command's VLAN variable offers on a device).
		return append(f.byIDs("/api/ipam/vlans/", "id", vlans), f.byIDs("/api/ipam/vlans/", "site_id", siteIDs)...), phaseVLANs, nil
	case phaseVLANs:
		var tags []int64
		for _, kind := range []string{"devices", "sites", "platforms", "interfaces", "ip-addresses", "vlans"} {
			objs, err := st(kind)
			if err != nil {
				return nil, "", err
			}
			for _, o := range objs {
				tags = append(tags, tagRefs(o.Body)...)
			}
		}
		return f.byIDs("/api/extras/tags/", "id", tags), phaseTags, nil
	}
	return nil, phaseDone, nil
}

// idsPerURL keeps a URL of repeated ids well under the 4,000 characters proxies and
// NetBox's own deployments accept.
const idsPerURL = 200

// byIDs are the URLs of a list filtered by a set of ids, in chunks.
func (f *fetcher) byIDs(path, param string, ids []int64) []string {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var out []string
	for len(ids) > 0 {
		n := min(len(ids), idsPerURL)
		q := url.Values{"limit": {strconv.Itoa(f.cfg.PageSize)}, "ordering": {"id"}}
		for _, id := range ids[:n] {
			q.Add(param, strconv.FormatInt(id, 10))
		}
		out = append(out, f.c.endpoint(path, q))
		ids = ids[n:]
	}
	return out
}
