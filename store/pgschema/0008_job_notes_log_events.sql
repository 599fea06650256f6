-- 0008: a hub job's notes (SQLite's 0175), and the command logs' events (SQLite's
-- trigger command_logs_event_ai, 0091): every log written, by an execute at the hub or
-- by a site's push, queues its object_created event while an enabled event rule or a
-- webhook's own trigger subscribes to command logs.
ALTER TABLE hub_jobs ADD COLUMN notes TEXT NOT NULL DEFAULT '';

-- One trigger per statement, not per row: an ingest writes a run of logs in one
-- statement, and the subscription is looked up once for the run. The logs' ids come
-- from the statement's transition table, in id order (the outbox's order).
CREATE FUNCTION command_logs_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM event_rules r, json_each(r.object_types) j
               WHERE r.enabled = 1 AND j.value = 'netbox_toolkit_plugin.commandlog')
       OR EXISTS (SELECT 1 FROM webhooks w, json_each(w.content_types) j
                  WHERE w.enabled = 1 AND w.type_create = 1 AND j.value = 'netbox_toolkit_plugin.commandlog') THEN
        INSERT INTO event_outbox (object_type, object_id, event_type, at, username)
        SELECT 'netbox_toolkit_plugin.commandlog', n.id, 'object_created', n.created, n.username
        FROM new_logs n ORDER BY n.id;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER command_logs_event_ai AFTER INSERT ON command_logs REFERENCING NEW TABLE AS new_logs
    FOR EACH STATEMENT EXECUTE FUNCTION command_logs_event();
