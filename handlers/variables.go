package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"fieldkit/store"
	"fieldkit/web"
)

// choices lists the values a variable of type typ may take on a device, each as value
// and display (an interface's name, a VLAN's id or name, an address) with the object's
// id and what tells it apart. A text variable has none.
func (a *API) choices(ctx context.Context, typ string, deviceID int64) ([]map[string]any, error) {
	out := []map[string]any{}
	switch typ {
	case "inventory_interface":
		ifs, err := a.DB.DeviceInterfaces(ctx, deviceID)
		if err != nil {
			return nil, err
		}
		for _, i := range ifs {
			out = append(out, map[string]any{"value": i.Name, "display": i.Name, "id": i.ID, "enabled": i.Enabled})
		}
	case "inventory_vlan", "inventory_vlan_name":
		vlans, err := a.DB.DeviceVLANs(ctx, deviceID)
		if err != nil {
			return nil, err
		}
		for _, v := range vlans {
			vid := strconv.FormatInt(v.VID, 10)
			value := vid
			if typ == "inventory_vlan_name" {
				value = v.Name
			}
			out = append(out, map[string]any{"value": value, "display": vid + " (" + v.Name + ")", "id": v.ID, "name": v.Name})
		}
	case "inventory_ip":
		ips, err := a.DB.DeviceIPs(ctx, deviceID)
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			addr, _, _ := strings.Cut(ip.Address, "/")
			out = append(out, map[string]any{"value": addr, "display": ip.Address, "id": ip.ID, "status": ip.Status})
		}
	}
	return out, nil
}

// variableChoices serves GET commands/{id}/variable-choices/?device_id=N.
func (a *API) variableChoices(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r)
	if err != nil {
		return err
	}
	cmd, err := visible(a, r, commandResource, id, a.DB.LoadCommands)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	for k := range q {
		if k != "device_id" && k != "format" {
			return web.BadRequest(k, "Unknown parameter.")
		}
	}
	raw := q.Get("device_id")
	if raw == "" {
		return web.BadRequest("device_id", "This parameter is required.")
	}
	deviceID, ok := web.ParseID(raw)
	if !ok {
		return web.BadRequest("device_id", "A valid integer is required.")
	}
	scope, err := a.scope(r, store.TypeDevice, "view")
	if err != nil {
		return err
	}
	ok, err = a.DB.Exists(r.Context(), store.TypeDevice, deviceID, scope.Expr)
	if err != nil {
		return err
	}
	if !ok || !scope.Granted {
		return web.NotFound()
	}
	target, err := a.DB.DeviceTarget(r.Context(), deviceID)
	if err != nil {
		return err
	}
	vars := map[string]any{}
	for _, v := range cmd.Variables {
		cs, err := a.choices(r.Context(), v.VariableType, deviceID)
		if err != nil {
			return err
		}
		vars[v.Name] = map[string]any{"type": v.VariableType, "choices": cs, "help_text": v.HelpText,
			"default_value": v.DefaultValue, "required": v.Required, "display_name": v.DisplayName}
	}
	web.Write(w, http.StatusOK, map[string]any{"device_id": deviceID, "device_name": target.Name,
		"command_id": cmd.ID, "command_name": cmd.Name, "variables": vars})
	return nil
}

// validateVariables serves POST commands/{id}/validate-variables/: the checks execute
// would make, without a credential token, without contacting the device or logging.
func (a *API) validateVariables(w http.ResponseWriter, r *http.Request) error {
	p, err := a.checkedRequest(r, false, "device_id", "variables")
	if err != nil {
		return err
	}
	web.Write(w, http.StatusOK, map[string]any{"valid": true, "command": p.text})
	return nil
}
