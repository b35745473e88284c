-- Who is asking (issue 21): each session belongs to the principal that created it (a JSON string literal
-- like the other texts; '""' for sessions stored before: no owner, which only admins see), and each
-- connection to the principal that opened it, so an instance other than its host can refuse anyone else.

ALTER TABLE iac_sessions ADD COLUMN owner text NOT NULL DEFAULT '""';
CREATE INDEX iac_sessions_by_owner ON iac_sessions (owner, updated_at DESC, session_id DESC);

ALTER TABLE iac_connections ADD COLUMN principal text;  -- NULL: opened before principals existed
