-- 0002_inventory: an IP sort key (string order of "10.0.0.10/24" is not address order)
-- and the assignment type cleared when an address loses its interface.

ALTER TABLE ip_addresses ADD COLUMN address_key TEXT NOT NULL DEFAULT '';
CREATE INDEX ip_addresses_key ON ip_addresses (address_key);

-- Deleting an interface sets assigned_object_id to NULL through the foreign key; the
-- type must follow, or the row would claim to be assigned to "dcim.interface" NULL.
CREATE TRIGGER ip_addresses_unassigned AFTER UPDATE OF assigned_object_id ON ip_addresses
WHEN NEW.assigned_object_id IS NULL AND NEW.assigned_object_type IS NOT NULL BEGIN
    UPDATE ip_addresses SET assigned_object_type = NULL WHERE id = NEW.id;
END;
