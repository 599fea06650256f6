-- Deleting a platform removes it from credential sets. A set restricted to that platform
-- alone would be left with no platforms, which means "every platform": widening access
-- nobody asked for. Such sets are deactivated instead, for their owner to review.
CREATE TRIGGER platforms_bd_credential_sets BEFORE DELETE ON platforms BEGIN
    UPDATE credential_sets SET is_active = 0
    WHERE id IN (SELECT credential_set_id FROM credential_set_platforms WHERE platform_id = OLD.id)
      AND id NOT IN (SELECT credential_set_id FROM credential_set_platforms WHERE platform_id <> OLD.id);
END;
