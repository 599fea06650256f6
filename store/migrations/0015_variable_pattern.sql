-- 0015_variable_pattern: a command variable may carry a pattern, a regular expression
-- the whole value must match ('': none; the platform's rule for unsafe characters
-- applies instead).

ALTER TABLE command_variables ADD COLUMN pattern TEXT NOT NULL DEFAULT '';
