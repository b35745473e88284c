-- U+0000 (issue 18): PostgreSQL's text cannot hold it and jsonb, like any SQL that looks inside a json
-- value, refuses its escape. From here on every text a client controls is stored as JSON text, which
-- keeps it as the six characters \u0000 (database/json_text.py):
--   * a session's strings become JSON string literals in their text columns. PostgreSQL's to_json writes
--     exactly what Python's json.dumps(ensure_ascii=False) does (checked for every code point), so the
--     rows converted here compare equal to the keys the store computes (cwd_key);
--   * permissions move from jsonb to json;
--   * a queued POST carries its in-flight key and id, found by Python when it is queued, so taking it
--     never asks PostgreSQL to read the message; in-flight keys become JSON string literals too.

UPDATE iac_sessions SET cwd = to_json(cwd)::text, cwd_key = to_json(cwd_key)::text, title = to_json(title)::text,
                        model = to_json(model)::text, mode = to_json(mode)::text;
ALTER TABLE iac_sessions
    ALTER COLUMN title SET DEFAULT '""',
    ALTER COLUMN model SET DEFAULT '""',
    ALTER COLUMN mode SET DEFAULT '"default"',
    ALTER COLUMN permissions DROP DEFAULT,
    ALTER COLUMN permissions TYPE json USING permissions::json,
    ALTER COLUMN permissions SET DEFAULT '{}';

-- Keys stay distinct once all are converted, not midway ('x' may become a '"x"' not yet converted):
-- the key is checked once, at the end.
ALTER TABLE iac_inflight DROP CONSTRAINT iac_inflight_pkey;
UPDATE iac_inflight SET request_key = to_json(request_key)::text;
ALTER TABLE iac_inflight ADD PRIMARY KEY (connection_id, request_key);

ALTER TABLE iac_inbound ADD COLUMN request_key text, ADD COLUMN request_id json;  -- NULL: not a request
-- Messages queued before this version, unless they hold an escaped U+0000 (they could never be taken).
-- CASE, not AND: the check must run before anything reads the message.
UPDATE iac_inbound SET request_key = to_json(message->>'id')::text, request_id = message->'id'
WHERE CASE WHEN strpos(message::text, '\u0000') = 0
           THEN message->>'method' IS NOT NULL AND json_typeof(message->'id') IN ('number', 'string')
           ELSE false END;
