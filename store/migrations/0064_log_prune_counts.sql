-- 0064_log_prune_counts: a retention prune keeps the search counts.
--
-- Deleting a log drops every kept search count that covers it (0060). A prune instead
-- takes the logs it deletes off each count itself, in the same transaction, and updates
-- only the counts that change; while it deletes, it sets pruning, and the trigger that
-- drops the counts does not run. pruning is set and cleared inside that one
-- transaction, so no other connection ever reads it set. The epoch moves on every
-- delete as before, from a trigger of its own.

ALTER TABLE command_log_search_epoch ADD COLUMN pruning INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER command_logs_search_ad;

CREATE TRIGGER command_logs_search_ad AFTER DELETE ON command_logs
WHEN NOT (SELECT pruning FROM command_log_search_epoch WHERE id = 1) BEGIN
    DELETE FROM command_log_search_counts WHERE upto >= OLD.id;
END;

CREATE TRIGGER command_logs_search_epoch_ad AFTER DELETE ON command_logs BEGIN
    UPDATE command_log_search_epoch SET epoch = epoch + 1 WHERE id = 1;
END;
