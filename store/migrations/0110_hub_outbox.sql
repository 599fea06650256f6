-- An edge's outbox to its hub (docs/HUB-PROTOCOL.md): every change the hub shows is
-- noted here in the transaction that makes it, by the triggers below, so that no writer
-- (the server, `fieldkit import`, a NetBox sync) can change a device, a command, a
-- platform or add a log without its record. A record names the object (kind, ref); the
-- pusher renders its body, as the API shows it, when it sends it.
--
-- hub_edge is the outbox's one row of state. The triggers note nothing until the server
-- enables it (hub.url set). seq is an AUTOINCREMENT: never reused, and with SQLite's one
-- writer, numbered without gaps in commit order.
CREATE TABLE hub_edge (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    enabled     INTEGER NOT NULL DEFAULT 0,
    -- instance is made with the database, at the first enable: the hub binds a site's
    -- token to it. epoch changes when the database may have been rewound (a backup
    -- restored): the hub's sequence starts again at epoch_start.
    instance    TEXT    NOT NULL DEFAULT '',
    epoch       TEXT    NOT NULL DEFAULT '',
    epoch_start INTEGER NOT NULL DEFAULT 1,
    -- acked is the highest seq of this epoch the hub acknowledged; rows above it are
    -- unsent. hub_url is the hub they were sent to.
    acked       INTEGER NOT NULL DEFAULT 0,
    hub_url     TEXT    NOT NULL DEFAULT '',
    -- copied is set in a copy `fieldkit backup` writes: whoever opens it next starts a
    -- new epoch.
    copied      INTEGER NOT NULL DEFAULT 0
);
INSERT INTO hub_edge (id) VALUES (1);

CREATE TABLE hub_outbox (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    kind    TEXT    NOT NULL, -- log, device, platform, command, snapshot
    op      TEXT    NOT NULL, -- upsert or delete
    ref     INTEGER NOT NULL, -- the object's id here
    created TEXT    NOT NULL
);

-- The store's time format (TimeFormat) from SQLite's clock, for the rows noted by
-- triggers; a log's record takes the log's own stamp.
CREATE TRIGGER command_logs_hub_ai AFTER INSERT ON command_logs
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created) VALUES ('log', 'upsert', NEW.id, NEW.created);
END;

CREATE TRIGGER devices_hub_ai AFTER INSERT ON devices
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created) VALUES ('device', 'upsert', NEW.id, NEW.last_updated);
END;
CREATE TRIGGER devices_hub_au AFTER UPDATE ON devices
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created) VALUES ('device', 'upsert', NEW.id, NEW.last_updated);
END;
CREATE TRIGGER devices_hub_ad AFTER DELETE ON devices
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('device', 'delete', OLD.id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
-- A device's tags and its primary address are part of how it reads. The device's own
-- delete cascades to its tags after the device is gone: that needs no record.
CREATE TRIGGER device_tags_hub_ai AFTER INSERT ON device_tags
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('device', 'upsert', NEW.device_id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
CREATE TRIGGER device_tags_hub_ad AFTER DELETE ON device_tags
WHEN (SELECT enabled FROM hub_edge WHERE id = 1) AND EXISTS (SELECT 1 FROM devices WHERE id = OLD.device_id)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('device', 'upsert', OLD.device_id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
CREATE TRIGGER ip_addresses_hub_au AFTER UPDATE OF address ON ip_addresses
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    SELECT 'device', 'upsert', id, NEW.last_updated FROM devices WHERE primary_ip4_id = NEW.id OR primary_ip6_id = NEW.id;
END;

CREATE TRIGGER platforms_hub_ai AFTER INSERT ON platforms
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created) VALUES ('platform', 'upsert', NEW.id, NEW.last_updated);
END;
CREATE TRIGGER platforms_hub_au AFTER UPDATE ON platforms
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created) VALUES ('platform', 'upsert', NEW.id, NEW.last_updated);
END;
CREATE TRIGGER platforms_hub_ad AFTER DELETE ON platforms
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('platform', 'delete', OLD.id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;

CREATE TRIGGER commands_hub_ai AFTER INSERT ON commands
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created) VALUES ('command', 'upsert', NEW.id, NEW.last_updated);
END;
CREATE TRIGGER commands_hub_au AFTER UPDATE ON commands
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created) VALUES ('command', 'upsert', NEW.id, NEW.last_updated);
END;
CREATE TRIGGER commands_hub_ad AFTER DELETE ON commands
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('command', 'delete', OLD.id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
-- A command's platforms, tags and variables are part of it; its own delete cascades
-- to them after it is gone.
CREATE TRIGGER command_platforms_hub_ai AFTER INSERT ON command_platforms
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('command', 'upsert', NEW.command_id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
CREATE TRIGGER command_platforms_hub_ad AFTER DELETE ON command_platforms
WHEN (SELECT enabled FROM hub_edge WHERE id = 1) AND EXISTS (SELECT 1 FROM commands WHERE id = OLD.command_id)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('command', 'upsert', OLD.command_id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
CREATE TRIGGER command_tags_hub_ai AFTER INSERT ON command_tags
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('command', 'upsert', NEW.command_id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
CREATE TRIGGER command_tags_hub_ad AFTER DELETE ON command_tags
WHEN (SELECT enabled FROM hub_edge WHERE id = 1) AND EXISTS (SELECT 1 FROM commands WHERE id = OLD.command_id)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('command', 'upsert', OLD.command_id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
CREATE TRIGGER command_variables_hub_ai AFTER INSERT ON command_variables
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('command', 'upsert', NEW.command_id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
CREATE TRIGGER command_variables_hub_au AFTER UPDATE ON command_variables
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('command', 'upsert', NEW.command_id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;
CREATE TRIGGER command_variables_hub_ad AFTER DELETE ON command_variables
WHEN (SELECT enabled FROM hub_edge WHERE id = 1) AND EXISTS (SELECT 1 FROM commands WHERE id = OLD.command_id)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    VALUES ('command', 'upsert', OLD.command_id, strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z');
END;

-- A tag's new name or slug reads in every device and command that carries it.
CREATE TRIGGER tags_hub_au AFTER UPDATE OF name, slug ON tags
WHEN (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created)
    SELECT 'device', 'upsert', device_id, NEW.last_updated FROM device_tags WHERE tag_id = NEW.id;
    INSERT INTO hub_outbox (kind, op, ref, created)
    SELECT 'command', 'upsert', command_id, NEW.last_updated FROM command_tags WHERE tag_id = NEW.id;
END;
