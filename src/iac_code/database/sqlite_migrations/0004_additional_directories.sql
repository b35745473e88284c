-- ACP's additionalDirectories (issue 38): the absolute directories a session works in beside its cwd, as
-- JSON text (a list of strings). Sessions stored before have none.

ALTER TABLE iac_sessions ADD COLUMN additional_directories TEXT NOT NULL DEFAULT '[]';
