-- 0065_log_created_tail: the newest logs, written in created order, are known as such.
--
-- tail is the lowest id from which every log was written after all logs below its id
-- and is newer than each of them (created, then id): the logs from tail up are, newest
-- first, the logs of the highest ids in id order, ahead of every other log. A server
-- writes its logs as they run, so that is nearly all of them; a page of a search then
-- reads the word index's matches from the highest id down (logsearch.go) rather than
-- walking created. A log written out of that order (an import, a clock set back), or
-- one whose created or id changes, moves tail past every id there is. Deleting logs
-- leaves it right.

CREATE TABLE command_log_order (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    tail INTEGER NOT NULL
);

-- A log is out of order when a log of a lower id is newer: walking created from the
-- newest, when its id is above the least id walked before it.
INSERT INTO command_log_order (id, tail)
SELECT 1, coalesce(max(id), 0) + 1 FROM (
    SELECT id, id > min(id) OVER (ORDER BY created DESC, id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS late
    FROM command_logs INDEXED BY command_logs_created)
WHERE late;

CREATE TRIGGER command_logs_order_ai AFTER INSERT ON command_logs
WHEN EXISTS (SELECT 1 FROM command_logs WHERE id > NEW.id)
    OR EXISTS (SELECT 1 FROM command_logs INDEXED BY command_logs_created WHERE created > NEW.created) BEGIN
    UPDATE command_log_order SET tail = max(tail, (SELECT max(id) FROM command_logs) + 1) WHERE id = 1;
END;

CREATE TRIGGER command_logs_order_au AFTER UPDATE OF id, created ON command_logs
WHEN OLD.id IS NOT NEW.id OR OLD.created IS NOT NEW.created BEGIN
    UPDATE command_log_order SET tail = max(tail, (SELECT max(id) FROM command_logs) + 1) WHERE id = 1;
END;
