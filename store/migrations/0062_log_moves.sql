-- 0062_log_moves: the device of each log held in memory (logdevices.go) stays right.
--
-- The server holds every log's device by id, and reads only the logs after the newest
-- it holds. That is right while a log's id and device never change and a new log's id
-- is above every other: epoch moves whenever that is not so. A log's id or device
-- changed (a device deleted sets its logs' device to NULL); a log inserted below the
-- newest; the newest deleted, whose id SQLite may give to the next log. Deleting older
-- logs (a prune) moves nothing: their ids come back in no search.

CREATE TABLE command_log_moves (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    epoch INTEGER NOT NULL
);

INSERT INTO command_log_moves (id, epoch) VALUES (1, 0);

CREATE TRIGGER command_logs_moves_au AFTER UPDATE OF id, device_id ON command_logs
WHEN OLD.id IS NOT NEW.id OR OLD.device_id IS NOT NEW.device_id BEGIN
    UPDATE command_log_moves SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER command_logs_moves_ai AFTER INSERT ON command_logs
WHEN EXISTS (SELECT 1 FROM command_logs WHERE id > NEW.id) BEGIN
    UPDATE command_log_moves SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER command_logs_moves_ad AFTER DELETE ON command_logs
WHEN NOT EXISTS (SELECT 1 FROM command_logs WHERE id > OLD.id) BEGIN
    UPDATE command_log_moves SET epoch = epoch + 1 WHERE id = 1;
END;
