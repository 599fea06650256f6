-- 0058_log_insert: every execution writes its log before it is answered, so what an
-- insert maintains is paid on every execute.
--
-- The per-log trigram index of names (command, device, user) is no longer read: ?q=
-- matches the few distinct names (command_log_names_fts) and finds their logs through
-- the (name, created) indexes. Keeping it cost each insert an entry per three-letter
-- run of each name, and the merges of its segments. It goes, and the triggers that kept it keep only the
-- word index of output and error messages.

DROP TRIGGER command_logs_fts_ai;
DROP TRIGGER command_logs_fts_ad;
DROP TRIGGER command_logs_fts_au;
DROP TABLE command_logs_names;

CREATE TRIGGER command_logs_fts_ai AFTER INSERT ON command_logs BEGIN
    INSERT INTO command_logs_text (rowid, output, error_message)
        VALUES (NEW.id, NEW.output, NEW.error_message);
END;

CREATE TRIGGER command_logs_fts_ad AFTER DELETE ON command_logs BEGIN
    INSERT INTO command_logs_text (command_logs_text, rowid, output, error_message)
        VALUES ('delete', OLD.id, OLD.output, OLD.error_message);
END;

-- Logs are never updated by the API; this keeps the index right if one ever is.
CREATE TRIGGER command_logs_fts_au AFTER UPDATE OF output, error_message ON command_logs BEGIN
    INSERT INTO command_logs_text (command_logs_text, rowid, output, error_message)
        VALUES ('delete', OLD.id, OLD.output, OLD.error_message);
    INSERT INTO command_logs_text (rowid, output, error_message)
        VALUES (NEW.id, NEW.output, NEW.error_message);
END;
