-- A failed execution's parts (phase, reason, address, port, login user, credential
-- set, detail) beside its error message, as JSON; NULL when it succeeded or the device
-- refused a line (syntax_error says why then).
ALTER TABLE command_logs ADD COLUMN failure TEXT;
