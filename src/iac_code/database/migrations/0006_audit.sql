-- The audit trail (issue 21): one row per permission decision, written before the call runs, and one
-- "outcome" row after an infrastructure change ran, from every instance into this one table. Append-only:
-- rows are never updated or deleted (the trigger refuses it). Strings a client controls are JSON text, as
-- in iac_sessions (0004), so U+0000 is kept; times come from the database clock.

CREATE TABLE iac_audit (
    id            bigserial PRIMARY KEY,
    at            timestamptz(3) NOT NULL DEFAULT now(),
    kind          text NOT NULL,
    principal     text NOT NULL,
    session_id    text NOT NULL,
    tool          text NOT NULL,
    digest        text NOT NULL,
    arguments     text NOT NULL,
    decision      text NOT NULL,
    source        text NOT NULL,
    plan_sha256   text,
    plan_counts   json,
    exit_status   integer
);
CREATE INDEX iac_audit_by_session ON iac_audit (session_id, id);
CREATE INDEX iac_audit_by_time ON iac_audit (at, id);

CREATE FUNCTION iac_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit trail is append-only';
END $$;
CREATE TRIGGER iac_audit_append_only BEFORE UPDATE OR DELETE ON iac_audit
    FOR EACH STATEMENT EXECUTE FUNCTION iac_audit_append_only();
