package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"fieldkit/events"
	"fieldkit/store"
	"fieldkit/web"
)

// Events is told when events may be waiting to be matched (events.Processor).
type Events interface {
	Poke()
}

// secretMask is how a webhook's stored secret reads; written back, it keeps the secret.
const secretMask = "********"

// webhookHooks check what a delivery will render (the URL, headers and body templates
// parse; the URL is http or https; NetBox 3's triggers name events FieldKit raises) and
// seal the secret with the master key; a read shows only whether one is set.
var webhookHooks = hooks{check: checkWebhook, computed: map[string]func(store.Row) any{
	"secret": func(r store.Row) any {
		if s, _ := r["secret"].(string); s != "" {
			return secretMask
		}
		return ""
	},
}}

func checkWebhook(ctx context.Context, a *API, f *web.Form, v store.Values, cur store.Row, _ bool) error {
	for _, name := range []string{"payload_url", "additional_headers", "body_template"} {
		if s, ok := v[name].(string); ok && !f.Errs.Has(name) {
			if _, err := events.ParseTemplate(s); err != nil {
				f.Errs.Add(name, err.Error())
			}
		}
	}
	if u, ok := v["payload_url"].(string); ok && !f.Errs.Has("payload_url") {
		if l := strings.ToLower(strings.TrimSpace(u)); !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") {
			f.Errs.Add("payload_url", "Enter a URL starting with http:// or https://.")
		}
	}
	if h, ok := v["additional_headers"].(string); ok && !f.Errs.Has("additional_headers") {
		if msg := events.CheckHeaders(h); msg != "" {
			f.Errs.Add("additional_headers", msg)
		}
	}
	checkConditions(f, v)
	pick := picker(f, v, cur)
	if types, _ := pick("content_types").([]string); len(types) > 0 && !f.Errs.Has("content_types") {
		var evs []string
		for name, ev := range map[string][]string{"type_create": {"object_created"}, "type_update": {"object_updated"},
			"type_delete": {"object_deleted"}, "type_job_start": {"job_started"}, "type_job_end": {"job_completed", "job_failed", "job_errored"}} {
			if on, _ := pick(name).(bool); on {
				evs = append(evs, ev...)
			}
		}
		if len(evs) == 0 {
			f.Errs.Add("content_types", "Select at least one of type_create, type_update, type_delete, type_job_start and type_job_end.")
		} else if !store.Raises(types, evs) {
			f.Errs.Add("content_types", eventSourcesHelp)
		}
	}
	if s, ok := v["secret"].(string); ok && !f.Errs.Has("secret") {
		switch {
		case s == secretMask:
			delete(v, "secret") // read back and written again: keep the stored one
		case s != "":
			if a.Exec.Keyring == nil {
				return errors.New("handlers: no master key to seal a webhook's secret")
			}
			v["secret"] = a.Exec.Keyring.SealText(events.SecretPurpose, s)
		}
	}
	return nil
}

// eventSourcesHelp says which events FieldKit raises.
const eventSourcesHelp = "FieldKit raises object_created for netbox_toolkit_plugin.commandlog (each execution) and " +
	"netbox_toolkit_plugin.configversion (a backup stored or quarantined), job_started, job_completed, job_failed and " +
	"job_errored for netbox_toolkit_plugin.schedule (each run), backup_stale and backup_fresh for dcim.device; " +
	"none of these object types raises these events."

// picker reads a field as it will be after the write: as sent, else as stored.
func picker(f *web.Form, v store.Values, cur store.Row) func(string) any {
	return func(name string) any {
		if x, ok := v[name]; ok || f.Has(name) {
			return x
		}
		return cur[name]
	}
}

// checkConditions compiles the conditions sent.
func checkConditions(f *web.Form, v store.Values) {
	c, ok := v["conditions"]
	if !ok || c == nil || f.Errs.Has("conditions") {
		return
	}
	raw, err := json.Marshal(c)
	if err == nil {
		_, err = events.ParseConditions(raw)
	}
	if err != nil {
		f.Errs.Add("conditions", err.Error())
	}
}

// eventRuleHooks check that a rule can fire: object types FieldKit raises events for,
// one of their events, conditions that compile, a webhook that exists.
var eventRuleHooks = hooks{check: checkEventRule}

func checkEventRule(ctx context.Context, a *API, f *web.Form, v store.Values, cur store.Row, _ bool) error {
	pick := picker(f, v, cur)
	types, _ := pick("object_types").([]string)
	if !f.Errs.Has("object_types") {
		for _, t := range types {
			if _, ok := store.EventSources[t]; !ok {
				f.Errs.Add("object_types", fmt.Sprintf("FieldKit raises no events for %s: choose netbox_toolkit_plugin.commandlog, "+
					"netbox_toolkit_plugin.schedule, netbox_toolkit_plugin.configversion or dcim.device.", t))
			}
		}
	}
	if evs, _ := pick("event_types").([]string); !f.Errs.Has("object_types") && !f.Errs.Has("event_types") && !store.Raises(types, evs) {
		f.Errs.Add("event_types", eventSourcesHelp)
	}
	checkConditions(f, v)
	if id, ok := v["action_object_id"].(int64); ok && !f.Errs.Has("action_object_id") {
		exists, err := a.DB.Exists(ctx, store.TypeWebhook, id)
		if err != nil {
			return err
		}
		if !exists {
			f.Errs.Add("action_object_id", fmt.Sprintf("No webhook has the id %d.", id))
		}
	}
	return nil
}

// RenderEvent is an object as an event's data: as the API shows it (URLs on the
// server's base URL), a log without its output and parsed output and a config version
// without its text (a webhook is no place for a megabyte of show tech or a
// configuration), a log with its device's site. store.ErrNotFound when the object is
// gone.
func (a *API) RenderEvent(ctx context.Context, objectType string, id int64) (map[string]any, error) {
	var res *Resource
	for _, r := range []*Resource{logResource, scheduleResource, configVersionResource, deviceResource} {
		if r.Type() == objectType {
			res = r
		}
	}
	if res == nil {
		return nil, fmt.Errorf("handlers: no events of %s", objectType)
	}
	rows, err := a.DB.RowsLeaving(ctx, res.Model, []int64{id}, func(name string) bool { return name == "output" || name == "text" })
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s %d: %w", objectType, id, store.ErrNotFound)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, a.baseURL()+"/", nil)
	if err != nil {
		return nil, err
	}
	obj := a.renderObject(r, res, res.Model, rows[0], full)
	delete(obj, "text")
	if res == logResource {
		delete(obj, "output")
		delete(obj, "parsed_output")
		obj["site"] = nil
		if dev, _ := rows[0]["device"].(store.Row); dev != nil && dev["id"] != nil {
			if devs, err := a.DB.Rows(ctx, store.Devices, []int64{dev.ID()}); err == nil && len(devs) == 1 {
				if site, ok := devs[0]["site"].(store.Row); ok {
					obj["site"] = map[string]any{"id": site["id"], "name": site["name"], "slug": site["slug"]}
				}
			}
		}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(raw, &out)
}

// baseURL is where the server answers, for the URLs of events' objects.
func (a *API) baseURL() string {
	if a.BaseURL != "" {
		return strings.TrimSuffix(a.BaseURL, "/")
	}
	return "http://localhost"
}

// pokeEvents says an execution was logged.
func (a *API) pokeEvents() {
	if a.Events != nil {
		a.Events.Poke()
	}
}
