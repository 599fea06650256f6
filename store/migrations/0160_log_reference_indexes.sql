-- Deleting a user or a command sets its logs' user_id or command_id to NULL (the log
-- keeps the name it was written with). Without an index on the column SQLite reads
-- every log to find them, holding the write lock: 18 s at 5M logs, during which no
-- execution could be logged. devices already have one (command_logs_device).
CREATE INDEX command_logs_user ON command_logs (user_id);
CREATE INDEX command_logs_command ON command_logs (command_id);
