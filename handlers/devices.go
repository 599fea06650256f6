package handlers

import (
	"fieldkit/web"
	"net/http"
)

// clearHostKey serves DELETE /api/dcim/devices/{id}/host-key/: it forgets the SSH host
// key trusted on first use (after a device was replaced or re-keyed), so the next
// connection trusts the key it is shown, and closes the device's kept sessions. Needs
// clear_host_key on the device (editing it is not enough: a changed key may be an
// impostor); 204.
func (a *API) clearHostKey(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	if _, err := changeable(a, r, deviceResource, id, "clear_host_key", a.rows(deviceResource)); err != nil {
		return err
	}
	if err := a.DB.ClearHostKey(r.Context(), id); err != nil {
		return err
	}
	// Sessions kept open to the device were opened to the key now cleared.
	a.Exec.Pool.CloseDevice(id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
