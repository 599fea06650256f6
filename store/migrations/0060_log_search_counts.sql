-- 0060_log_search_counts: exact counts of ?q= over many logs without reading them all.
--
-- Counting a search that matches most logs (a word every output holds) reads one id per
-- match. Such a count is kept once taken: the number of matching logs with an id up to
-- upto, for every log (device_id -1) or per device (its counter key, 0 for the logs of
-- deleted devices; the row with device_id -2 says the per-device counts were taken and
-- holds their sum, so a device without a row has none). A later count reads only the
-- logs after upto, whose ids are all greater: ids only grow while no log is deleted.
--
-- A log deleted, or changed in what q is matched against or in its device, at or before
-- upto could change any count: every count covering it goes, and epoch moves, so that a
-- count taken in a snapshot before that change is not stored after it.

CREATE TABLE command_log_search_counts (
    q         TEXT    NOT NULL,
    device_id INTEGER NOT NULL,
    upto      INTEGER NOT NULL,
    total     INTEGER NOT NULL,
    taken     INTEGER NOT NULL,
    PRIMARY KEY (q, device_id)
) WITHOUT ROWID;

CREATE INDEX command_log_search_counts_upto ON command_log_search_counts (upto);

CREATE TABLE command_log_search_epoch (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    epoch INTEGER NOT NULL
);

INSERT INTO command_log_search_epoch (id, epoch) VALUES (1, 0);

CREATE TRIGGER command_logs_search_ad AFTER DELETE ON command_logs BEGIN
    DELETE FROM command_log_search_counts WHERE upto >= OLD.id;
    UPDATE command_log_search_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

CREATE TRIGGER command_logs_search_au AFTER UPDATE OF id, device_id, command_name, device_name, username, output, error_message
ON command_logs BEGIN
    DELETE FROM command_log_search_counts WHERE upto >= min(OLD.id, NEW.id);
    UPDATE command_log_search_epoch SET epoch = epoch + 1 WHERE id = 1;
END;
