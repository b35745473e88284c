-- ACP's additionalDirectories (issue 38): the absolute directories a session works in beside its cwd, a JSON
-- list of strings (json, like permissions: database/json_text.py). Sessions stored before have none.

ALTER TABLE iac_sessions ADD COLUMN additional_directories json NOT NULL DEFAULT '[]';
