-- 0016_log_audit: a command log is an audit record. It keeps exactly what was sent to
-- the device (after substitution), the values the variables took, the credential set
-- used (its id and name, kept after the set is deleted), where the execution came from
-- (api, bulk or ui) and the client's address. Rows written before carry NULL or ''.
--
-- ?q= searches logs through two full-text indexes kept by triggers: the names (command,
-- device, user) by trigram, so that a substring matches as LIKE '%x%' did but through
-- an index; output and error message by word. Existing rows are indexed here.

ALTER TABLE command_logs ADD COLUMN sent_command TEXT NOT NULL DEFAULT '';
ALTER TABLE command_logs ADD COLUMN variables TEXT;
ALTER TABLE command_logs ADD COLUMN credential_set_id INTEGER;
ALTER TABLE command_logs ADD COLUMN credential_set_name TEXT NOT NULL DEFAULT '';
ALTER TABLE command_logs ADD COLUMN source TEXT;
ALTER TABLE command_logs ADD COLUMN client_address TEXT NOT NULL DEFAULT '';

CREATE VIRTUAL TABLE command_logs_names USING fts5(
    command_name, device_name, username,
    content = 'command_logs', content_rowid = 'id', tokenize = 'trigram');

CREATE VIRTUAL TABLE command_logs_text USING fts5(
    output, error_message,
    content = 'command_logs', content_rowid = 'id', tokenize = 'unicode61');

CREATE TRIGGER command_logs_fts_ai AFTER INSERT ON command_logs BEGIN
    INSERT INTO command_logs_names (rowid, command_name, device_name, username)
        VALUES (NEW.id, NEW.command_name, NEW.device_name, NEW.username);
    INSERT INTO command_logs_text (rowid, output, error_message)
        VALUES (NEW.id, NEW.output, NEW.error_message);
END;

CREATE TRIGGER command_logs_fts_ad AFTER DELETE ON command_logs BEGIN
    INSERT INTO command_logs_names (command_logs_names, rowid, command_name, device_name, username)
        VALUES ('delete', OLD.id, OLD.command_name, OLD.device_name, OLD.username);
    INSERT INTO command_logs_text (command_logs_text, rowid, output, error_message)
        VALUES ('delete', OLD.id, OLD.output, OLD.error_message);
END;

-- Logs are never updated by the API; this keeps the indexes right if one ever is.
CREATE TRIGGER command_logs_fts_au AFTER UPDATE OF command_name, device_name, username, output, error_message
ON command_logs BEGIN
    INSERT INTO command_logs_names (command_logs_names, rowid, command_name, device_name, username)
        VALUES ('delete', OLD.id, OLD.command_name, OLD.device_name, OLD.username);
    INSERT INTO command_logs_text (command_logs_text, rowid, output, error_message)
        VALUES ('delete', OLD.id, OLD.output, OLD.error_message);
    INSERT INTO command_logs_names (rowid, command_name, device_name, username)
        VALUES (NEW.id, NEW.command_name, NEW.device_name, NEW.username);
    INSERT INTO command_logs_text (rowid, output, error_message)
        VALUES (NEW.id, NEW.output, NEW.error_message);
END;

INSERT INTO command_logs_names (command_logs_names) VALUES ('rebuild');
INSERT INTO command_logs_text (command_logs_text) VALUES ('rebuild');

CREATE INDEX command_logs_source ON command_logs (source, created);
