-- Statistics for a viewer whose permission is constrained by device (site, platform,
-- tag…) group that viewer's logs by command. This index covers that pass, so it reads
-- the index alone instead of every table row with its output.
CREATE INDEX command_logs_stats ON command_logs (device_id, command_name, success);
