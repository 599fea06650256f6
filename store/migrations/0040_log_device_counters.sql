-- 0040_log_device_counters: statistics and log counts per device, kept by triggers.
--
-- Most constrained viewers see the logs of a set of devices (a site, a platform, a tag,
-- a list of devices). Summing these counters over that set answers statistics/ and a
-- list's count without reading the viewer's logs. device_id 0 stands for the logs whose
-- device was deleted (their device_id is NULL).

CREATE TABLE command_log_device_totals (
    device_id  INTEGER PRIMARY KEY,
    total      INTEGER NOT NULL DEFAULT 0,
    successful INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE command_log_device_counts (
    device_id    INTEGER NOT NULL,
    command_name TEXT    NOT NULL,
    total        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (device_id, command_name)
) WITHOUT ROWID;

CREATE TABLE command_log_device_errors (
    device_id INTEGER NOT NULL,
    error     TEXT    NOT NULL,
    total     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (device_id, error)
) WITHOUT ROWID;

CREATE TRIGGER command_logs_device_ai AFTER INSERT ON command_logs BEGIN
    INSERT INTO command_log_device_totals (device_id, total, successful)
        VALUES (coalesce(NEW.device_id, 0), 1, NEW.success)
        ON CONFLICT (device_id) DO UPDATE SET total = total + 1, successful = successful + excluded.successful;
    INSERT INTO command_log_device_counts (device_id, command_name, total)
        VALUES (coalesce(NEW.device_id, 0), NEW.command_name, 1)
        ON CONFLICT (device_id, command_name) DO UPDATE SET total = total + 1;
    INSERT INTO command_log_device_errors (device_id, error, total)
        SELECT coalesce(NEW.device_id, 0), substr(NEW.error_message, 1, 100), 1 WHERE NEW.success = 0
        ON CONFLICT (device_id, error) DO UPDATE SET total = total + 1;
END;

CREATE TRIGGER command_logs_device_ad AFTER DELETE ON command_logs BEGIN
    UPDATE command_log_device_totals SET total = total - 1, successful = successful - OLD.success
        WHERE device_id = coalesce(OLD.device_id, 0);
    DELETE FROM command_log_device_totals WHERE device_id = coalesce(OLD.device_id, 0) AND total <= 0;
    UPDATE command_log_device_counts SET total = total - 1
        WHERE device_id = coalesce(OLD.device_id, 0) AND command_name = OLD.command_name;
    DELETE FROM command_log_device_counts
        WHERE device_id = coalesce(OLD.device_id, 0) AND command_name = OLD.command_name AND total <= 0;
    UPDATE command_log_device_errors SET total = total - 1
        WHERE OLD.success = 0 AND device_id = coalesce(OLD.device_id, 0) AND error = substr(OLD.error_message, 1, 100);
    DELETE FROM command_log_device_errors
        WHERE OLD.success = 0 AND device_id = coalesce(OLD.device_id, 0) AND error = substr(OLD.error_message, 1, 100)
          AND total <= 0;
END;

-- Deleting a device sets its logs' device_id to NULL: their counts move to device 0.
CREATE TRIGGER command_logs_device_au AFTER UPDATE OF device_id, command_name, success, error_message
ON command_logs BEGIN
    UPDATE command_log_device_totals SET total = total - 1, successful = successful - OLD.success
        WHERE device_id = coalesce(OLD.device_id, 0);
    DELETE FROM command_log_device_totals WHERE device_id = coalesce(OLD.device_id, 0) AND total <= 0;
    UPDATE command_log_device_counts SET total = total - 1
        WHERE device_id = coalesce(OLD.device_id, 0) AND command_name = OLD.command_name;
    DELETE FROM command_log_device_counts
        WHERE device_id = coalesce(OLD.device_id, 0) AND command_name = OLD.command_name AND total <= 0;
    UPDATE command_log_device_errors SET total = total - 1
        WHERE OLD.success = 0 AND device_id = coalesce(OLD.device_id, 0) AND error = substr(OLD.error_message, 1, 100);
    DELETE FROM command_log_device_errors
        WHERE OLD.success = 0 AND device_id = coalesce(OLD.device_id, 0) AND error = substr(OLD.error_message, 1, 100)
          AND total <= 0;
    INSERT INTO command_log_device_totals (device_id, total, successful)
        VALUES (coalesce(NEW.device_id, 0), 1, NEW.success)
        ON CONFLICT (device_id) DO UPDATE SET total = total + 1, successful = successful + excluded.successful;
    INSERT INTO command_log_device_counts (device_id, command_name, total)
        VALUES (coalesce(NEW.device_id, 0), NEW.command_name, 1)
        ON CONFLICT (device_id, command_name) DO UPDATE SET total = total + 1;
    INSERT INTO command_log_device_errors (device_id, error, total)
        SELECT coalesce(NEW.device_id, 0), substr(NEW.error_message, 1, 100), 1 WHERE NEW.success = 0
        ON CONFLICT (device_id, error) DO UPDATE SET total = total + 1;
END;

INSERT INTO command_log_device_totals (device_id, total, successful)
    SELECT coalesce(device_id, 0), count(*), sum(success) FROM command_logs GROUP BY 1;
INSERT INTO command_log_device_counts (device_id, command_name, total)
    SELECT coalesce(device_id, 0), command_name, count(*) FROM command_logs GROUP BY 1, 2;
INSERT INTO command_log_device_errors (device_id, error, total)
    SELECT coalesce(device_id, 0), substr(error_message, 1, 100), count(*) FROM command_logs WHERE success = 0 GROUP BY 1, 2;
