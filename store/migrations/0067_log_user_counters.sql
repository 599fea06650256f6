-- 0067_log_user_counters: how many logs each device has per user, user name and outcome,
-- kept by triggers.
--
-- A list of logs filtered by user, user name or success, alone or within a viewer's
-- devices, counted its logs one by one: for a viewer of a fifth of a million logs,
-- half a second for every page of one user's logs. A condition that reads nothing but
-- a log's device_id, user_id, username and success is the same condition on these rows,
-- which carry those columns (NULL for a deleted device or user, as a log's are), and the
-- sum of their totals is the count (store.DB.countByUser).

CREATE TABLE command_log_user_counts (
    device_key INTEGER NOT NULL, -- coalesce(device_id, 0)
    user_key   INTEGER NOT NULL, -- coalesce(user_id, 0)
    username   TEXT    NOT NULL,
    success    INTEGER NOT NULL,
    total      INTEGER NOT NULL DEFAULT 0,
    device_id  INTEGER AS (nullif(device_key, 0)),
    user_id    INTEGER AS (nullif(user_key, 0)),
    PRIMARY KEY (device_key, user_key, username, success)
) WITHOUT ROWID;

CREATE TRIGGER command_logs_users_ai AFTER INSERT ON command_logs BEGIN
    INSERT INTO command_log_user_counts (device_key, user_key, username, success, total)
        VALUES (coalesce(NEW.device_id, 0), coalesce(NEW.user_id, 0), NEW.username, NEW.success, 1)
        ON CONFLICT (device_key, user_key, username, success) DO UPDATE SET total = total + 1;
END;

CREATE TRIGGER command_logs_users_ad AFTER DELETE ON command_logs BEGIN
    UPDATE command_log_user_counts SET total = total - 1
        WHERE device_key = coalesce(OLD.device_id, 0) AND user_key = coalesce(OLD.user_id, 0)
          AND username = OLD.username AND success = OLD.success;
    DELETE FROM command_log_user_counts
        WHERE device_key = coalesce(OLD.device_id, 0) AND user_key = coalesce(OLD.user_id, 0)
          AND username = OLD.username AND success = OLD.success AND total <= 0;
END;

-- Deleting a device or a user sets its logs' reference to NULL: their counts move to key 0.
CREATE TRIGGER command_logs_users_au AFTER UPDATE OF device_id, user_id, username, success ON command_logs BEGIN
    UPDATE command_log_user_counts SET total = total - 1
        WHERE device_key = coalesce(OLD.device_id, 0) AND user_key = coalesce(OLD.user_id, 0)
          AND username = OLD.username AND success = OLD.success;
    DELETE FROM command_log_user_counts
        WHERE device_key = coalesce(OLD.device_id, 0) AND user_key = coalesce(OLD.user_id, 0)
          AND username = OLD.username AND success = OLD.success AND total <= 0;
    INSERT INTO command_log_user_counts (device_key, user_key, username, success, total)
        VALUES (coalesce(NEW.device_id, 0), coalesce(NEW.user_id, 0), NEW.username, NEW.success, 1)
        ON CONFLICT (device_key, user_key, username, success) DO UPDATE SET total = total + 1;
END;

INSERT INTO command_log_user_counts (device_key, user_key, username, success, total)
    SELECT coalesce(device_id, 0), coalesce(user_id, 0), username, success, count(*)
    FROM command_logs GROUP BY 1, 2, 3, 4;
