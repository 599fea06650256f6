-- 0070_log_held_columns: what the server holds in memory of every log (its device and
-- outcome, and now its duration, command, user and user name) is read again when any
-- of those changes in a log already written.
--
-- Logs are written once; these change only when a command or user is deleted (its
-- logs' command_id or user_id becomes NULL) or a log is rewritten by hand. A page
-- ordered by the duration, user name or outcome under a filter on those is found in
-- what is held, so the held values must never be older than the file's.

DROP TRIGGER command_logs_moves_au;

CREATE TRIGGER command_logs_moves_au
AFTER UPDATE OF id, device_id, success, execution_duration, command_id, user_id, username ON command_logs
WHEN OLD.id IS NOT NEW.id OR OLD.device_id IS NOT NEW.device_id OR OLD.success IS NOT NEW.success
    OR OLD.execution_duration IS NOT NEW.execution_duration OR OLD.command_id IS NOT NEW.command_id
    OR OLD.user_id IS NOT NEW.user_id OR OLD.username IS NOT NEW.username BEGIN
    UPDATE command_log_moves SET epoch = epoch + 1 WHERE id = 1;
END;
