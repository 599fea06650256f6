package handlers

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"time"

	"fieldkit/store"
	"fieldkit/web"
)

const pathBackupHealth = "/api/plugins/toolkit/backup-health/"

// backupMaxAge is the limit of a last good backup's age when its site sets none.
func (a *API) backupMaxAge() time.Duration {
	if a.Backup.MaxAge > 0 {
		return a.Backup.MaxAge
	}
	return 26 * time.Hour
}

// backupHealth serves GET backup-health/: every active device the user may view, with
// its last good config backup's age against its limit (config_backup.max_age, or its
// site's backup_max_age_hours) and a status: ok, stale, never. Most stale first: never
// backed up, then oldest. Filters site_id and status; limit and offset page it. It needs
// view on config versions.
func (a *API) backupHealth(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for k := range q {
		switch k {
		case "site_id", "status", "limit", "offset":
		default:
			return web.BadRequest(k, "Unknown parameter.")
		}
	}
	versions, err := a.scope(r, store.TypeConfigVersion, "view")
	if err != nil {
		return err
	}
	if !versions.Granted {
		return web.Forbidden("")
	}
	devices, err := a.scope(r, store.TypeDevice, "view")
	if err != nil {
		return err
	}
	within := devices.Expr
	if !devices.Granted {
		within = store.False
	}
	if v := q.Get("site_id"); v != "" {
		site, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return web.BadRequest("site_id", "A site id is a number.")
		}
		within = store.And(within, store.Expr{SQL: "t.site_id = ?", Args: []any{site}})
	}
	status := q.Get("status")
	if status != "" && status != store.BackupOK && status != store.BackupStale && status != store.BackupNever {
		return web.BadRequest("status", "Select ok, stale or never.")
	}
	limit, offset := 50, 0
	for name, v := range map[string]*int{"limit": &limit, "offset": &offset} {
		if s := q.Get(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return web.BadRequest(name, "A valid non-negative integer is required.")
			}
			*v = n
		}
	}
	if limit == 0 || limit > 1000 {
		limit = 1000
	}
	rows, err := a.DB.BackupHealthOf(r.Context(), a.backupMaxAge(), within, time.Now())
	if err != nil {
		return err
	}
	summary := map[string]int{store.BackupOK: 0, store.BackupStale: 0, store.BackupNever: 0}
	var kept []store.BackupHealth
	for _, b := range rows {
		summary[b.Status]++
		if status == "" || b.Status == status {
			kept = append(kept, b)
		}
	}
	sortBackupHealth(kept)
	results := []any{}
	for _, b := range kept[min(offset, len(kept)):min(offset+limit, len(kept))] {
		results = append(results, a.backupHealthRow(r, b))
	}
	var next, prev any
	if offset+limit < len(kept) {
		next = pageURL(r, limit, offset+limit)
	}
	if offset > 0 {
		prev = pageURL(r, limit, max(offset-limit, 0))
	}
	web.Write(w, http.StatusOK, map[string]any{"count": len(kept), "summary": summary, "next": next, "previous": prev,
		"results": results})
	return nil
}

func (a *API) backupHealthRow(r *http.Request, b store.BackupHealth) map[string]any {
	from := "setting"
	if b.SiteOverride {
		from = "site"
	}
	var lastGood, age any
	if !b.LastGood.IsZero() {
		lastGood, age = web.Stamp(b.LastGood), int64(b.Age/time.Second)
	}
	return map[string]any{
		"device": map[string]any{"id": b.DeviceID, "url": a.urlOf(r, store.TypeDevice, b.DeviceID), "name": b.DeviceName,
			"display": b.DeviceName},
		"site": map[string]any{"id": b.SiteID, "url": a.urlOf(r, store.TypeSite, b.SiteID), "name": b.SiteName,
			"slug": b.SiteSlug, "display": b.SiteName},
		"status": b.Status, "last_good": lastGood, "age_seconds": age, "limit_seconds": int64(b.Limit / time.Second),
		"limit_from": from, "latest_version_id": nullID(b.LatestVersion),
	}
}

// sortBackupHealth puts never backed up first, then the oldest backups.
func sortBackupHealth(rows []store.BackupHealth) {
	slices.SortStableFunc(rows, func(x, y store.BackupHealth) int {
		if nx, ny := x.Status == store.BackupNever, y.Status == store.BackupNever; nx != ny {
			if nx {
				return -1
			}
			return 1
		}
		return cmp.Compare(y.Age, x.Age)
	})
}
