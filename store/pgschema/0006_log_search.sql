-- ?q= on the command logs (store/logsearch.go), PostgreSQL's counterpart of SQLite's
-- word index (FTS5 over output, error message and notes, unicode61): a log's words are
-- its runs of letters and digits, in lower case, one set for the three, kept in
-- command_logs.words, which a GIN index finds the logs holding all of a search's words
-- in. A word of q with other characters in it (17.9.4a, Gi0/1) is, as in SQLite, a
-- phrase of its words in one of the three: the index finds the logs holding them all,
-- log_phrase's expression tests their order. Built-in functions only (no extension):
-- the hub's role needs no rights beyond its schema.
--
-- A writer may give a log's words (logWordSet, the same rule in Go, where it costs a
-- fraction of the 0.25 ms of server CPU a kilobyte of output costs here); a log written
-- without them, or whose text changes (its notes), gets them here. A word longer than
-- 200 characters is left out (GIN's entries are bounded); the phrase's test finds it.

-- log_words(doc): the distinct words of doc.
CREATE FUNCTION log_words(doc TEXT) RETURNS TEXT[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY(SELECT DISTINCT w FROM regexp_split_to_table(lower(doc), '[^[:alnum:]]+') AS w
        WHERE w <> '' AND length(w) <= 200);

-- log_phrase(word): the regular expression (for ~*) of the words of word, in their
-- order, with only other characters between them and around them.
CREATE FUNCTION log_phrase(word TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN '(^|[^[:alnum:]])' || array_to_string(ARRAY(
        SELECT w FROM regexp_split_to_table(lower(word), '[^[:alnum:]]+') WITH ORDINALITY AS s (w, n)
        WHERE w <> '' ORDER BY n), '[^[:alnum:]]+') || '($|[^[:alnum:]])';

ALTER TABLE command_logs ADD COLUMN words TEXT[];

CREATE FUNCTION command_logs_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' OR NEW.words IS NULL THEN
        NEW.words = log_words(NEW.output || ' ' || NEW.error_message || ' ' || NEW.notes);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER command_logs_words_bi BEFORE INSERT ON command_logs
    FOR EACH ROW EXECUTE FUNCTION command_logs_words();
CREATE TRIGGER command_logs_words_bu BEFORE UPDATE OF output, error_message, notes ON command_logs
    FOR EACH ROW WHEN (OLD.output IS DISTINCT FROM NEW.output OR OLD.error_message IS DISTINCT FROM NEW.error_message
        OR OLD.notes IS DISTINCT FROM NEW.notes)
    EXECUTE FUNCTION command_logs_words();

UPDATE command_logs SET words = log_words(output || ' ' || error_message || ' ' || notes);

CREATE INDEX command_logs_words ON command_logs USING gin (words);
