-- 0057_log_name_search: ?q= on the names of logs through the few distinct names.
--
-- A log matches q's names part when q (by trigram) is in its command, device or user
-- name. Every name of a kind often shares most of its trigrams ("command 001",
-- "command 002"…), so matching q against the names of every log reads a million
-- entries per trigram. The distinct names are a few hundred: q is matched against
-- them (the same trigram tokenizer, so the same matches), then the logs are found by
-- name through an index. kind is 0 for command_name, 1 for device_name, 2 for
-- username; total counts the logs with that name, and a name leaves when it reaches 0.

CREATE TABLE command_log_names (
    id    INTEGER PRIMARY KEY,
    kind  INTEGER NOT NULL,
    name  TEXT    NOT NULL,
    total INTEGER NOT NULL DEFAULT 0,
    UNIQUE (kind, name)
);

CREATE VIRTUAL TABLE command_log_names_fts USING fts5(name, content = '', tokenize = 'trigram');

CREATE TRIGGER command_log_names_ai AFTER INSERT ON command_log_names BEGIN
    INSERT INTO command_log_names_fts (rowid, name) VALUES (NEW.id, NEW.name);
END;

CREATE TRIGGER command_log_names_ad AFTER DELETE ON command_log_names BEGIN
    INSERT INTO command_log_names_fts (command_log_names_fts, rowid, name) VALUES ('delete', OLD.id, OLD.name);
END;

CREATE TRIGGER command_logs_names_ai AFTER INSERT ON command_logs BEGIN
    INSERT INTO command_log_names (kind, name, total) VALUES (0, NEW.command_name, 1), (1, NEW.device_name, 1), (2, NEW.username, 1)
        ON CONFLICT (kind, name) DO UPDATE SET total = total + 1;
END;

CREATE TRIGGER command_logs_names_ad AFTER DELETE ON command_logs BEGIN
    UPDATE command_log_names SET total = total - 1
        WHERE (kind = 0 AND name = OLD.command_name) OR (kind = 1 AND name = OLD.device_name) OR (kind = 2 AND name = OLD.username);
    DELETE FROM command_log_names WHERE total <= 0
        AND ((kind = 0 AND name = OLD.command_name) OR (kind = 1 AND name = OLD.device_name) OR (kind = 2 AND name = OLD.username));
END;

-- Logs are never updated by the API; this keeps the names right if one ever is.
CREATE TRIGGER command_logs_names_au AFTER UPDATE OF command_name, device_name, username ON command_logs BEGIN
    UPDATE command_log_names SET total = total - 1
        WHERE (kind = 0 AND name = OLD.command_name) OR (kind = 1 AND name = OLD.device_name) OR (kind = 2 AND name = OLD.username);
    DELETE FROM command_log_names WHERE total <= 0
        AND ((kind = 0 AND name = OLD.command_name) OR (kind = 1 AND name = OLD.device_name) OR (kind = 2 AND name = OLD.username));
    INSERT INTO command_log_names (kind, name, total) VALUES (0, NEW.command_name, 1), (1, NEW.device_name, 1), (2, NEW.username, 1)
        ON CONFLICT (kind, name) DO UPDATE SET total = total + 1;
END;

-- The logs of the matching names, newest first (username has its index already).
CREATE INDEX command_logs_command_name ON command_logs (command_name, created);
CREATE INDEX command_logs_device_name ON command_logs (device_name, created);

INSERT INTO command_log_names (kind, name, total)
    SELECT 0, command_name, count(*) FROM command_logs INDEXED BY command_logs_command_name GROUP BY command_name;
INSERT INTO command_log_names (kind, name, total)
    SELECT 1, device_name, count(*) FROM command_logs INDEXED BY command_logs_device_name GROUP BY device_name;
INSERT INTO command_log_names (kind, name, total)
    SELECT 2, username, count(*) FROM command_logs INDEXED BY command_logs_username GROUP BY username;
