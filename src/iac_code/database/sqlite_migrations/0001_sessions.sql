-- Sessions in the embedded database ($IAC_CODE_CONFIG_DIR/iac-code.db): the same tables and columns as
-- PostgreSQL's (migrations/0001 and 0004), in SQLite's types. Every string a client controls is JSON text
-- (database/json_text.py), as there; times are the records' ISO 8601 strings, which sort as times do.

CREATE TABLE iac_sessions (
    session_id  TEXT PRIMARY KEY,             -- BINARY collation: byte order, like PostgreSQL's COLLATE "C"
    cwd         TEXT NOT NULL,                -- JSON string literal
    cwd_key     TEXT NOT NULL,                -- os.path.normpath(cwd) as a JSON string literal: what list(cwd) matches
    title       TEXT NOT NULL DEFAULT '""',
    created_at  TEXT NOT NULL,                -- "2026-11-30T02:36:16.123Z"
    updated_at  TEXT NOT NULL,
    model       TEXT NOT NULL DEFAULT '""',
    mode        TEXT NOT NULL DEFAULT '"default"',
    permissions TEXT NOT NULL DEFAULT '{}',   -- JSON: tool name -> "allow" | "reject"
    last_seq    INTEGER NOT NULL DEFAULT 0    -- seq of the newest message ever appended
);

-- list(): newest updated first, ties by id, for one cwd or for all.
CREATE INDEX iac_sessions_by_update ON iac_sessions (updated_at DESC, session_id DESC);
CREATE INDEX iac_sessions_by_cwd ON iac_sessions (cwd_key, updated_at DESC, session_id DESC);

CREATE TABLE iac_messages (
    session_id TEXT NOT NULL REFERENCES iac_sessions ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    body       TEXT NOT NULL,                 -- Message.to_dict() as one JSON line (without its newline)
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

-- File stores imported into this database (sessions/import_files.py): each is imported once.
CREATE TABLE iac_imports (
    source      TEXT PRIMARY KEY,             -- the directory imported
    imported_at TEXT NOT NULL,
    sessions    INTEGER NOT NULL,             -- how many were imported
    skipped     INTEGER NOT NULL              -- how many were damaged and left out
);
