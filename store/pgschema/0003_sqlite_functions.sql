-- The functions of SQLite's that the store's SQL calls and PostgreSQL has not, with
-- SQLite's meaning for the values the store gives them (JSON is text here, as there).

-- instr(haystack, needle): the 1-based position of needle, 0 when absent.
CREATE FUNCTION instr(haystack TEXT, needle TEXT) RETURNS INTEGER
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN strpos(haystack, needle);

-- json_valid(text): whether the text is JSON (PostgreSQL 16's IS JSON, for 15).
CREATE FUNCTION json_valid(doc TEXT) RETURNS BOOLEAN
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF doc IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM doc::json;
    RETURN TRUE;
EXCEPTION WHEN others THEN
    RETURN FALSE;
END $$;

-- json_extract(doc, '$.a.b'): the value at a path of object keys, as text (a string
-- without its quotes); NULL when absent, or when doc is not JSON.
CREATE FUNCTION json_extract(doc TEXT, path TEXT) RETURNS TEXT
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN doc::json #>> string_to_array(substr(path, 3), '.');
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$;
