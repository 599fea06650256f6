-- 0068_log_filter_devices: the indexes of a log's command, user, user name, outcome and
-- duration also hold its id and device, as the created index does since 0061.
--
-- A viewer's list filtered by one of them (a command's logs within a site) tested each
-- log's device by reading its row: 100-145 ms for a command's 25,000 logs at five
-- million, 5-20 s for a page 100,000 in. Its count and its pages now read the index
-- alone, and ties on created stay in id order, so a page ordered by created, or by the
-- column then created (store.Field.SortIndex), is still read along it. A viewer's page
-- deep in a list ordered by one of the last three walks its index alone too.

DROP INDEX command_logs_command;
CREATE INDEX command_logs_command ON command_logs (command_id, created, id, device_id);
DROP INDEX command_logs_user;
CREATE INDEX command_logs_user ON command_logs (user_id, created, id, device_id);
DROP INDEX command_logs_username;
CREATE INDEX command_logs_username ON command_logs (username, created, id, device_id);
DROP INDEX command_logs_success;
CREATE INDEX command_logs_success ON command_logs (success, created, id, device_id);
DROP INDEX command_logs_duration;
CREATE INDEX command_logs_duration ON command_logs (execution_duration, created, id, device_id);
