-- As SQLite's 0160: deleting a user or a command sets its logs' reference to NULL,
-- which without these indexes reads every log at the hub.
CREATE INDEX command_logs_user ON command_logs (user_id);
CREATE INDEX command_logs_command ON command_logs (command_id);
