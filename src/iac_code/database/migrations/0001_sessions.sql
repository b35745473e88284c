-- Sessions: what the file store keeps in meta.json (one row) and messages.jsonl (one row per line).

CREATE TABLE iac_sessions (
    session_id  text COLLATE "C" PRIMARY KEY,   -- byte order, like the file store's sort by id
    cwd         text NOT NULL,
    cwd_key     text NOT NULL,                  -- os.path.normpath(cwd): what list(cwd) matches
    title       text NOT NULL DEFAULT '',
    created_at  timestamptz(3) NOT NULL,        -- milliseconds, like the records' ISO 8601 strings
    updated_at  timestamptz(3) NOT NULL,
    model       text NOT NULL DEFAULT '',
    mode        text NOT NULL DEFAULT 'default',
    permissions jsonb NOT NULL DEFAULT '{}',    -- tool name -> "allow" | "reject"
    last_seq    bigint NOT NULL DEFAULT 0       -- seq of the newest message ever appended
);

-- list(): newest updated first, ties by id, for one cwd or for all.
CREATE INDEX iac_sessions_by_update ON iac_sessions (updated_at DESC, session_id DESC);
CREATE INDEX iac_sessions_by_cwd ON iac_sessions (cwd_key, updated_at DESC, session_id DESC);

CREATE TABLE iac_messages (
    session_id text COLLATE "C" NOT NULL REFERENCES iac_sessions ON DELETE CASCADE,
    seq        bigint NOT NULL,
    body       json NOT NULL,                   -- one line of messages.jsonl: Message.to_dict()
    PRIMARY KEY (session_id, seq)
);
