-- 0090_schedules: work that runs by itself.
--
-- A service credential set (service = 1) is made for unattended use by an administrator
-- holding the "service" action on credential sets: no person runs commands with it (its
-- token is never shown nor accepted), only the schedules that name it. Its name is
-- unique among service sets. Whether a set is a service set is decided when it is made.
--
-- A schedule runs a command (with its variables) on the devices it targets, resolved at
-- each run: those listed, and those matching every non-empty one of its sites,
-- platforms and tags. It runs as its owner (who last saved it), with the owner's
-- permissions, and with a service credential set; deleting the set pauses it (NULL),
-- deleting its command is refused while it names it.
--
-- schedule_state is the scheduler's own bookkeeping (next run, last run, skips): it is
-- written by every run, read by no permission check, so it leaves the generation alone.
-- A command log made by a schedule says source 'schedule' and keeps the schedule's id and
-- name in command_log_schedules.

ALTER TABLE credential_sets ADD COLUMN service INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX credential_sets_service_name ON credential_sets (name) WHERE service = 1;

CREATE TABLE schedules (
    id                INTEGER PRIMARY KEY,
    name              TEXT    NOT NULL UNIQUE,
    description       TEXT    NOT NULL DEFAULT '',
    kind              TEXT    NOT NULL DEFAULT 'command',
    command_id        INTEGER REFERENCES commands (id) ON DELETE RESTRICT,
    variables         TEXT,
    cron              TEXT    NOT NULL DEFAULT '',
    interval_seconds  INTEGER,
    jitter            INTEGER NOT NULL DEFAULT 0,
    window_start      TEXT    NOT NULL DEFAULT '',
    window_end        TEXT    NOT NULL DEFAULT '',
    timeout           INTEGER NOT NULL DEFAULT 30,
    credential_set_id INTEGER REFERENCES credential_sets (id) ON DELETE SET NULL,
    enabled           INTEGER NOT NULL DEFAULT 1,
    owner_id          INTEGER REFERENCES users (id) ON DELETE SET NULL,
    created           TEXT    NOT NULL,
    last_updated      TEXT    NOT NULL
);
CREATE INDEX schedules_command ON schedules (command_id);
CREATE INDEX schedules_credential_set ON schedules (credential_set_id);
CREATE INDEX schedules_owner ON schedules (owner_id);

CREATE TABLE schedule_devices (
    schedule_id INTEGER NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    device_id   INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    PRIMARY KEY (schedule_id, device_id)
) WITHOUT ROWID;
CREATE INDEX schedule_devices_device ON schedule_devices (device_id);

CREATE TABLE schedule_sites (
    schedule_id INTEGER NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    site_id     INTEGER NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    PRIMARY KEY (schedule_id, site_id)
) WITHOUT ROWID;
CREATE INDEX schedule_sites_site ON schedule_sites (site_id);

CREATE TABLE schedule_platforms (
    schedule_id INTEGER NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    platform_id INTEGER NOT NULL REFERENCES platforms (id) ON DELETE CASCADE,
    PRIMARY KEY (schedule_id, platform_id)
) WITHOUT ROWID;
CREATE INDEX schedule_platforms_platform ON schedule_platforms (platform_id);

CREATE TABLE schedule_tags (
    schedule_id INTEGER NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    tag_id      INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (schedule_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX schedule_tags_tag ON schedule_tags (tag_id);

CREATE TABLE schedule_state (
    schedule_id INTEGER PRIMARY KEY REFERENCES schedules (id) ON DELETE CASCADE,
    spec        TEXT    NOT NULL DEFAULT '', -- what next_run was computed from
    next_run    TEXT,
    last_run    TEXT,                        -- JSON: the last run's outcome
    skipped     INTEGER NOT NULL DEFAULT 0,  -- runs due while the one before was still going
    missed      INTEGER NOT NULL DEFAULT 0   -- runs due while the server was down, not run
);

-- The schedule of a log it made, beside the log rather than in it: a column added to
-- command_logs lands after output and parsed_output, and every read of it would follow
-- a large output's overflow pages (see migration 0063). Written right after the log.
CREATE TABLE command_log_schedules (
    log_id        INTEGER PRIMARY KEY REFERENCES command_logs (id) ON DELETE CASCADE,
    schedule_id   INTEGER NOT NULL,
    schedule_name TEXT    NOT NULL
);
CREATE INDEX command_log_schedules_schedule ON command_log_schedules (schedule_id, log_id);

CREATE TRIGGER schedules_gen_ai AFTER INSERT ON schedules BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedules_gen_au AFTER UPDATE ON schedules BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedules_gen_ad AFTER DELETE ON schedules BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_devices_gen_ai AFTER INSERT ON schedule_devices BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_devices_gen_au AFTER UPDATE ON schedule_devices BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_devices_gen_ad AFTER DELETE ON schedule_devices BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_sites_gen_ai AFTER INSERT ON schedule_sites BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_sites_gen_au AFTER UPDATE ON schedule_sites BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_sites_gen_ad AFTER DELETE ON schedule_sites BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_platforms_gen_ai AFTER INSERT ON schedule_platforms BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_platforms_gen_au AFTER UPDATE ON schedule_platforms BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_platforms_gen_ad AFTER DELETE ON schedule_platforms BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_tags_gen_ai AFTER INSERT ON schedule_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_tags_gen_au AFTER UPDATE ON schedule_tags BEGIN UPDATE generation SET n = n + 1; END;
CREATE TRIGGER schedule_tags_gen_ad AFTER DELETE ON schedule_tags BEGIN UPDATE generation SET n = n + 1; END;
