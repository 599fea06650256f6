-- 0091_events: NetBox's webhooks and event rules, and their deliveries.
--
-- A webhook is a receiver (URL, method, headers, body template, HMAC secret sealed with
-- the master key); an event rule sends one when events of its object types and event
-- types meet its conditions. A webhook may also carry NetBox 3's own triggers
-- (content_types, type_*, enabled, conditions), for clients written for NetBox 3.
--
-- Events wait in event_outbox until the events processor has matched them: a command
-- log's is written by a trigger in the transaction that writes the log (only while a
-- rule or a webhook subscribes to command logs), so no execution waits for a receiver
-- and an event is never lost between the log and its delivery. Each delivery is a row of
-- webhook_deliveries, retried with backoff until it is delivered or too old.
-- event_states holds, per rule and object (a device's command, a schedule), whether the
-- rule's conditions held at its last event: a rule that fires on changes only fires when
-- that turns (the first failure, the recovery), not on every retry.

CREATE TABLE webhooks (
    id                 INTEGER PRIMARY KEY,
    name               TEXT    NOT NULL UNIQUE,
    description        TEXT    NOT NULL DEFAULT '',
    payload_url        TEXT    NOT NULL,
    http_method        TEXT    NOT NULL DEFAULT 'POST',
    http_content_type  TEXT    NOT NULL DEFAULT 'application/json',
    additional_headers TEXT    NOT NULL DEFAULT '',
    body_template      TEXT    NOT NULL DEFAULT '',
    secret             TEXT    NOT NULL DEFAULT '', -- sealed; '' when none
    ssl_verification   INTEGER NOT NULL DEFAULT 1,
    ca_file_path       TEXT,
    content_types      TEXT    NOT NULL DEFAULT '[]',
    type_create        INTEGER NOT NULL DEFAULT 0,
    type_update        INTEGER NOT NULL DEFAULT 0,
    type_delete        INTEGER NOT NULL DEFAULT 0,
    type_job_start     INTEGER NOT NULL DEFAULT 0,
    type_job_end       INTEGER NOT NULL DEFAULT 0,
    enabled            INTEGER NOT NULL DEFAULT 1,
    conditions         TEXT,
    custom_fields      TEXT    NOT NULL DEFAULT '{}',
    created            TEXT    NOT NULL,
    last_updated       TEXT    NOT NULL
);

CREATE TABLE webhook_tags (
    webhook_id INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    tag_id     INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (webhook_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX webhook_tags_tag ON webhook_tags (tag_id);

CREATE TABLE event_rules (
    id                 INTEGER PRIMARY KEY,
    name               TEXT    NOT NULL UNIQUE,
    description        TEXT    NOT NULL DEFAULT '',
    object_types       TEXT    NOT NULL,
    enabled            INTEGER NOT NULL DEFAULT 1,
    event_types        TEXT    NOT NULL,
    conditions         TEXT,
    action_type        TEXT    NOT NULL DEFAULT 'webhook',
    action_object_type TEXT    NOT NULL DEFAULT 'extras.webhook',
    action_object_id   INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE RESTRICT,
    state_changes_only INTEGER NOT NULL DEFAULT 1,
    custom_fields      TEXT    NOT NULL DEFAULT '{}',
    created            TEXT    NOT NULL,
    last_updated       TEXT    NOT NULL
);
CREATE INDEX event_rules_webhook ON event_rules (action_object_id);

CREATE TABLE event_rule_tags (
    event_rule_id INTEGER NOT NULL REFERENCES event_rules (id) ON DELETE CASCADE,
    tag_id        INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (event_rule_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX event_rule_tags_tag ON event_rule_tags (tag_id);

CREATE TABLE event_outbox (
    id          INTEGER PRIMARY KEY,
    object_type TEXT    NOT NULL,
    object_id   INTEGER NOT NULL,
    event_type  TEXT    NOT NULL,
    at          TEXT    NOT NULL,
    username    TEXT    NOT NULL DEFAULT '',
    data        TEXT -- the object as the event saw it; NULL: read it when processed
);

CREATE TABLE event_states (
    rule  TEXT NOT NULL, -- 'rule:<id>' or 'webhook:<id>' (a webhook's own triggers)
    key   TEXT NOT NULL, -- the object: 'device:<id>/command:<id>', 'schedule:<id>'
    since TEXT NOT NULL,
    PRIMARY KEY (rule, key)
) WITHOUT ROWID;

CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY,
    webhook_id      INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_rule_id   INTEGER REFERENCES event_rules (id) ON DELETE SET NULL,
    object_type     TEXT    NOT NULL,
    object_id       INTEGER NOT NULL,
    event_type      TEXT    NOT NULL,
    state           TEXT    NOT NULL, -- firing or resolved
    context         TEXT    NOT NULL, -- the template context (JSON)
    status          TEXT    NOT NULL DEFAULT 'pending', -- pending, delivered or failed
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt    TEXT    NOT NULL,
    last_attempt    TEXT,
    response_status INTEGER,
    response_body   TEXT    NOT NULL DEFAULT '',
    error           TEXT    NOT NULL DEFAULT '',
    created         TEXT    NOT NULL,
    delivered       TEXT
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created);
CREATE INDEX webhook_deliveries_rule ON webhook_deliveries (event_rule_id);

CREATE TRIGGER command_logs_event_ai AFTER INSERT ON command_logs
WHEN EXISTS (SELECT 1 FROM event_rules r, json_each(r.object_types) j
             WHERE r.enabled AND j.value = 'netbox_toolkit_plugin.commandlog')
  OR EXISTS (SELECT 1 FROM webhooks w, json_each(w.content_types) j
             WHERE w.enabled AND w.type_create AND j.value = 'netbox_toolkit_plugin.commandlog')
BEGIN
    INSERT INTO event_outbox (object_type, object_id, event_type, at, username)
    VALUES ('netbox_toolkit_plugin.commandlog', NEW.id, 'object_created', NEW.created, NEW.username);
END;

CREATE TRIGGER webhooks_gen_ai AFTER INSERT ON webhooks BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER webhooks_gen_au AFTER UPDATE ON webhooks BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER webhooks_gen_ad AFTER DELETE ON webhooks BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER webhook_tags_gen_ai AFTER INSERT ON webhook_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER webhook_tags_gen_au AFTER UPDATE ON webhook_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER webhook_tags_gen_ad AFTER DELETE ON webhook_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER event_rules_gen_ai AFTER INSERT ON event_rules BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER event_rules_gen_au AFTER UPDATE ON event_rules BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER event_rules_gen_ad AFTER DELETE ON event_rules BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER event_rule_tags_gen_ai AFTER INSERT ON event_rule_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER event_rule_tags_gen_au AFTER UPDATE ON event_rule_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER event_rule_tags_gen_ad AFTER DELETE ON event_rule_tags BEGIN UPDATE generation SET n = n + 1; END;
