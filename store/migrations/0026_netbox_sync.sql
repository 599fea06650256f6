-- 0026_netbox_sync: objects synced from a central NetBox remember their NetBox id (and
-- NetBox's last_updated, to skip what did not change), and a sync stages what it
-- fetches so that an interrupted one resumes where it stopped.

ALTER TABLE tags ADD COLUMN netbox_id INTEGER;
ALTER TABLE tags ADD COLUMN netbox_updated TEXT NOT NULL DEFAULT '';
ALTER TABLE sites ADD COLUMN netbox_id INTEGER;
ALTER TABLE sites ADD COLUMN netbox_updated TEXT NOT NULL DEFAULT '';
ALTER TABLE platforms ADD COLUMN netbox_id INTEGER;
ALTER TABLE platforms ADD COLUMN netbox_updated TEXT NOT NULL DEFAULT '';
ALTER TABLE vlans ADD COLUMN netbox_id INTEGER;
ALTER TABLE vlans ADD COLUMN netbox_updated TEXT NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN netbox_id INTEGER;
ALTER TABLE devices ADD COLUMN netbox_updated TEXT NOT NULL DEFAULT '';
ALTER TABLE interfaces ADD COLUMN netbox_id INTEGER;
ALTER TABLE interfaces ADD COLUMN netbox_updated TEXT NOT NULL DEFAULT '';
ALTER TABLE ip_addresses ADD COLUMN netbox_id INTEGER;
ALTER TABLE ip_addresses ADD COLUMN netbox_updated TEXT NOT NULL DEFAULT '';

CREATE UNIQUE INDEX tags_netbox ON tags (netbox_id) WHERE netbox_id IS NOT NULL;
CREATE UNIQUE INDEX sites_netbox ON sites (netbox_id) WHERE netbox_id IS NOT NULL;
CREATE UNIQUE INDEX platforms_netbox ON platforms (netbox_id) WHERE netbox_id IS NOT NULL;
CREATE UNIQUE INDEX vlans_netbox ON vlans (netbox_id) WHERE netbox_id IS NOT NULL;
CREATE UNIQUE INDEX devices_netbox ON devices (netbox_id) WHERE netbox_id IS NOT NULL;
CREATE UNIQUE INDEX interfaces_netbox ON interfaces (netbox_id) WHERE netbox_id IS NOT NULL;
CREATE UNIQUE INDEX ip_addresses_netbox ON ip_addresses (netbox_id) WHERE netbox_id IS NOT NULL;

-- One row a sync: what it fetched from (the NetBox URL and device filter), how far it
-- got (queue: the URLs still to fetch, the first possibly a next page), and how it
-- ended. A process claims a run while it works on it (owner, heartbeat).
CREATE TABLE netbox_sync_runs (
    id        INTEGER PRIMARY KEY,
    source    TEXT    NOT NULL,
    state     TEXT    NOT NULL DEFAULT 'fetching', -- fetching, done, failed
    phase     TEXT    NOT NULL DEFAULT '',
    queue     TEXT    NOT NULL DEFAULT '[]',
    pages     INTEGER NOT NULL DEFAULT 0,
    owner     TEXT    NOT NULL DEFAULT '',
    heartbeat TEXT    NOT NULL DEFAULT '',
    started   TEXT    NOT NULL,
    finished  TEXT,
    error     TEXT    NOT NULL DEFAULT '',
    summary   TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX netbox_sync_runs_state ON netbox_sync_runs (state, id);

-- The objects a run fetched, as NetBox served them, until the run applies them.
CREATE TABLE netbox_sync_objects (
    run_id    INTEGER NOT NULL REFERENCES netbox_sync_runs (id) ON DELETE CASCADE,
    kind      TEXT    NOT NULL,
    netbox_id INTEGER NOT NULL,
    body      TEXT    NOT NULL,
    PRIMARY KEY (run_id, kind, netbox_id)
) WITHOUT ROWID;
