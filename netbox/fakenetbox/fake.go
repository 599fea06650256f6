// Package fakenetbox is a NetBox for tests: it serves the objects of testdata/netbox
// (NetBox 4.1's JSON, as its REST API returns them) with NetBox's token check, list
// filters, limit/offset pagination and absolute "next" links, and lets a test change
// the objects, fail or hold a request, and see what was asked.
package fakenetbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Token is the API token the fake accepts.
const Token = "0123456789abcdef0123456789abcdef01234567"

// kinds maps a list path to the file of its objects.
var kinds = map[string]string{
	"/api/dcim/devices/": "devices", "/api/dcim/sites/": "sites", "/api/dcim/platforms/": "platforms",
	"/api/dcim/interfaces/": "interfaces", "/api/ipam/ip-addresses/": "ip-addresses", "/api/ipam/vlans/": "vlans",
	"/api/extras/tags/": "tags",
}

// NetBox is a running fake NetBox.
type NetBox struct {
	*httptest.Server
	mu      sync.Mutex
	objects map[string][]map[string]any
	status  json.RawMessage
	// NextHost, when set, is the scheme and host of the "next" links (a NetBox behind a
	// proxy that does not know its public name).
	NextHost string
	// Hook, when set, sees every request first; a non-zero status answers it with that
	// status instead (a failure), after Hook returns (it may block to hold the request).
	Hook     func(r *http.Request) int
	requests []string
}

// Start serves the objects of dir (testdata/netbox) over HTTP, or HTTPS with tls.
func Start(t testing.TB, dir string, tls bool) *NetBox {
	t.Helper()
	nb := &NetBox{objects: map[string][]map[string]any{}}
	for _, kind := range kinds {
		var list []map[string]any
		if err := readJSON(filepath.Join(dir, kind+".json"), &list); err != nil {
			t.Fatal(err)
		}
		nb.objects[kind] = list
	}
	if err := readJSON(filepath.Join(dir, "status.json"), &nb.status); err != nil {
		t.Fatal(err)
	}
	if tls {
		nb.Server = httptest.NewTLSServer(nb)
	} else {
		nb.Server = httptest.NewServer(nb)
	}
	t.Cleanup(nb.Close)
	return nb
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Requests returns the request URIs served so far (path and query).
func (nb *NetBox) Requests() []string {
	nb.mu.Lock()
	defer nb.mu.Unlock()
	return slices.Clone(nb.requests)
}

// Change edits the objects of a kind under the fake's lock: a test adds, removes or
// changes them (and their last_updated, as NetBox would) between syncs.
func (nb *NetBox) Change(kind string, f func([]map[string]any) []map[string]any) {
	nb.mu.Lock()
	defer nb.mu.Unlock()
	nb.objects[kind] = f(nb.objects[kind])
}

// ServeHTTP answers as NetBox's REST API does.
func (nb *NetBox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	nb.mu.Lock()
	nb.requests = append(nb.requests, r.URL.RequestURI())
	hook := nb.Hook
	nb.mu.Unlock()
	if hook != nil {
		if status := hook(r); status != 0 {
			write(w, status, map[string]any{"detail": "Internal failure injected by the test."})
			return
		}
	}
	if got := r.Header.Get("Authorization"); got != "Token "+Token {
		write(w, http.StatusForbidden, map[string]any{"detail": "Invalid token"})
		return
	}
	if r.URL.Path == "/api/status/" {
		w.Header().Set("Content-Type", "application/json")
		w.Write(nb.status)
		return
	}
	kind, ok := kinds[r.URL.Path]
	if !ok || r.Method != http.MethodGet {
		write(w, http.StatusNotFound, map[string]any{"detail": "Not found."})
		return
	}
	nb.list(w, r, kind)
}

func (nb *NetBox) list(w http.ResponseWriter, r *http.Request, kind string) {
	q := r.URL.Query()
	limit, offset := 50, 0
	if v := q.Get("limit"); v != "" {
		limit, _ = strconv.Atoi(v)
		if limit <= 0 || limit > 1000 {
			limit = 1000
		}
	}
	if v := q.Get("offset"); v != "" {
		offset, _ = strconv.Atoi(v)
	}
	nb.mu.Lock()
	var all []map[string]any
	for _, o := range nb.objects[kind] {
		keep, bad := matches(o, q)
		if bad != "" {
			nb.mu.Unlock()
			write(w, http.StatusBadRequest, map[string]any{bad: []string{"Unknown filter in this fake NetBox."}})
			return
		}
		if keep {
			all = append(all, o)
		}
	}
	nb.mu.Unlock()
	slices.SortFunc(all, func(a, b map[string]any) int { return int(num(a["id"]) - num(b["id"])) })
	page := append([]map[string]any{}, all[min(offset, len(all)):min(offset+limit, len(all))]...) // [] as NetBox, never null
	body := map[string]any{"count": len(all), "next": nil, "previous": nil, "results": page}
	if offset+limit < len(all) {
		host := nb.NextHost
		if host == "" {
			host = "http://" + r.Host
		}
		q.Set("offset", strconv.Itoa(offset+limit))
		q.Set("limit", strconv.Itoa(limit))
		body["next"] = host + r.URL.Path + "?" + q.Encode()
	}
	write(w, http.StatusOK, body)
}

// matches applies the filters the sync and the tests use; bad names an unknown one.
func matches(o map[string]any, q map[string][]string) (keep bool, bad string) {
	for name, vals := range q {
		var have []string
		switch name {
		case "limit", "offset", "ordering", "exclude", "brief":
			continue
		case "id":
			have = []string{fmt.Sprint(num(o["id"]))}
		case "site", "site_id":
			have = refField(o["site"], name)
		case "tag":
			for _, t := range asList(o["tags"]) {
				have = append(have, fmt.Sprint(t.(map[string]any)["slug"]))
			}
		case "device_id":
			if d, ok := o["device"]; ok {
				have = refField(d, "site_id")
			} else if a, ok := o["assigned_object"].(map[string]any); ok {
				have = refField(a["device"], "site_id")
			}
		case "status":
			if s, ok := o["status"].(map[string]any); ok {
				have = []string{fmt.Sprint(s["value"])}
			}
		default:
			return false, name
		}
		if !slices.ContainsFunc(have, func(h string) bool { return slices.Contains(vals, h) }) {
			return false, ""
		}
	}
	return true, ""
}

// refField is a nested reference's id ("…_id") or slug.
func refField(v any, name string) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if strings.HasSuffix(name, "_id") {
		return []string{fmt.Sprint(num(m["id"]))}
	}
	return []string{fmt.Sprint(m["slug"])}
}

func asList(v any) []any { l, _ := v.([]any); return l }

func num(v any) int64 { f, _ := v.(float64); return int64(f) }

func write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
