-- 0066_log_duration_order: logs ordered by execution_duration are read along an index.
--
-- A click on the duration column of the logs' table asks for ?ordering=execution_duration.
-- With no index in that order, every page sorted every log the viewer may see: a second
-- for a fifth of a million logs. Like the user name and success indexes, this one holds
-- created after the column, which is how a page ordered by one of them breaks its ties
-- (store.Field.SortIndex).

CREATE INDEX command_logs_duration ON command_logs (execution_duration, created);
