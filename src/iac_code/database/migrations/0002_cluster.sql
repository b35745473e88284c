-- Several instances serving as one: who is alive, who holds which connection's stream, each
-- connection's event log (the replay window) and inbound requests, and who runs which session.

CREATE TABLE iac_instances (
    instance_id text COLLATE "C" PRIMARY KEY,
    started_at  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now(),   -- heartbeat
    info        jsonb NOT NULL DEFAULT '{}'           -- host, pid, address: what /health shows
);

CREATE TABLE iac_connections (
    connection_id text COLLATE "C" PRIMARY KEY,
    owner         text COLLATE "C",                   -- instance holding its event stream; NULL: none
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_seen     timestamptz NOT NULL DEFAULT now(),
    last_event_id bigint NOT NULL DEFAULT 0           -- id of the newest event ever written
);
CREATE INDEX iac_connections_by_owner ON iac_connections (owner);

CREATE TABLE iac_events (
    connection_id text COLLATE "C" NOT NULL REFERENCES iac_connections ON DELETE CASCADE,
    event_id      bigint NOT NULL,                    -- 1, 2, 3… per connection: the SSE id
    stream        text COLLATE "C" NOT NULL,          -- '' for the connection stream, else a session id
    message       json NOT NULL,                      -- the JSON-RPC message
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connection_id, event_id)
);
CREATE INDEX iac_events_by_age ON iac_events (created_at);

-- What retention removed, per stream: a reader asking for older events is told they are lost.
CREATE TABLE iac_event_trims (
    connection_id text COLLATE "C" NOT NULL REFERENCES iac_connections ON DELETE CASCADE,
    stream        text COLLATE "C" NOT NULL,
    lost_through  bigint NOT NULL,
    PRIMARY KEY (connection_id, stream)
);

-- POSTed messages that landed on an instance other than the connection's owner.
CREATE TABLE iac_inbound (
    id            bigserial PRIMARY KEY,
    connection_id text COLLATE "C" NOT NULL REFERENCES iac_connections ON DELETE CASCADE,
    message       json NOT NULL,
    received_by   text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX iac_inbound_by_connection ON iac_inbound (connection_id, id);

-- One instance runs a session's turns at a time; generation grows each time the lease changes hands.
CREATE TABLE iac_leases (
    session_id  text COLLATE "C" PRIMARY KEY,
    holder      text COLLATE "C" NOT NULL,
    generation  bigint NOT NULL DEFAULT 1,
    acquired_at timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
