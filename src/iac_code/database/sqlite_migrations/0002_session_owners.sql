-- Who is asking (issue 21): each session belongs to the principal that created it, a JSON string literal
-- like the other texts. Sessions stored before have '""': no owner, which only admins see.

ALTER TABLE iac_sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '""';
CREATE INDEX iac_sessions_by_owner ON iac_sessions (owner, updated_at DESC, session_id DESC);
