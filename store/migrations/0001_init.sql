-- 0001_init: every table FieldKit needs. Times are TEXT in the fixed-width UTC form
-- 2006-01-02T15:04:05.000000Z so that string order is time order and indexes work.

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL DEFAULT '',
    first_name    TEXT    NOT NULL DEFAULT '',
    last_name     TEXT    NOT NULL DEFAULT '',
    email         TEXT    NOT NULL DEFAULT '',
    is_active     INTEGER NOT NULL DEFAULT 1,
    is_superuser  INTEGER NOT NULL DEFAULT 0,
    date_joined   TEXT    NOT NULL,
    last_login    TEXT,
    created       TEXT    NOT NULL,
    last_updated  TEXT    NOT NULL
);

CREATE TABLE groups (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE user_groups (
    user_id  INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    group_id INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, group_id)
) WITHOUT ROWID;
CREATE INDEX user_groups_group ON user_groups (group_id);

CREATE TABLE tokens (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key_hash      TEXT    NOT NULL UNIQUE,
    key_prefix    TEXT    NOT NULL,
    description   TEXT    NOT NULL DEFAULT '',
    write_enabled INTEGER NOT NULL DEFAULT 1,
    expires       TEXT,
    last_used     TEXT,
    created       TEXT    NOT NULL,
    last_updated  TEXT    NOT NULL
);
CREATE INDEX tokens_user ON tokens (user_id);

CREATE TABLE object_permissions (
    id           INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL UNIQUE,
    description  TEXT    NOT NULL DEFAULT '',
    enabled      INTEGER NOT NULL DEFAULT 1,
    object_types TEXT    NOT NULL DEFAULT '[]', -- JSON array of "app.model"
    actions      TEXT    NOT NULL DEFAULT '[]', -- JSON array of action names
    constraints  TEXT,                          -- JSON object or list of objects, NULL = none
    created      TEXT    NOT NULL,
    last_updated TEXT    NOT NULL
);

CREATE TABLE permission_users (
    permission_id INTEGER NOT NULL REFERENCES object_permissions (id) ON DELETE CASCADE,
    user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (permission_id, user_id)
) WITHOUT ROWID;
CREATE INDEX permission_users_user ON permission_users (user_id);

CREATE TABLE permission_groups (
    permission_id INTEGER NOT NULL REFERENCES object_permissions (id) ON DELETE CASCADE,
    group_id      INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    PRIMARY KEY (permission_id, group_id)
) WITHOUT ROWID;
CREATE INDEX permission_groups_group ON permission_groups (group_id);

-- Web UI sessions; the id is stored only as its SHA-256.
CREATE TABLE sessions (
    id_hash    TEXT    PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token TEXT    NOT NULL,
    created    TEXT    NOT NULL,
    expires    TEXT    NOT NULL,
    last_seen  TEXT    NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE sites (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    slug         TEXT NOT NULL UNIQUE,
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE platforms (
    id                INTEGER PRIMARY KEY,
    name              TEXT    NOT NULL UNIQUE,
    slug              TEXT    NOT NULL UNIQUE,
    description       TEXT    NOT NULL DEFAULT '',
    driver            TEXT    NOT NULL DEFAULT '',
    legacy_algorithms INTEGER NOT NULL DEFAULT 0,
    created           TEXT    NOT NULL,
    last_updated      TEXT    NOT NULL
);

CREATE TABLE tags (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    slug         TEXT NOT NULL UNIQUE,
    color        TEXT NOT NULL DEFAULT '9e9e9e',
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE vlans (
    id           INTEGER PRIMARY KEY,
    vid          INTEGER NOT NULL,
    name         TEXT    NOT NULL,
    site_id      INTEGER REFERENCES sites (id) ON DELETE SET NULL,
    status       TEXT    NOT NULL DEFAULT 'active',
    description  TEXT    NOT NULL DEFAULT '',
    created      TEXT    NOT NULL,
    last_updated TEXT    NOT NULL
);
CREATE INDEX vlans_site ON vlans (site_id, vid);
CREATE INDEX vlans_vid ON vlans (vid);

CREATE TABLE devices (
    id                INTEGER PRIMARY KEY,
    name              TEXT    NOT NULL,
    site_id           INTEGER NOT NULL REFERENCES sites (id) ON DELETE RESTRICT,
    platform_id       INTEGER REFERENCES platforms (id) ON DELETE SET NULL,
    status            TEXT    NOT NULL DEFAULT 'active',
    primary_ip4_id    INTEGER REFERENCES ip_addresses (id) ON DELETE SET NULL,
    primary_ip6_id    INTEGER REFERENCES ip_addresses (id) ON DELETE SET NULL,
    description       TEXT    NOT NULL DEFAULT '',
    custom_fields     TEXT    NOT NULL DEFAULT '{}',
    host_key          TEXT    NOT NULL DEFAULT '', -- TOFU: authorized_keys line of the first key seen
    legacy_algorithms INTEGER NOT NULL DEFAULT 0,
    created           TEXT    NOT NULL,
    last_updated      TEXT    NOT NULL,
    UNIQUE (site_id, name)
);
CREATE INDEX devices_name ON devices (name);
CREATE INDEX devices_platform ON devices (platform_id);

CREATE TABLE device_tags (
    device_id INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    tag_id    INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (device_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX device_tags_tag ON device_tags (tag_id);

CREATE TABLE interfaces (
    id               INTEGER PRIMARY KEY,
    device_id        INTEGER NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    name             TEXT    NOT NULL,
    type             TEXT    NOT NULL DEFAULT 'other',
    enabled          INTEGER NOT NULL DEFAULT 1,
    description      TEXT    NOT NULL DEFAULT '',
    mode             TEXT    NOT NULL DEFAULT '',
    untagged_vlan_id INTEGER REFERENCES vlans (id) ON DELETE SET NULL,
    created          TEXT    NOT NULL,
    last_updated     TEXT    NOT NULL,
    UNIQUE (device_id, name)
);
CREATE INDEX interfaces_untagged_vlan ON interfaces (untagged_vlan_id);

CREATE TABLE interface_tagged_vlans (
    interface_id INTEGER NOT NULL REFERENCES interfaces (id) ON DELETE CASCADE,
    vlan_id      INTEGER NOT NULL REFERENCES vlans (id) ON DELETE CASCADE,
    PRIMARY KEY (interface_id, vlan_id)
) WITHOUT ROWID;
CREATE INDEX interface_tagged_vlans_vlan ON interface_tagged_vlans (vlan_id);

CREATE TABLE ip_addresses (
    id                   INTEGER PRIMARY KEY,
    address              TEXT    NOT NULL,
    status               TEXT    NOT NULL DEFAULT 'active',
    dns_name             TEXT    NOT NULL DEFAULT '',
    description          TEXT    NOT NULL DEFAULT '',
    assigned_object_type TEXT,
    assigned_object_id   INTEGER REFERENCES interfaces (id) ON DELETE SET NULL,
    created              TEXT    NOT NULL,
    last_updated         TEXT    NOT NULL
);
CREATE INDEX ip_addresses_assigned ON ip_addresses (assigned_object_id);
CREATE INDEX ip_addresses_address ON ip_addresses (address);

CREATE TABLE commands (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    command       TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    command_type  TEXT NOT NULL DEFAULT 'show',
    custom_fields TEXT NOT NULL DEFAULT '{}',
    created       TEXT NOT NULL,
    last_updated  TEXT NOT NULL
);
CREATE INDEX commands_name ON commands (name);
CREATE INDEX commands_type ON commands (command_type);

CREATE TABLE command_platforms (
    command_id  INTEGER NOT NULL REFERENCES commands (id) ON DELETE CASCADE,
    platform_id INTEGER NOT NULL REFERENCES platforms (id) ON DELETE CASCADE,
    PRIMARY KEY (command_id, platform_id)
) WITHOUT ROWID;
CREATE INDEX command_platforms_platform ON command_platforms (platform_id);

CREATE TABLE command_tags (
    command_id INTEGER NOT NULL REFERENCES commands (id) ON DELETE CASCADE,
    tag_id     INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (command_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX command_tags_tag ON command_tags (tag_id);

CREATE TABLE command_variables (
    id            INTEGER PRIMARY KEY,
    command_id    INTEGER NOT NULL REFERENCES commands (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL DEFAULT 0,
    name          TEXT    NOT NULL,
    display_name  TEXT    NOT NULL DEFAULT '',
    variable_type TEXT    NOT NULL DEFAULT 'text',
    required      INTEGER NOT NULL DEFAULT 1,
    help_text     TEXT    NOT NULL DEFAULT '',
    default_value TEXT    NOT NULL DEFAULT '',
    UNIQUE (command_id, name)
);

-- Credential sets: secrets are AES-256-GCM ciphertexts under the master key, with the
-- set id and field name as associated data. The token is stored only as SHA-256.
CREATE TABLE credential_sets (
    id                INTEGER PRIMARY KEY,
    owner_id          INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name              TEXT    NOT NULL,
    description       TEXT    NOT NULL DEFAULT '',
    username          TEXT    NOT NULL,
    password_enc      BLOB,
    enable_secret_enc BLOB,
    private_key_enc   BLOB,
    token_hash        TEXT    NOT NULL UNIQUE,
    token_prefix      TEXT    NOT NULL,
    is_active         INTEGER NOT NULL DEFAULT 1,
    last_used         TEXT,
    created           TEXT    NOT NULL,
    last_updated      TEXT    NOT NULL,
    UNIQUE (owner_id, name)
);

CREATE TABLE credential_set_platforms (
    credential_set_id INTEGER NOT NULL REFERENCES credential_sets (id) ON DELETE CASCADE,
    platform_id       INTEGER NOT NULL REFERENCES platforms (id) ON DELETE CASCADE,
    PRIMARY KEY (credential_set_id, platform_id)
) WITHOUT ROWID;

-- Command logs keep the names they ran with, so history survives deletes.
CREATE TABLE command_logs (
    id                 INTEGER PRIMARY KEY,
    command_id         INTEGER REFERENCES commands (id) ON DELETE SET NULL,
    command_name       TEXT    NOT NULL,
    command_type       TEXT    NOT NULL DEFAULT 'show',
    device_id          INTEGER REFERENCES devices (id) ON DELETE SET NULL,
    device_name        TEXT    NOT NULL,
    user_id            INTEGER REFERENCES users (id) ON DELETE SET NULL,
    username           TEXT    NOT NULL,
    output             TEXT    NOT NULL DEFAULT '',
    parsed_output      TEXT,
    syntax_error       TEXT,
    success            INTEGER NOT NULL,
    error_message      TEXT    NOT NULL DEFAULT '',
    execution_duration REAL    NOT NULL DEFAULT 0,
    execution_time     TEXT    NOT NULL,
    created            TEXT    NOT NULL,
    last_updated       TEXT    NOT NULL
);
CREATE INDEX command_logs_created ON command_logs (created);
CREATE INDEX command_logs_device ON command_logs (device_id, created);
CREATE INDEX command_logs_command ON command_logs (command_id, created);
CREATE INDEX command_logs_user ON command_logs (user_id, created);
CREATE INDEX command_logs_username ON command_logs (username, created);
CREATE INDEX command_logs_success ON command_logs (success, created);
CREATE INDEX command_logs_device_success ON command_logs (device_id, success, created);

-- Running totals for statistics/: kept by triggers so an unconstrained reader never
-- scans a million rows to count them.
CREATE TABLE command_log_counts (
    command_name TEXT PRIMARY KEY,
    total        INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE command_log_errors (
    error TEXT PRIMARY KEY,
    total INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE command_log_totals (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    total      INTEGER NOT NULL DEFAULT 0,
    successful INTEGER NOT NULL DEFAULT 0
);
INSERT INTO command_log_totals (id, total, successful) VALUES (1, 0, 0);

CREATE TRIGGER command_logs_ai AFTER INSERT ON command_logs BEGIN
    UPDATE command_log_totals SET total = total + 1, successful = successful + NEW.success WHERE id = 1;
    INSERT INTO command_log_counts (command_name, total) VALUES (NEW.command_name, 1)
        ON CONFLICT (command_name) DO UPDATE SET total = total + 1;
    INSERT INTO command_log_errors (error, total)
        SELECT substr(NEW.error_message, 1, 100), 1 WHERE NEW.success = 0
        ON CONFLICT (error) DO UPDATE SET total = total + 1;
END;

CREATE TRIGGER command_logs_ad AFTER DELETE ON command_logs BEGIN
    UPDATE command_log_totals SET total = total - 1, successful = successful - OLD.success WHERE id = 1;
    UPDATE command_log_counts SET total = total - 1 WHERE command_name = OLD.command_name;
    DELETE FROM command_log_counts WHERE command_name = OLD.command_name AND total <= 0;
    UPDATE command_log_errors SET total = total - 1
        WHERE OLD.success = 0 AND error = substr(OLD.error_message, 1, 100);
    DELETE FROM command_log_errors WHERE total <= 0;
END;

-- Export runs: which periods the scheduler already wrote.
CREATE TABLE export_runs (
    period     TEXT PRIMARY KEY,
    file       TEXT NOT NULL,
    rows       INTEGER NOT NULL,
    created    TEXT NOT NULL
) WITHOUT ROWID;
