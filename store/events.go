package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// The object types of webhooks, event rules and deliveries.
const (
	TypeWebhook  = "extras.webhook"
	TypeEvent    = "extras.eventrule"
	TypeDelivery = "netbox_toolkit_plugin.webhookdelivery"
)

// EventTypes are NetBox's event types.
var EventTypes = []Choice{{"object_created", "Object created"}, {"object_updated", "Object updated"},
	{"object_deleted", "Object deleted"}, {"job_started", "Job started"}, {"job_completed", "Job completed"},
	{"job_failed", "Job failed"}, {"job_errored", "Job errored"},
	{"backup_stale", "Backup older than its limit"}, {"backup_fresh", "Backup within its limit again"}}

// EventSources are the object types FieldKit raises events for, each with the events it
// raises: a command log when it is written (an execution), a schedule when a run starts
// and ends, a config version when a backup keeps a changed configuration or quarantines
// a read, a device when its last good backup grows older than its limit and when it is
// within it again.
var EventSources = map[string][]string{
	TypeCommandLog:    {"object_created"},
	TypeSchedule:      {"job_started", "job_completed", "job_failed", "job_errored"},
	TypeConfigVersion: {"object_created"},
	TypeDevice:        {"backup_stale", "backup_fresh"},
}

// Raises reports whether any of the object types raises any of the event types.
func Raises(objectTypes, eventTypes []string) bool {
	for _, t := range objectTypes {
		for _, e := range EventSources[t] {
			if slices.Contains(eventTypes, e) {
				return true
			}
		}
	}
	return false
}

// Webhooks is extras.webhook: a receiver of events, as NetBox 4 has it, with NetBox 3's
// own triggers (content_types, type_*, enabled, conditions) for clients written for it.
var Webhooks = declare(&Model{
	Type: TypeWebhook, Name: "Webhook", Table: "webhooks", DefaultOrder: "name",
	Fields: []Field{
		nameField(150, ""),
		description(200),
		{Name: "payload_url", Column: "payload_url", Kind: KindString, Required: true, MaxLen: 500, Label: "URL",
			Doc: "where the request goes (http or https); {{ variables }} are substituted as in body_template"},
		{Name: "http_method", Column: "http_method", Kind: KindString, Choices: plainChoices([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}),
			Default: "POST", Label: "HTTP method"},
		{Name: "http_content_type", Column: "http_content_type", Kind: KindString, MaxLen: 100, Default: "application/json",
			Label: "HTTP content type"},
		{Name: "additional_headers", Column: "additional_headers", Kind: KindString,
			Doc: "one Name: Value a line; {{ variables }} are substituted"},
		{Name: "body_template", Column: "body_template", Kind: KindString,
			Doc: "the request body, with {{ variable }} substitutions (see the README: no code runs from a template); " +
				"empty: the event's whole context as JSON"},
		{Name: "secret", Column: "secret", Kind: KindString, MaxLen: 255,
			Doc: "signs each request: X-Hook-Signature is the hex HMAC-SHA512 of the body with it; stored encrypted and " +
				"read back as ******** (writing ******** keeps it; an empty string removes it)"},
		{Name: "ssl_verification", Column: "ssl_verification", Kind: KindBool, Default: true, Label: "SSL verification",
			Doc: "check the receiver's HTTPS certificate"},
		{Name: "ca_file_path", Column: "ca_file_path", Kind: KindString, Null: true, MaxLen: 4096, Label: "CA file path",
			Doc: "a PEM file of the CA certificates to trust for the receiver, on the server; null: the system's"},
		{Name: "content_types", Column: "content_types", Kind: KindStrings, Default: []string{}, Choices: objectTypeChoices(),
			Doc: "NetBox 3's own triggers: the object types this webhook fires for by itself (with type_*); NetBox 4 uses event rules"},
		{Name: "type_create", Column: "type_create", Kind: KindBool, Default: false, Doc: "NetBox 3: fire on object_created"},
		{Name: "type_update", Column: "type_update", Kind: KindBool, Default: false, Doc: "NetBox 3: fire on object_updated"},
		{Name: "type_delete", Column: "type_delete", Kind: KindBool, Default: false, Doc: "NetBox 3: fire on object_deleted"},
		{Name: "type_job_start", Column: "type_job_start", Kind: KindBool, Default: false, Doc: "NetBox 3: fire on job_started"},
		{Name: "type_job_end", Column: "type_job_end", Kind: KindBool, Default: false,
			Doc: "NetBox 3: fire on job_completed, job_failed and job_errored"},
		{Name: "enabled", Column: "enabled", Kind: KindBool, Default: true, Filter: FilterExact,
			Doc: "NetBox 3: whether the webhook's own triggers fire (event rules have their own enabled)"},
		{Name: "conditions", Column: "conditions", Kind: KindJSON, Null: true, Schema: "EventConditions",
			Doc: "NetBox 3: the conditions of the webhook's own triggers"},
		tagsField("webhook_tags", "webhook_id"),
		customFields("", nil),
	},
	Filters: map[string]Filter{
		"payload_url": {Path: "payload_url", Lookups: true, Doc: "URL"},
		"http_method": {Path: "http_method", Doc: "HTTP method"},
		"tag":         {Path: "tags__slug", Doc: "tag slug"},
	},
	Write: func(ctx context.Context, tx *sql.Tx, id int64, _ Values, _ Row) error {
		return forgetStates(ctx, tx, "webhook", id)
	},
	Deleted: func(ctx context.Context, tx *sql.Tx, old Row) error {
		return forgetStates(ctx, tx, "webhook", old.ID())
	},
})

// EventRules is extras.eventrule: which events send which webhook.
var EventRules = declare(&Model{
	Type: TypeEvent, Name: "EventRule", Table: "event_rules", DefaultOrder: "name",
	Fields: []Field{
		nameField(150, ""),
		description(200),
		{Name: "object_types", Column: "object_types", Kind: KindStrings, Required: true, Choices: objectTypeChoices(),
			Doc: "the object types whose events the rule reacts to: netbox_toolkit_plugin.commandlog (object_created, " +
				"each execution), netbox_toolkit_plugin.schedule (job_started, job_completed, job_failed, job_errored, each run), " +
				"netbox_toolkit_plugin.configversion (object_created: a backup stored a changed configuration, or quarantined " +
				"a read: status says which) and dcim.device (backup_stale, backup_fresh: its last good backup against its limit)"},
		{Name: "enabled", Column: "enabled", Kind: KindBool, Default: true, Filter: FilterExact, Sort: true},
		{Name: "event_types", Column: "event_types", Kind: KindStrings, Required: true, Choices: EventTypes,
			Doc: "the event types the rule reacts to"},
		{Name: "conditions", Column: "conditions", Kind: KindJSON, Null: true, Schema: "EventConditions",
			Doc: `NetBox's condition set on the event's data: {"attr": "success", "value": false}, with op (eq, gt, gte, ` +
				`lt, lte, in, contains, regex) and negate, or {"and": [...]} / {"or": [...]}; null: always`},
		{Name: "action_type", Column: "action_type", Kind: KindString, Choices: []Choice{{"webhook", "Webhook"}}, Default: "webhook",
			Labeled: true, Doc: "what the rule does: send a webhook"},
		{Name: "action_object_type", Column: "action_object_type", Kind: KindString, Choices: plainChoices([]string{TypeWebhook}),
			Default: TypeWebhook},
		{Name: "action_object_id", Column: "action_object_id", Kind: KindInt, Required: true, Filter: FilterExact,
			Doc: "the webhook's id; a webhook a rule sends cannot be deleted"},
		{Name: "action_object", Column: "action_object_id", Kind: KindInt, Rel: TypeWebhook, Access: ReadOnly},
		{Name: "state_changes_only", Column: "state_changes_only", Kind: KindBool, Default: true, Label: "On changes only",
			Doc: "FieldKit's: for an execution (per device and command) or a schedule's run, fire when the conditions " +
				"start to hold (the first failure) and once more when they stop (the recovery, state resolved), not at " +
				"every event; false: at every matching event, as NetBox does"},
		tagsField("event_rule_tags", "event_rule_id"),
		customFields("", nil),
	},
	Filters: map[string]Filter{
		"tag": {Path: "tags__slug", Doc: "tag slug"},
	},
	Write: func(ctx context.Context, tx *sql.Tx, id int64, _ Values, _ Row) error {
		return forgetStates(ctx, tx, "rule", id)
	},
	Deleted: func(ctx context.Context, tx *sql.Tx, old Row) error { return forgetStates(ctx, tx, "rule", old.ID()) },
})

// DeliveryStatuses are a delivery's states.
var DeliveryStatuses = []Choice{{"pending", "Pending"}, {"delivered", "Delivered"}, {"failed", "Failed"}}

// Deliveries is netbox_toolkit_plugin.webhookdelivery: each request an event rule made a
// webhook send, with its attempts and the receiver's last answer. Read-only.
var Deliveries = declare(&Model{
	Type: TypeDelivery, Name: "WebhookDelivery", Table: "webhook_deliveries", DefaultOrder: "-id", NoStamps: true,
	Display: func(r Row) string { return fmt.Sprintf("%s %v", r["event_type"], r["object_id"]) },
	Fields: []Field{
		{Name: "webhook", Column: "webhook_id", Kind: KindInt, Rel: TypeWebhook, Access: ReadOnly, Filter: FilterExact},
		{Name: "event_rule", Column: "event_rule_id", Kind: KindInt, Rel: TypeEvent, Access: ReadOnly, Null: true,
			Doc: "null for a webhook's own NetBox 3 triggers, or once the rule is deleted"},
		{Name: "object_type", Column: "object_type", Kind: KindString, Access: ReadOnly, Filter: FilterExact},
		{Name: "object_id", Column: "object_id", Kind: KindInt, Access: ReadOnly, Filter: FilterExact},
		{Name: "event_type", Column: "event_type", Kind: KindString, Access: ReadOnly, Filter: FilterExact},
		{Name: "state", Column: "state", Kind: KindString, Access: ReadOnly, Filter: FilterExact,
			Doc: "firing: the rule's conditions began to hold (or, on every event, hold); resolved: they stopped holding"},
		{Name: "status", Column: "status", Kind: KindString, Access: ReadOnly, Choices: DeliveryStatuses, Labeled: true,
			Filter: FilterExact, Sort: true, Doc: "pending (waiting or retrying), delivered, or failed (given up)"},
		{Name: "attempts", Column: "attempts", Kind: KindInt, Access: ReadOnly},
		{Name: "next_attempt", Column: "next_attempt", Kind: KindTime, Access: ReadOnly,
			Doc: "when it is tried next; while a try is under way, when it is tried again should that try never be recorded"},
		{Name: "last_attempt", Column: "last_attempt", Kind: KindTime, Access: ReadOnly, Null: true},
		{Name: "response_status", Column: "response_status", Kind: KindInt, Access: ReadOnly, Null: true,
			Doc: "the receiver's last HTTP status"},
		{Name: "response_body", Column: "response_body", Kind: KindString, Access: ReadOnly,
			Doc: "the start of the receiver's last answer (1,000 characters)"},
		{Name: "error", Column: "error", Kind: KindString, Access: ReadOnly, Doc: "why the last attempt failed"},
		{Name: "created", Column: "created", Kind: KindTime, Access: ReadOnly, Sort: true, Filter: FilterLookups},
		{Name: "delivered", Column: "delivered", Kind: KindTime, Access: ReadOnly, Null: true},
	},
})

func forgetStates(ctx context.Context, tx *sql.Tx, kind string, id int64) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM event_states WHERE rule = ?`, kind+":"+strconv.FormatInt(id, 10))
	return err
}

// Subscription is a rule that sends a webhook: an event rule, or a webhook's own NetBox
// 3 triggers (RuleID 0).
type Subscription struct {
	Key              string // event_states' rule: rule:<id> or webhook:<id>
	RuleID           int64
	Name             string
	WebhookID        int64
	ObjectTypes      []string
	EventTypes       []string
	Conditions       json.RawMessage // nil: none
	StateChangesOnly bool
}

// Subscriptions loads the enabled event rules and webhooks' own triggers.
func (db *DB) Subscriptions(ctx context.Context) ([]Subscription, error) {
	var out []Subscription
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, action_object_id, object_types, event_types, conditions,
		state_changes_only FROM event_rules WHERE enabled = 1 ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: event rules: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s Subscription
		var objs, evs string
		var cond sql.NullString
		if err := rows.Scan(&s.RuleID, &s.Name, &s.WebhookID, &objs, &evs, &cond, &s.StateChangesOnly); err != nil {
			return nil, err
		}
		s.Key = "rule:" + strconv.FormatInt(s.RuleID, 10)
		_ = json.Unmarshal([]byte(objs), &s.ObjectTypes)
		_ = json.Unmarshal([]byte(evs), &s.EventTypes)
		if cond.Valid && cond.String != "null" {
			s.Conditions = json.RawMessage(cond.String)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	hooks, err := db.r.QueryContext(ctx, `SELECT id, name, content_types, type_create, type_update, type_delete,
		type_job_start, type_job_end, conditions FROM webhooks WHERE enabled = 1 AND content_types != '[]' ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: webhooks: %w", err)
	}
	defer hooks.Close()
	for hooks.Next() {
		var s Subscription
		var objs string
		var create, update, del, start, end bool
		var cond sql.NullString
		if err := hooks.Scan(&s.WebhookID, &s.Name, &objs, &create, &update, &del, &start, &end, &cond); err != nil {
			return nil, err
		}
		s.Key, s.StateChangesOnly = "webhook:"+strconv.FormatInt(s.WebhookID, 10), true
		_ = json.Unmarshal([]byte(objs), &s.ObjectTypes)
		for _, t := range []struct {
			on     bool
			events []string
		}{{create, []string{"object_created"}}, {update, []string{"object_updated"}}, {del, []string{"object_deleted"}},
			{start, []string{"job_started"}}, {end, []string{"job_completed", "job_failed", "job_errored"}}} {
			if t.on {
				s.EventTypes = append(s.EventTypes, t.events...)
			}
		}
		if cond.Valid && cond.String != "null" {
			s.Conditions = json.RawMessage(cond.String)
		}
		out = append(out, s)
	}
	return out, hooks.Err()
}

// Subscribed reports whether an enabled event rule, or a webhook's own trigger, names an
// object type: events nobody listens to are not queued.
func (db *DB) Subscribed(ctx context.Context, objectType string) (bool, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM event_rules r, json_each(r.object_types) j
		WHERE r.enabled = 1 AND j.value = ?) + (SELECT count(*) FROM webhooks w, json_each(w.content_types) j
		WHERE w.enabled = 1 AND j.value = ?)`, objectType, objectType).Scan(&n)
	return n > 0, err
}

// Event is one event waiting to be matched against the rules.
type Event struct {
	ID                    int64
	ObjectType, EventType string
	ObjectID              int64
	At                    time.Time
	Username              string
	Data                  json.RawMessage // nil: read the object when processed
}

// QueueEvent adds an event to the outbox.
func (db *DB) QueueEvent(ctx context.Context, e Event) error {
	var data any
	if e.Data != nil {
		data = string(e.Data)
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO event_outbox (object_type, object_id, event_type, at, username, data)
			VALUES (?, ?, ?, ?, ?, ?)`, e.ObjectType, e.ObjectID, e.EventType, Stamp(e.At), e.Username, data)
		return err
	})
}

// Outbox reads the oldest events waiting, at most n.
func (db *DB) Outbox(ctx context.Context, n int) ([]Event, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, object_type, object_id, event_type, at, username, data
		FROM event_outbox ORDER BY id LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("store: event outbox: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at string
		var data sql.NullString
		if err := rows.Scan(&e.ID, &e.ObjectType, &e.ObjectID, &e.EventType, &at, &e.Username, &data); err != nil {
			return nil, err
		}
		e.At = ParseStamp(at)
		if data.Valid {
			e.Data = json.RawMessage(data.String)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// EventStates are the (rule, object) pairs whose rule's conditions held at their last
// event.
func (db *DB) EventStates(ctx context.Context) (map[[2]string]bool, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT rule, key FROM event_states`)
	if err != nil {
		return nil, fmt.Errorf("store: event states: %w", err)
	}
	defer rows.Close()
	out := map[[2]string]bool{}
	for rows.Next() {
		var k [2]string
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			return nil, err
		}
		out[k] = true
	}
	return out, rows.Err()
}

// NewDelivery is a delivery an event made.
type NewDelivery struct {
	WebhookID, RuleID     int64 // RuleID 0: a webhook's own trigger
	ObjectType, EventType string
	ObjectID              int64
	State                 string
	Context               json.RawMessage
}

// ErrEventsTaken says that another process matched some of the events first (two hub
// processes on one PostgreSQL): nothing was recorded; read the outbox and the rule
// states again.
var ErrEventsTaken = errors.New("store: events matched by another process")

// Dispatched records what matching some events made, in one transaction: the events
// taken off the outbox, the deliveries, and the rule states that turned (true: now
// holds). The events go first, each checked: one another process took (its delete
// waits for that process's transaction, then finds no row) makes it ErrEventsTaken,
// so that an event makes its deliveries once whatever the number of processes.
func (db *DB) Dispatched(ctx context.Context, ds []NewDelivery, states map[[2]string]bool, done []int64) error {
	now := Stamp(db.now())
	return db.Write(ctx, func(tx *sql.Tx) error {
		for _, id := range slices.Sorted(slices.Values(done)) {
			res, err := tx.ExecContext(ctx, `DELETE FROM event_outbox WHERE id = ?`, id)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return errors.Join(err, ErrEventsTaken)
			}
		}
		for _, d := range ds {
			var rule any
			if d.RuleID != 0 {
				rule = d.RuleID
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (webhook_id, event_rule_id, object_type, object_id,
				event_type, state, context, next_attempt, created) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS
				(SELECT 1 FROM webhooks WHERE id = ?)`, d.WebhookID, rule, d.ObjectType, d.ObjectID, d.EventType, d.State,
				string(d.Context), now, now, d.WebhookID); err != nil {
				return err
			}
		}
		for k, holds := range states {
			q := `DELETE FROM event_states WHERE rule = ? AND key = ?`
			args := []any{k[0], k[1]}
			if holds {
				q, args = `INSERT INTO event_states (rule, key, since) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, append(args, now)
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// Delivery is a pending delivery with what sending it needs.
type Delivery struct {
	ID, WebhookID int64
	Attempts      int
	Created       time.Time
	NextAttempt   time.Time
	Context       json.RawMessage
	EventType     string
	nextAttempt   string // as stored: ClaimDelivery's test
}

// DueDeliveries are, for each webhook, its oldest pending delivery: a webhook's
// deliveries go out in order, one at a time, so a receiver that is down is not
// hammered and gets its events in order once it is back. Those not yet due are
// returned too; the caller waits for the first.
func (db *DB) DueDeliveries(ctx context.Context) ([]Delivery, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT d.id, d.webhook_id, d.attempts, d.created, d.next_attempt, d.context, d.event_type
		FROM webhook_deliveries d WHERE d.id IN (SELECT min(id) FROM webhook_deliveries WHERE status = 'pending' GROUP BY webhook_id)
		ORDER BY d.id`)
	if err != nil {
		return nil, fmt.Errorf("store: webhook deliveries: %w", err)
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		var d Delivery
		var created, next, ctxt string
		if err := rows.Scan(&d.ID, &d.WebhookID, &d.Attempts, &created, &next, &ctxt, &d.EventType); err != nil {
			return nil, err
		}
		d.Created, d.NextAttempt, d.Context, d.nextAttempt = ParseStamp(created), ParseStamp(next), json.RawMessage(ctxt), next
		out = append(out, d)
	}
	return out, rows.Err()
}

// ClaimDelivery takes a delivery due at now (the sender's clock) for one try, until
// until: its next_attempt moves there, provided it is still the one d was read with and
// is due (one read while another process holds it shows that process's until). False:
// another process took it first (two hub processes on one PostgreSQL), or it was tried
// meanwhile. A process that stops in the middle of its try leaves the delivery to be
// tried again at until.
func (db *DB) ClaimDelivery(ctx context.Context, d Delivery, now, until time.Time) (bool, error) {
	var n int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET next_attempt = ? WHERE id = ? AND status = 'pending'
			AND next_attempt = ? AND next_attempt <= ?`, Stamp(until), d.ID, d.nextAttempt, Stamp(now))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: claim webhook delivery %d: %w", d.ID, err)
	}
	return n == 1, nil
}

// Attempt is the outcome of one try at a delivery.
type Attempt struct {
	Status       string    // delivered, pending (retry at Next) or failed (given up)
	Next         time.Time // the next try of a pending delivery
	HTTPStatus   int       // 0: no answer
	ResponseBody string
	Error        string
}

// RecordAttempt stores a delivery's try.
func (db *DB) RecordAttempt(ctx context.Context, id int64, a Attempt) error {
	now := db.now()
	var status any
	if a.HTTPStatus != 0 {
		status = a.HTTPStatus
	}
	var delivered any
	if a.Status == "delivered" {
		delivered = Stamp(now)
	}
	next := a.Next
	if next.IsZero() {
		next = now
	}
	return db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt = ?,
			last_attempt = ?, response_status = ?, response_body = ?, error = ?, delivered = ? WHERE id = ?`,
			a.Status, Stamp(next), Stamp(now), status, a.ResponseBody, a.Error, delivered, id)
		return err
	})
}

// PruneDeliveries deletes the deliveries done (delivered or failed) before a time.
func (db *DB) PruneDeliveries(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE status != 'pending' AND created < ?`, Stamp(before))
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// WebhookTarget is what sending to a webhook needs.
type WebhookTarget struct {
	ID                                      int64
	Name, URL, Method, ContentType, Headers string
	BodyTemplate, SealedSecret              string
	SSLVerification                         bool
	CAFile                                  string
}

// WebhookTarget loads a webhook for sending.
func (db *DB) WebhookTarget(ctx context.Context, id int64) (WebhookTarget, error) {
	w := WebhookTarget{ID: id}
	var ca sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT name, payload_url, http_method, http_content_type, additional_headers,
		body_template, secret, ssl_verification, ca_file_path FROM webhooks WHERE id = ?`, id).Scan(&w.Name, &w.URL, &w.Method,
		&w.ContentType, &w.Headers, &w.BodyTemplate, &w.SealedSecret, &w.SSLVerification, &ca)
	if err == sql.ErrNoRows {
		return w, fmt.Errorf("webhook %d: %w", id, ErrNotFound)
	}
	w.CAFile = ca.String
	return w, err
}

// PendingDeliveries counts the deliveries not yet delivered nor given up.
func (db *DB) PendingDeliveries(ctx context.Context) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&n)
	return n, err
}

// SealText encrypts a secret that is not a credential set's (a webhook's), bound to
// purpose, as base64.
func (k *Keyring) SealText(purpose, plain string) string {
	if plain == "" {
		return ""
	}
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.StdEncoding.EncodeToString(k.aead.Seal(nonce, nonce, []byte(plain), []byte(purpose)))
}

// OpenText decrypts what SealText made for the same purpose.
func (k *Keyring) OpenText(purpose, sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	raw, err := base64.StdEncoding.DecodeString(sealed)
	n := k.aead.NonceSize()
	if err != nil || len(raw) < n {
		return "", ErrBadKey
	}
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return "", ErrBadKey
	}
	return string(plain), nil
}
