-- The audit trail (issue 21): one row per permission decision, written before the call runs, and one
-- "outcome" row after an infrastructure change ran. Append-only: rows are never updated or deleted (the
-- triggers refuse it), and a session's deletion leaves its trail. Strings a client controls are JSON text,
-- as in iac_sessions; times are ISO 8601 strings, which sort as times do.

CREATE TABLE iac_audit (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,   -- the order records were written in
    at            TEXT NOT NULL,                       -- "2026-11-30T02:36:16.123Z"
    kind          TEXT NOT NULL,                       -- "decision" | "outcome"
    principal     TEXT NOT NULL,                       -- JSON text
    session_id    TEXT NOT NULL,                       -- JSON text
    tool          TEXT NOT NULL,                       -- JSON text: the tool, or the subject a running call asked about
    digest        TEXT NOT NULL,                       -- sha256 of the call's arguments (canonical JSON)
    arguments     TEXT NOT NULL,                       -- JSON text: their short form, secrets redacted
    decision      TEXT NOT NULL,                       -- "allowed" | "denied"
    source        TEXT NOT NULL,                       -- JSON text: rule:…, mode:…, remembered, user:…, headless-flag
    plan_sha256   TEXT,                                -- an infrastructure change's reviewed plan
    plan_counts   TEXT,                                -- JSON: the plan's counts by action
    exit_status   INTEGER                              -- outcome rows: the command's exit code (NULL: unknown)
);
CREATE INDEX iac_audit_by_session ON iac_audit (session_id, id);
CREATE INDEX iac_audit_by_time ON iac_audit (at, id);

CREATE TRIGGER iac_audit_no_update BEFORE UPDATE ON iac_audit
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
CREATE TRIGGER iac_audit_no_delete BEFORE DELETE ON iac_audit
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
