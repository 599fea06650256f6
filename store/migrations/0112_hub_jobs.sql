-- Commands flowing down (docs/HUB-PROTOCOL.md, "Jobs"): a hub queues an execution for a
-- site (hub_jobs), the site's FieldKit takes it by long-polling, runs it through its own
-- checks and notes its answer (hub_edge_jobs), which reaches the hub through the outbox.
--
-- On a hub: a job is queued until a poll takes it (state sent, with a lease); one whose
-- lease ends unanswered is sent again (the site recognises it and never runs it twice);
-- one not taken by expires is expired. The lease is a column, not a row lock, so that it
-- works alike on SQLite and PostgreSQL and across hub processes.
CREATE TABLE hub_jobs (
    id              INTEGER PRIMARY KEY,
    hub_site_id     INTEGER NOT NULL REFERENCES hub_sites (id) ON DELETE CASCADE,
    -- the hub's command, device and user; the ids only, as a log keeps them (no
    -- foreign key: a delete of one of them would search this table)
    command_id      INTEGER NOT NULL,
    device_id       INTEGER NOT NULL,
    edge_command_id INTEGER NOT NULL,
    edge_device_id  INTEGER NOT NULL,
    variables       TEXT    NOT NULL DEFAULT '{}',
    timeout         INTEGER NOT NULL,
    user_id         INTEGER NOT NULL,
    username        TEXT    NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'queued', -- queued, sent, done, expired
    lease_until     TEXT,
    status          INTEGER,
    answer          TEXT,
    log_id          INTEGER,
    created         TEXT    NOT NULL,
    expires         TEXT    NOT NULL,
    finished        TEXT
);
CREATE INDEX hub_jobs_site ON hub_jobs (hub_site_id, state, id);

-- On an edge: the jobs taken, by the hub's id (a job sent again is recognised); status
-- is 0 while it runs, then the HTTP status of its answer, which the outbox sends.
CREATE TABLE hub_edge_jobs (
    id       INTEGER PRIMARY KEY,
    hub_job  INTEGER NOT NULL UNIQUE,
    status   INTEGER NOT NULL DEFAULT 0,
    answer   TEXT    NOT NULL DEFAULT '',
    log_id   INTEGER,
    created  TEXT    NOT NULL
);

CREATE TRIGGER hub_edge_jobs_hub_au AFTER UPDATE OF status ON hub_edge_jobs
WHEN NEW.status <> 0 AND (SELECT enabled FROM hub_edge WHERE id = 1)
BEGIN
    INSERT INTO hub_outbox (kind, op, ref, created) VALUES ('job', 'upsert', NEW.id, NEW.created);
END;

-- What a hub adds to the times of a site's logs: the skew it measured once the site's
-- clock was off by more than 5 minutes, kept while later pushes measure the same within
-- a minute, so that the logs of consecutive pushes keep their order.
ALTER TABLE hub_sites ADD COLUMN correction_ms INTEGER NOT NULL DEFAULT 0;
