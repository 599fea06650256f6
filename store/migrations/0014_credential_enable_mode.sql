-- 0014_credential_enable_mode: what a credential set types when enable asks for a password:
-- '' the enable secret if set, else the login password; 'secret' the enable secret even
-- when empty; 'password' the login password; 'none' an empty line.

ALTER TABLE credential_sets ADD COLUMN enable_mode TEXT NOT NULL DEFAULT ''
    CHECK (enable_mode IN ('', 'secret', 'password', 'none'));
