-- The log views at 10M logs (docs/BENCHMARKS.md, "Hub on PostgreSQL, 10M logs").
--
-- SQLite's indexes hold each log's id (its rowid) after their columns; PostgreSQL's do
-- not. A page of a device's (a site's) logs in created order read through
-- command_logs_device then fetched every log to learn its id, the tie-breaker of the
-- order: 200,000 rows from the table for one site's first page. With the id in the index
-- the page is read from the index alone, as on SQLite. The same for the names' indexes,
-- which a filter on a command or a user goes through (store/loglist.go, withNames).
DROP INDEX command_logs_device;
CREATE INDEX command_logs_device ON command_logs (device_id, created, id);
DROP INDEX command_logs_command_name;
CREATE INDEX command_logs_command_name ON command_logs (command_name, created, id);
DROP INDEX command_logs_device_name;
CREATE INDEX command_logs_device_name ON command_logs (device_name, created, id);

-- The counters are read through views naming a deleted object's key 0 as NULL
-- (nullif(device_key, 0) AS device_id: store/loglist.go, countsView), so a condition on
-- a log's device or command compares that expression, which the counters' keys cannot
-- serve: every row was read (a million of command_log_commands at 5,000 devices). These
-- index the expressions.
CREATE INDEX command_log_counts_device ON command_log_counts ((nullif(device_key, 0)));
CREATE INDEX command_log_commands_device ON command_log_commands ((nullif(device_key, 0)));
CREATE INDEX command_log_commands_command ON command_log_commands ((nullif(command_key, 0)));
CREATE INDEX command_log_errors_device ON command_log_errors ((nullif(device_key, 0)));
CREATE INDEX command_log_hours_device ON command_log_hours ((nullif(device_key, 0)), hour);

-- The last 24 hours of the statistics and a day's count sum the hourly counters of a
-- span of hours (24 × 5,000 devices' rows): with their count in their key's index the
-- sum reads the index alone, not 12,000 pages of the table.
ALTER TABLE command_log_hours DROP CONSTRAINT command_log_hours_pkey,
    ADD PRIMARY KEY (hour, device_key, outcome) INCLUDE (n);

-- A log keeps its command's, device's and user's names beside their ids, and a filter on
-- the id adds the names (withNames): the planner, taking the two conditions as
-- independent, expected 250 of a command's 50,000 logs and read them all to sort them
-- (1.2 s) rather than walk the name's index (0.4 ms). These tell it an id fixes the name.
CREATE STATISTICS command_logs_command_names (dependencies) ON command_id, command_name FROM command_logs;
CREATE STATISTICS command_logs_device_names (dependencies) ON device_id, device_name FROM command_logs;
CREATE STATISTICS command_logs_user_names (dependencies) ON user_id, username FROM command_logs;
ANALYZE command_logs;
