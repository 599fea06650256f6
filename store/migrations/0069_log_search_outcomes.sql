-- 0069_log_search_outcomes: a search's kept per-device counts also count its failed
-- matches, and the devices held in memory also hold each log's outcome.
--
-- A search with an outcome filter (q=Invalid&success=false) was counted over every
-- match's row: 1-4 s at five million logs. Its count is now a sum over the (device,
-- outcome) pairs the filter keeps, from the kept counts: a device's failed matches are
-- kept under the key -16 - device key, beside its matches under the device's key.
--
-- The counts kept before hold no failed matches: they go, and are taken again on the
-- next search (or by the search_counts job). A log whose outcome changes changes those
-- counts and what the server holds of it, as a change of its device does.

DELETE FROM command_log_search_counts;

DROP TRIGGER command_logs_search_au;

CREATE TRIGGER command_logs_search_au AFTER UPDATE OF id, device_id, success, command_name, device_name, username, output, error_message
ON command_logs BEGIN
    DELETE FROM command_log_search_counts WHERE upto >= min(OLD.id, NEW.id);
    UPDATE command_log_search_epoch SET epoch = epoch + 1 WHERE id = 1;
END;

DROP TRIGGER command_logs_moves_au;

CREATE TRIGGER command_logs_moves_au AFTER UPDATE OF id, device_id, success ON command_logs
WHEN OLD.id IS NOT NEW.id OR OLD.device_id IS NOT NEW.device_id OR OLD.success IS NOT NEW.success BEGIN
    UPDATE command_log_moves SET epoch = epoch + 1 WHERE id = 1;
END;
