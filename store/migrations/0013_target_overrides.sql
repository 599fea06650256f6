-- 0013_target_overrides: a platform, and a device over its platform, may set its own SSH
-- connect timeout, command timeout (seconds, NULL: the execution's) and prompt pattern
-- (a regular expression, '': the driver's).

ALTER TABLE platforms ADD COLUMN connect_timeout INTEGER;
ALTER TABLE platforms ADD COLUMN command_timeout INTEGER;
ALTER TABLE platforms ADD COLUMN prompt_pattern TEXT NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN connect_timeout INTEGER;
ALTER TABLE devices ADD COLUMN command_timeout INTEGER;
ALTER TABLE devices ADD COLUMN prompt_pattern TEXT NOT NULL DEFAULT '';
