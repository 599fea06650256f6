-- 0061_log_created_walk: the created index also holds each log's id and device. A page
-- for a viewer who sees many devices walks the newest logs along it and keeps those of
-- the viewer's devices without reading the table, and its ties on created are already
-- in id order.

DROP INDEX command_logs_created;
CREATE INDEX command_logs_created ON command_logs (created, id, device_id);
