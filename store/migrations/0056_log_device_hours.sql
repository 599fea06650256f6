-- 0056_log_device_hours: how many logs (and how many successful) each device has in
-- each hour of UTC time, kept by triggers.
--
-- hour is the first 13 characters of created ("2026-11-19T14"): every log of an hour
-- sorts after every log of the hours before it. The last 24 hours of statistics are
-- whole hours from here plus the one partial hour read through an index, and a page
-- deep in a list ordered by created finds the hour it starts in by summing hours from
-- one end, then skips only inside that hour. device_id 0 stands for the logs whose
-- device was deleted, as in the other per-device counters.

CREATE TABLE command_log_device_hours (
    hour       TEXT    NOT NULL,
    device_id  INTEGER NOT NULL,
    total      INTEGER NOT NULL DEFAULT 0,
    successful INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (hour, device_id)
) WITHOUT ROWID;

CREATE TRIGGER command_logs_hours_ai AFTER INSERT ON command_logs BEGIN
    INSERT INTO command_log_device_hours (hour, device_id, total, successful)
        VALUES (substr(NEW.created, 1, 13), coalesce(NEW.device_id, 0), 1, NEW.success)
        ON CONFLICT (hour, device_id) DO UPDATE SET total = total + 1, successful = successful + excluded.successful;
END;

CREATE TRIGGER command_logs_hours_ad AFTER DELETE ON command_logs BEGIN
    UPDATE command_log_device_hours SET total = total - 1, successful = successful - OLD.success
        WHERE hour = substr(OLD.created, 1, 13) AND device_id = coalesce(OLD.device_id, 0);
    DELETE FROM command_log_device_hours
        WHERE hour = substr(OLD.created, 1, 13) AND device_id = coalesce(OLD.device_id, 0) AND total <= 0;
END;

-- Deleting a device sets its logs' device_id to NULL: their hours move to device 0.
CREATE TRIGGER command_logs_hours_au AFTER UPDATE OF device_id, success, created ON command_logs BEGIN
    UPDATE command_log_device_hours SET total = total - 1, successful = successful - OLD.success
        WHERE hour = substr(OLD.created, 1, 13) AND device_id = coalesce(OLD.device_id, 0);
    DELETE FROM command_log_device_hours
        WHERE hour = substr(OLD.created, 1, 13) AND device_id = coalesce(OLD.device_id, 0) AND total <= 0;
    INSERT INTO command_log_device_hours (hour, device_id, total, successful)
        VALUES (substr(NEW.created, 1, 13), coalesce(NEW.device_id, 0), 1, NEW.success)
        ON CONFLICT (hour, device_id) DO UPDATE SET total = total + 1, successful = successful + excluded.successful;
END;

-- The (device_id, success, created) index holds all three columns: the existing logs are
-- counted from it without reading the table.
INSERT INTO command_log_device_hours (hour, device_id, total, successful)
    SELECT substr(created, 1, 13), coalesce(device_id, 0), count(*), sum(success)
    FROM command_logs INDEXED BY command_logs_device_success GROUP BY 1, 2;
