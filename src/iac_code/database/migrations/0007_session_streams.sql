-- Session streams when instances share PostgreSQL (issue 26): while a session stream (GET with
-- Acp-Session-Id) is open on any instance, that session's messages are logged on it instead of the
-- connection stream. Which session streams are open lives in the connection's row, because the statement
-- logging events decides each one's stream from the row it locks to number them (cluster/events.py): an
-- open or a close that committed while it waited for that lock is what it sees.
--
-- Keys are stream keys: the session id as a JSON string literal, as in iac_events.stream (so never U+0000);
-- each value is {"holder": the instance reading it, "delivered": the last event id it sent}.

ALTER TABLE iac_connections ADD COLUMN session_streams jsonb NOT NULL DEFAULT '{}';
