-- A session's on/off settings (issue 38: ACP's boolean config options), by id, as a JSON object; '{}' for
-- sessions stored before: every option at its default.

ALTER TABLE iac_sessions ADD COLUMN options TEXT NOT NULL DEFAULT '{}';
