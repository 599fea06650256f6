package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"fieldkit/store"
)

// applier applies the records of one push to the hub's own tables, inside the push's
// transaction: one function per kind. A site's devices are the devices of its dcim
// site; its platforms and tags are the hub's of the same slug (shared by the sites);
// its commands and logs are the hub's own rows. Which hub object each edge object
// became is kept in hub_objects, by the edge's id (a log: by its uid).
type applier struct {
	db   *store.DB
	site store.HubSite
	// skew is added to a log's times: the edge's clock was that far behind the hub's
	// when it sent them (0 under SkewCorrected).
	skew time.Duration
}

// SkewCorrected is how far an edge's clock may be off before the hub adds the
// difference it measured to the times of the logs that edge sends.
const SkewCorrected = 5 * time.Minute

// applied is what applying a record did: the hub object it wrote, or why it wrote
// nothing (problem), or that the hub had it already (known: a log sent again under a
// new epoch).
type applied struct {
	hubID   int64
	problem string
	known   bool
}

// apply applies one record. An error is the hub's failure (the push is undone and
// answered 500); a record the hub cannot apply is stored with its problem, so that it
// never holds up the records after it.
func (a *applier) apply(ctx context.Context, rec Record) (applied, error) {
	var body map[string]any
	if rec.Op == store.OpUpsert {
		if err := json.Unmarshal(rec.Body, &body); err != nil || body == nil {
			return applied{problem: "the body is not a JSON object"}, nil
		}
	}
	var res applied
	// Each record in a savepoint of its own: a problem found halfway leaves nothing of it.
	err := a.db.Savepoint(ctx, func(ctx context.Context) error {
		var err error
		switch rec.Kind {
		case store.KindPlatform:
			res, err = a.platform(ctx, rec, body)
		case store.KindDevice:
			res, err = a.device(ctx, rec, body)
		case store.KindCommand:
			res, err = a.command(ctx, rec, body)
		case store.KindLog:
			res, err = a.log(ctx, rec, body)
		case store.KindSnapshot:
			res, err = a.snapshot(ctx, body)
		case store.KindJob:
			res, err = a.job(ctx, rec)
		}
		if err == nil && res.problem != "" {
			err = errProblem
		}
		return err
	})
	if errors.Is(err, errProblem) {
		return res, nil
	}
	if p, ok := problemOf(err); ok {
		return applied{problem: p}, nil
	}
	return res, err
}

// errProblem undoes a record that has a problem.
var errProblem = errors.New("hub: the record has a problem")

// problemOf is the client's message of an error the store gives for bad data (a name
// taken, a value refused): a problem of the record, not a failure of the hub.
func problemOf(err error) (string, bool) {
	var fe *store.FieldError
	var p store.Problem
	switch {
	case errors.As(err, &fe):
		return fe.Error(), true
	case errors.As(err, &p):
		return p.Error(), true
	case errors.Is(err, store.ErrInUse), errors.Is(err, store.ErrNotFound):
		return err.Error(), true
	}
	return "", false
}

// key is an edge id as hub_objects keeps it.
func key(id int64) string { return strconv.FormatInt(id, 10) }

// platform: a site's platform is the hub's of the same slug, made from the first
// site's when the hub has none; its sites (the view platform_sites) are those whose
// hub_objects map a platform to it. A delete forgets it; the hub's platform goes with the
// last site that had it, unless something of the hub uses it.
func (a *applier) platform(ctx context.Context, rec Record, body map[string]any) (applied, error) {
	if rec.Op == store.OpDelete {
		return applied{}, a.forgetPlatform(ctx, rec.ID)
	}
	id, err := a.platformRef(ctx, body)
	return applied{hubID: id}, err
}

// platformRef is the hub's platform of a platform as the edge renders it (whole or
// nested), made from it when the hub has none of its slug; 0 for none.
func (a *applier) platformRef(ctx context.Context, p map[string]any) (int64, error) {
	if p == nil {
		return 0, nil
	}
	slug := str(p, "slug")
	if slug == "" {
		return 0, store.Problem("a platform without a slug")
	}
	id, ok, err := a.db.IDBySlug(ctx, store.Platforms, slug)
	if err == nil && !ok {
		id, err = a.db.Create(ctx, store.Platforms, store.Values{"name": orDefault(str(p, "name"), slug), "slug": slug,
			"description": str(p, "description")}, store.All)
	}
	if err == nil {
		err = a.db.SetHubObject(ctx, a.site.ID, store.KindPlatform, key(num(p, "id")), id)
	}
	return id, err
}

// tagRefs are the hub's tags of the tags as the edge renders them nested, by slug,
// made when the hub has none.
func (a *applier) tagRefs(ctx context.Context, tags []any) ([]int64, error) {
	ids := []int64{}
	for _, t := range tags {
		tag, _ := t.(map[string]any)
		slug := str(tag, "slug")
		if slug == "" {
			continue
		}
		id, ok, err := a.db.IDBySlug(ctx, store.Tags, slug)
		if err == nil && !ok {
			v := store.Values{"name": orDefault(str(tag, "name"), slug), "slug": slug}
			if c := str(tag, "color"); c != "" {
				v["color"] = c
			}
			id, err = a.db.Create(ctx, store.Tags, v, store.All)
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// device: the site's device is a device of its dcim site, whatever site the edge
// files it under (an edge is one site; a device name taken twice there is a problem).
func (a *applier) device(ctx context.Context, rec Record, body map[string]any) (applied, error) {
	if rec.Op == store.OpDelete {
		return applied{}, a.forget(ctx, store.KindDevice, store.Devices, rec.ID)
	}
	platform, err := a.platformRef(ctx, obj(body, "platform"))
	if err != nil {
		return applied{}, err
	}
	tags, err := a.tagRefs(ctx, list(body, "tags"))
	if err != nil {
		return applied{}, err
	}
	v := store.Values{"name": str(body, "name"), "site": a.site.SiteID, "status": orDefault(choice(body, "status"), "active"),
		"description": str(body, "description"), "tags": tags, "custom_fields": orObject(body["custom_fields"]),
		"legacy_algorithms": boolean(body, "legacy_algorithms"), "mgmt_ip": str(body, "mgmt_ip"),
		"prompt_pattern": str(body, "prompt_pattern"), "connect_timeout": nullNum(body, "connect_timeout"),
		"command_timeout": nullNum(body, "command_timeout")}
	if platform != 0 {
		v["platform"] = platform
	} else {
		v["platform"] = nil
	}
	id, err := a.upsert(ctx, store.KindDevice, store.Devices, rec.ID, v)
	return applied{hubID: id}, err
}

// command: a site's command is a command of the hub's own, filed under the site (its
// read-only site), with the hub's platforms and tags of the same slugs.
func (a *applier) command(ctx context.Context, rec Record, body map[string]any) (applied, error) {
	if rec.Op == store.OpDelete {
		return applied{}, a.forget(ctx, store.KindCommand, store.Commands, rec.ID)
	}
	platforms := []int64{}
	for _, p := range list(body, "platforms") {
		id, err := a.platformRef(ctx, asObject(p))
		if err != nil {
			return applied{}, err
		}
		platforms = append(platforms, id)
	}
	tags, err := a.tagRefs(ctx, list(body, "tags"))
	if err != nil {
		return applied{}, err
	}
	vars := []store.Values{}
	for _, x := range list(body, "variables") {
		v := asObject(x)
		vars = append(vars, store.Values{"name": str(v, "name"), "display_name": str(v, "display_name"),
			"variable_type": orDefault(choice(v, "variable_type"), "text"), "required": orTrue(v, "required"),
			"help_text": str(v, "help_text"), "default_value": str(v, "default_value"), "pattern": str(v, "pattern")})
	}
	v := store.Values{"name": str(body, "name"), "command": str(body, "command"), "description": str(body, "description"),
		"command_type": orDefault(choice(body, "command_type"), store.CommandShow), "platforms": platforms, "tags": tags,
		"variables": vars, "custom_fields": orObject(body["custom_fields"])}
	id, err := a.upsert(ctx, store.KindCommand, store.Commands, rec.ID, v)
	if err == nil {
		err = a.db.SetCommandSite(ctx, id, a.site.SiteID)
	}
	return applied{hubID: id}, err
}

// upsert writes the site's object edgeID of a kind: an update of the hub object it
// became, or a create (also when a hub user deleted that object).
func (a *applier) upsert(ctx context.Context, kind string, m *store.Model, edgeID int64, v store.Values) (int64, error) {
	id, ok, err := a.db.HubObject(ctx, a.site.ID, kind, key(edgeID))
	if err != nil {
		return 0, err
	}
	if ok {
		err = a.db.Update(ctx, m, id, v, store.All)
		if !errors.Is(err, store.ErrNotFound) {
			return id, err
		}
	}
	if id, err = a.db.Create(ctx, m, v, store.All); err != nil {
		return 0, err
	}
	return id, a.db.SetHubObject(ctx, a.site.ID, kind, key(edgeID), id)
}

// forget deletes the hub object a site's object became, and forgets it.
func (a *applier) forget(ctx context.Context, kind string, m *store.Model, edgeID int64) error {
	id, ok, err := a.db.HubObject(ctx, a.site.ID, kind, key(edgeID))
	if err != nil || !ok {
		return err
	}
	if err := a.db.Delete(ctx, m, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return a.db.DropHubObject(ctx, a.site.ID, kind, key(edgeID))
}

// forgetPlatform forgets a site's platform, and deletes the hub's platform once no site
// has it and no device or command uses it.
func (a *applier) forgetPlatform(ctx context.Context, edgeID int64) error {
	id, ok, err := a.db.HubObject(ctx, a.site.ID, store.KindPlatform, key(edgeID))
	if err != nil || !ok {
		return err
	}
	if err := a.db.DropHubObject(ctx, a.site.ID, store.KindPlatform, key(edgeID)); err != nil {
		return err
	}
	if held, err := a.db.HubObjectMapped(ctx, store.KindPlatform, id); err != nil || held {
		return err
	}
	if used, err := a.db.PlatformUsed(ctx, id); err != nil || used {
		return err
	}
	if err := a.db.Delete(ctx, store.Platforms, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// log: a log is stored once, however often it is sent: by its uid, which a log sent
// again under a new epoch (a restored edge) keeps. The hub keeps its logs when the
// edge deletes its own (retention); its times gain the edge clock's measured skew.
// (The logs of a push arrive in runs, which the hub stores at once: Ingest.logs.)
func (a *applier) log(ctx context.Context, rec Record, body map[string]any) (applied, error) {
	if rec.Op == store.OpDelete {
		return applied{}, nil
	}
	uid := a.logKey(rec)
	if id, ok, err := a.db.HubObject(ctx, a.site.ID, store.KindLog, uid); err != nil || ok {
		return applied{hubID: id, known: ok}, err
	}
	v, problem, err := a.logValues(ctx, rec, body, a.hubObject)
	if err != nil || problem != "" {
		return applied{problem: problem}, err
	}
	id, err := a.db.CreateLog(ctx, v)
	if err != nil {
		return applied{}, err
	}
	return applied{hubID: id}, a.db.SetHubObject(ctx, a.site.ID, store.KindLog, uid, id)
}

// logKey is the key hub_objects keeps a log by: its uid, or for an edge that sends
// none, its id within the epoch.
func (a *applier) logKey(rec Record) string {
	if rec.UID != "" {
		return rec.UID
	}
	return "id:" + a.site.Epoch + ":" + key(rec.ID)
}

// hubObject is the hub's object of a site's object (a kind, its edge id).
func (a *applier) hubObject(ctx context.Context, kind string, edgeID int64) (int64, bool, error) {
	return a.db.HubObject(ctx, a.site.ID, kind, key(edgeID))
}

// logValues are the hub's fields of a log the edge sent (rec, its body), its device and command
// found by lookup; or the problem that keeps the hub from storing it.
func (a *applier) logValues(ctx context.Context, rec Record, body map[string]any,
	lookup func(ctx context.Context, kind string, edgeID int64) (int64, bool, error)) (store.Values, string, error) {
	v := store.Values{
		"username": str(body, "username"), "user": nil,
		"command_name": name(body, "command", "name"), "command_type": orDefault(choice(body, "command_type"), store.CommandShow),
		"device_name": name(body, "device", "name"),
		"success":     boolean(body, "success"), "execution_duration": float(body, "execution_duration"),
		"error_message": str(body, "error_message"), "sent_command": str(body, "sent_command"),
		"client_address": str(body, "client_address"), "output": str(body, "output"),
		"credential_set_name": name(body, "credential_set", "name"), "notes": str(body, "notes"),
	}
	if rec.Cut {
		v["output"] = str(body, "output") + "\n[the edge cut this output to fit what the hub accepts; the whole output is in the site's own log]"
	}
	for _, k := range []string{"parsed_output", "syntax_error", "variables", "failure"} {
		if x, ok := body[k]; ok && x != nil {
			v[k] = x
		}
	}
	if s := choice(body, "source"); s != "" {
		v["source"] = s
	}
	for _, k := range []string{"created", "execution_time"} {
		if t, err := time.Parse(time.RFC3339Nano, str(body, k)); err == nil {
			v[k] = t.Add(a.skew)
		}
	}
	if _, ok := v["created"]; !ok {
		return nil, "a log without its created time", nil
	}
	for _, ref := range []struct{ field, kind string }{{"device", store.KindDevice}, {"command", store.KindCommand}} {
		if edge := num(obj(body, ref.field), "id"); edge != 0 {
			id, ok, err := lookup(ctx, ref.kind, edge)
			if err != nil {
				return nil, "", err
			}
			if ok {
				v[ref.field] = id
			}
		}
	}
	return v, "", nil
}

// job: a site's answer to a job of the hub's, whose waiting request (or a later read of
// the job) answers it. The answer's command_log_id becomes the hub's log of it.
func (a *applier) job(ctx context.Context, rec Record) (applied, error) {
	var ja JobAnswer
	if err := json.Unmarshal(rec.Body, &ja); err != nil || ja.Job == 0 {
		return applied{problem: "not a job's answer"}, nil
	}
	var logID int64
	if ja.LogUID != "" {
		id, ok, err := a.db.HubObject(ctx, a.site.ID, store.KindLog, ja.LogUID)
		if err != nil {
			return applied{}, err
		}
		if ok {
			logID = id
		}
	}
	answer := ja.Answer
	var body map[string]any
	if json.Unmarshal(answer, &body) == nil && body["command_log_id"] != nil {
		body["command_log_id"] = nil
		if logID != 0 {
			body["command_log_id"] = logID
		}
		answer, _ = json.Marshal(body)
	}
	done, err := a.db.FinishHubJob(ctx, a.site.ID, ja.Job, ja.Status, answer, logID)
	if err == nil && !done {
		return applied{problem: fmt.Sprintf("job %d: not a job of this site waiting for its answer", ja.Job)}, nil
	}
	return applied{hubID: ja.Job}, err
}

// snapshot: the body lists every object of each kind the edge has; the site's others
// at the hub go.
func (a *applier) snapshot(ctx context.Context, body map[string]any) (applied, error) {
	for _, kind := range []string{store.KindCommand, store.KindDevice, store.KindPlatform} {
		ids, listed := body[kind].([]any)
		if !listed {
			continue // an edge that lists not this kind keeps the hub's as they are
		}
		keep := map[string]bool{}
		for _, id := range ids {
			if f, ok := id.(float64); ok {
				keep[key(int64(f))] = true
			}
		}
		held, err := a.db.HubObjects(ctx, a.site.ID, kind)
		if err != nil {
			return applied{}, err
		}
		for k := range held {
			if keep[k] {
				continue
			}
			edgeID, _ := strconv.ParseInt(k, 10, 64)
			if _, err := a.apply(ctx, Record{Kind: kind, Op: store.OpDelete, ID: edgeID}); err != nil {
				return applied{}, err
			}
		}
	}
	return applied{}, nil
}

// The readers of a record's body: a value of the wrong type reads as missing, which
// takes the field's default (an older edge, a field it did not have).

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func num(m map[string]any, k string) int64 { f, _ := m[k].(float64); return int64(f) }

func float(m map[string]any, k string) float64 { f, _ := m[k].(float64); return f }

func boolean(m map[string]any, k string) bool { b, _ := m[k].(bool); return b }

func obj(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }

func asObject(x any) map[string]any { o, _ := x.(map[string]any); return o }

func list(m map[string]any, k string) []any { l, _ := m[k].([]any); return l }

// nullNum is a number, or nil when the body has none.
func nullNum(m map[string]any, k string) any {
	if f, ok := m[k].(float64); ok {
		return int64(f)
	}
	return nil
}

// choice is a choice field's value, read as NetBox renders it ({"value", "label"}) or
// bare.
func choice(m map[string]any, k string) string {
	if o, ok := m[k].(map[string]any); ok {
		return str(o, "value")
	}
	return str(m, k)
}

// name is the name of a kept reference ({"id", "name"}), or "".
func name(m map[string]any, ref, k string) string { return str(obj(m, ref), k) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orTrue(m map[string]any, k string) bool {
	if b, ok := m[k].(bool); ok {
		return b
	}
	return true
}

func orObject(x any) map[string]any {
	if o, ok := x.(map[string]any); ok {
		return o
	}
	return map[string]any{}
}

// describe names a record in a log line.
func describe(rec Record) string {
	return fmt.Sprintf("%s %s %d (seq %d)", rec.Kind, rec.Op, rec.ID, rec.Seq)
}
