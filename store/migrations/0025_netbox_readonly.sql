-- 0025_netbox_readonly: object types FieldKit does not manage but NetBox clients read
-- (Ansible's nb_inventory lists them all before it groups devices). They are served
-- read-only and stay empty; the tables exist so that lists, filters and the schema
-- work as for any declared object type.

CREATE TABLE regions (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    slug         TEXT NOT NULL UNIQUE,
    parent_id    INTEGER REFERENCES regions (id) ON DELETE CASCADE,
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE site_groups (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    slug         TEXT NOT NULL UNIQUE,
    parent_id    INTEGER REFERENCES site_groups (id) ON DELETE CASCADE,
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE locations (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    slug         TEXT NOT NULL,
    site_id      INTEGER NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    parent_id    INTEGER REFERENCES locations (id) ON DELETE CASCADE,
    status       TEXT NOT NULL DEFAULT 'active',
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE racks (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    site_id      INTEGER NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    location_id  INTEGER REFERENCES locations (id) ON DELETE SET NULL,
    status       TEXT NOT NULL DEFAULT 'active',
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE device_roles (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    slug         TEXT NOT NULL UNIQUE,
    color        TEXT NOT NULL DEFAULT '9e9e9e',
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE manufacturers (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    slug         TEXT NOT NULL UNIQUE,
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE device_types (
    id              INTEGER PRIMARY KEY,
    manufacturer_id INTEGER NOT NULL REFERENCES manufacturers (id) ON DELETE CASCADE,
    model           TEXT NOT NULL,
    slug            TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    created         TEXT NOT NULL,
    last_updated    TEXT NOT NULL
);

CREATE TABLE tenants (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    slug         TEXT NOT NULL UNIQUE,
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE clusters (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    status       TEXT NOT NULL DEFAULT 'active',
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);

CREATE TABLE virtual_machines (
    id             INTEGER PRIMARY KEY,
    name           TEXT NOT NULL,
    status         TEXT NOT NULL DEFAULT 'active',
    site_id        INTEGER REFERENCES sites (id) ON DELETE SET NULL,
    cluster_id     INTEGER REFERENCES clusters (id) ON DELETE SET NULL,
    role_id        INTEGER REFERENCES device_roles (id) ON DELETE SET NULL,
    tenant_id      INTEGER REFERENCES tenants (id) ON DELETE SET NULL,
    platform_id    INTEGER REFERENCES platforms (id) ON DELETE SET NULL,
    primary_ip4_id INTEGER REFERENCES ip_addresses (id) ON DELETE SET NULL,
    primary_ip6_id INTEGER REFERENCES ip_addresses (id) ON DELETE SET NULL,
    description    TEXT NOT NULL DEFAULT '',
    custom_fields  TEXT NOT NULL DEFAULT '{}',
    created        TEXT NOT NULL,
    last_updated   TEXT NOT NULL
);

CREATE TABLE vm_interfaces (
    id                 INTEGER PRIMARY KEY,
    virtual_machine_id INTEGER NOT NULL REFERENCES virtual_machines (id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    enabled            INTEGER NOT NULL DEFAULT 1,
    description        TEXT NOT NULL DEFAULT '',
    created            TEXT NOT NULL,
    last_updated       TEXT NOT NULL
);

CREATE TABLE services (
    id                 INTEGER PRIMARY KEY,
    device_id          INTEGER REFERENCES devices (id) ON DELETE CASCADE,
    virtual_machine_id INTEGER REFERENCES virtual_machines (id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    protocol           TEXT NOT NULL DEFAULT 'tcp',
    ports              TEXT NOT NULL DEFAULT '[]',
    description        TEXT NOT NULL DEFAULT '',
    created            TEXT NOT NULL,
    last_updated       TEXT NOT NULL
);

CREATE TABLE prefixes (
    id           INTEGER PRIMARY KEY,
    prefix       TEXT NOT NULL,
    site_id      INTEGER REFERENCES sites (id) ON DELETE SET NULL,
    status       TEXT NOT NULL DEFAULT 'active',
    description  TEXT NOT NULL DEFAULT '',
    created      TEXT NOT NULL,
    last_updated TEXT NOT NULL
);
CREATE INDEX prefixes_site ON prefixes (site_id);
