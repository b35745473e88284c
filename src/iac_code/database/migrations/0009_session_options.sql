-- A session's on/off settings (issue 38: ACP's boolean config options), by id, as a JSON object like
-- permissions; '{}' for sessions stored before: every option at its default.

ALTER TABLE iac_sessions ADD COLUMN options json NOT NULL DEFAULT '{}';
