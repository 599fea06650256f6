-- 0005_inventory_tags: every inventory object carries tags and custom fields, as NetBox's
-- do (the API showed them empty on sites, platforms, interfaces, VLANs and IP addresses
-- and dropped what a client wrote).

ALTER TABLE sites ADD COLUMN custom_fields TEXT NOT NULL DEFAULT '{}';
ALTER TABLE platforms ADD COLUMN custom_fields TEXT NOT NULL DEFAULT '{}';
ALTER TABLE interfaces ADD COLUMN custom_fields TEXT NOT NULL DEFAULT '{}';
ALTER TABLE vlans ADD COLUMN custom_fields TEXT NOT NULL DEFAULT '{}';
ALTER TABLE ip_addresses ADD COLUMN custom_fields TEXT NOT NULL DEFAULT '{}';

CREATE TABLE site_tags (
    site_id INTEGER NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    tag_id  INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (site_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX site_tags_tag ON site_tags (tag_id);

CREATE TABLE platform_tags (
    platform_id INTEGER NOT NULL REFERENCES platforms (id) ON DELETE CASCADE,
    tag_id      INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (platform_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX platform_tags_tag ON platform_tags (tag_id);

CREATE TABLE interface_tags (
    interface_id INTEGER NOT NULL REFERENCES interfaces (id) ON DELETE CASCADE,
    tag_id       INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (interface_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX interface_tags_tag ON interface_tags (tag_id);

CREATE TABLE vlan_tags (
    vlan_id INTEGER NOT NULL REFERENCES vlans (id) ON DELETE CASCADE,
    tag_id  INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (vlan_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX vlan_tags_tag ON vlan_tags (tag_id);

CREATE TABLE ip_address_tags (
    ip_address_id INTEGER NOT NULL REFERENCES ip_addresses (id) ON DELETE CASCADE,
    tag_id        INTEGER NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (ip_address_id, tag_id)
) WITHOUT ROWID;
CREATE INDEX ip_address_tags_tag ON ip_address_tags (tag_id);
