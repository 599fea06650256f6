-- A credential set's version changes with every change that matters to a device login
-- or to who may use the set: its secrets, login name, enable mode, activation and token.
-- Execution keeps SSH sessions open per set and version, so a session opened with the
-- set as it was is never used once the set has changed, whichever path changed it (the
-- web interface, a platform delete that deactivates the set).
ALTER TABLE credential_sets ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

CREATE TRIGGER credential_sets_au_version
AFTER UPDATE OF username, password_enc, enable_secret_enc, private_key_enc, enable_mode, is_active, token_hash
ON credential_sets BEGIN
    UPDATE credential_sets SET version = version + 1 WHERE id = NEW.id;
END;
