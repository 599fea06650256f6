-- A hub's side (hub.serve, docs/HUB-PROTOCOL.md): the FieldKit sites that push to it,
-- the records they pushed, and which of the hub's objects each edge object became.
--
-- A FieldKit site is also a dcim site here (site_id): the devices it pushes are that
-- site's. token_hash is the SHA-256 of the site's token, shown once. instance is bound
-- by the first push: another database presenting the token is refused.
CREATE TABLE hub_sites (
    id           INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL UNIQUE,
    site_id      INTEGER NOT NULL REFERENCES sites (id) ON DELETE RESTRICT,
    description  TEXT    NOT NULL DEFAULT '',
    token_hash   TEXT    NOT NULL UNIQUE,
    token_prefix TEXT    NOT NULL,
    revoked      TEXT,
    instance     TEXT    NOT NULL DEFAULT '',
    -- The epoch the site pushes in, and the next record the hub expects of it.
    epoch        TEXT    NOT NULL DEFAULT '',
    next_seq     INTEGER NOT NULL DEFAULT 0,
    -- What the edge said of itself at its last request (its clock, version, backlog).
    version      TEXT    NOT NULL DEFAULT '',
    protocol     INTEGER NOT NULL DEFAULT 0,
    last_seen    TEXT,
    last_batch   TEXT,
    clock_skew_ms INTEGER NOT NULL DEFAULT 0,
    backlog      INTEGER NOT NULL DEFAULT 0,
    behind_ms    INTEGER NOT NULL DEFAULT 0,
    -- Records applied and duplicates received, since the site was added.
    records      INTEGER NOT NULL DEFAULT 0,
    duplicates   INTEGER NOT NULL DEFAULT 0,
    created      TEXT    NOT NULL,
    last_updated TEXT    NOT NULL
);
CREATE INDEX hub_sites_site ON hub_sites (site_id);

-- Every epoch a site pushed in: a batch in an epoch the site left is refused (a copy of
-- its database, superseded by the one restored).
CREATE TABLE hub_site_epochs (
    hub_site_id INTEGER NOT NULL REFERENCES hub_sites (id) ON DELETE CASCADE,
    epoch       TEXT    NOT NULL,
    first_seq   INTEGER NOT NULL,
    started     TEXT    NOT NULL,
    PRIMARY KEY (hub_site_id, epoch)
);

-- The ledger of records received, one row each, idempotent by (site, epoch, seq): a
-- record sent again is a duplicate and applied once. The body is not kept: it was
-- applied to the objects (hub_id), or problem says why not.
CREATE TABLE hub_records (
    hub_site_id INTEGER NOT NULL REFERENCES hub_sites (id) ON DELETE CASCADE,
    epoch       TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    kind        TEXT    NOT NULL,
    op          TEXT    NOT NULL,
    edge_id     INTEGER NOT NULL,
    uid         TEXT    NOT NULL DEFAULT '',
    hub_id      INTEGER,
    problem     TEXT    NOT NULL DEFAULT '',
    -- what was added to the edge's times of this record (its clock's measured skew)
    skew_ms     INTEGER NOT NULL DEFAULT 0,
    received    TEXT    NOT NULL,
    PRIMARY KEY (hub_site_id, epoch, seq)
);

-- Which object of the hub each edge object is: by the edge's id for the inventory, by
-- the log's uid for a log (a log's id is reused by a restored edge; its uid never).
CREATE TABLE hub_objects (
    hub_site_id INTEGER NOT NULL REFERENCES hub_sites (id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL,
    edge_key    TEXT    NOT NULL,
    hub_id      INTEGER NOT NULL,
    PRIMARY KEY (hub_site_id, kind, edge_key)
);
CREATE INDEX hub_objects_hub ON hub_objects (kind, hub_id);
