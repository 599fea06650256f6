-- At a hub, the site each copied command and platform came from (issue 40, item 4).
-- A command is one site's own copy: its site is a column, set by the hub's ingest
-- (hub/apply.go), NULL for the hub's own commands and at an edge. A platform is shared
-- by the sites that have one of its slug: its sites are read from hub_objects through
-- a view, which the ingest keeps true by keeping hub_objects.
ALTER TABLE commands ADD COLUMN site_id INTEGER REFERENCES sites (id) ON DELETE SET NULL;
CREATE INDEX commands_site ON commands (site_id);
UPDATE commands SET site_id = (
    SELECT s.site_id FROM hub_objects o JOIN hub_sites s ON s.id = o.hub_site_id
    WHERE o.kind = 'command' AND o.hub_id = commands.id LIMIT 1)
WHERE EXISTS (SELECT 1 FROM hub_objects o WHERE o.kind = 'command' AND o.hub_id = commands.id);

CREATE VIEW platform_sites AS
    SELECT DISTINCT o.hub_id AS platform_id, s.site_id AS site_id
    FROM hub_objects o JOIN hub_sites s ON s.id = o.hub_site_id
    WHERE o.kind = 'platform';
