-- Config versions (issue 41): a device's running configuration as collected by an
-- ordinary execution marked as a backup, kept once per content (config_texts, by the
-- SHA-256 of the normalised text) and as a version only when it changed; a read that
-- fails its checks is kept as a quarantined attempt with its reason (its transcript is
-- the collection's command log).

-- A platform may name its own running-config command and lines to ignore (one Go
-- regular expression a line) besides its driver's.
ALTER TABLE platforms ADD COLUMN config_command TEXT NOT NULL DEFAULT '';
ALTER TABLE platforms ADD COLUMN config_ignore TEXT NOT NULL DEFAULT '';

-- One row per distinct normalised configuration: the text shown (its secrets masked)
-- and the text as read, sealed with the master key (AES-256-GCM, the hash as
-- associated data), shown only to users holding view_raw_config.
CREATE TABLE config_texts (
    hash    TEXT PRIMARY KEY,
    text    TEXT    NOT NULL,
    raw     BLOB    NOT NULL,
    secrets INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE config_versions (
    id              INTEGER PRIMARY KEY,
    device_id       INTEGER REFERENCES devices (id) ON DELETE SET NULL,
    device_name     TEXT    NOT NULL,
    status          TEXT    NOT NULL,               -- stored | quarantined
    reason          TEXT    NOT NULL DEFAULT '',    -- why a read was quarantined
    hash            TEXT    NOT NULL DEFAULT '' ,   -- config_texts.hash ('' when quarantined)
    command_log_id  INTEGER,                        -- the collection's log (not a foreign key: retention prunes logs)
    previous_id     INTEGER,                        -- the stored version this one follows
    lines           INTEGER NOT NULL DEFAULT 0,
    added           INTEGER NOT NULL DEFAULT 0,
    removed         INTEGER NOT NULL DEFAULT 0,
    secrets         INTEGER NOT NULL DEFAULT 0,
    changes         TEXT    NOT NULL DEFAULT '[]',  -- the FieldKit config executions since the previous version
    changed_outside INTEGER NOT NULL DEFAULT 0,
    oscillating     INTEGER NOT NULL DEFAULT 0,
    flipping        TEXT,                           -- {"removed": [...], "added": [...]} when oscillating
    confirmed       TEXT,                           -- the last read that found this configuration
    created         TEXT    NOT NULL,
    last_updated    TEXT    NOT NULL
);
CREATE INDEX config_versions_device ON config_versions (device_id, status, id);
CREATE INDEX config_versions_created ON config_versions (created);
CREATE INDEX config_versions_hash ON config_versions (hash);
