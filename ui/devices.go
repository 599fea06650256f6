package ui

import (
	"math"
	"net/http"

	"fieldkit/store"
	"fieldkit/web"
)

// rateLimit answers GET /ui/api/devices/{id}/rate-limit/: the device's standing in the
// rate limiter, for the device page. It needs view on the device; a device the user may
// not see is a 404, as in the API.
func (u *UI) rateLimit(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	scope, err := u.db.Scope(r.Context(), sessionOf(r).Principal, store.TypeDevice, "view")
	if err != nil {
		return err
	}
	if !scope.Granted {
		return web.NotFound()
	}
	ok, err := u.db.Exists(r.Context(), store.TypeDevice, id, scope.Expr)
	if err != nil {
		return err
	}
	if !ok {
		return web.NotFound()
	}
	out := map[string]any{"device_id": id, "enabled": u.limiter != nil && u.limiter.Enabled(), "current_count": 0, "limit": 0,
		"time_window_minutes": 0, "retry_after_seconds": 0}
	if u.limiter != nil {
		s := u.limiter.Status(id)
		out["current_count"], out["limit"] = s.Count, s.Limit
		out["time_window_minutes"] = int(s.Window.Minutes())
		out["retry_after_seconds"] = int(math.Ceil(s.RetryAfter.Seconds()))
	}
	web.Write(w, http.StatusOK, out)
	return nil
}
