-- Serving as one (issue 14, wiring): a connection's agent runs on one instance (its host) while its event
-- stream may be held by another (its owner), so a stream reconnecting elsewhere never stops a running turn.
-- The owner records how far it delivered; a host records the requests it took and has not answered, so
-- the instance that adopts the connection after the host died can answer them instead of leaving them hanging.

ALTER TABLE iac_connections ADD COLUMN host text COLLATE "C";            -- instance running its agent
ALTER TABLE iac_connections ADD COLUMN delivered_through bigint NOT NULL DEFAULT 0;  -- on the connection stream
CREATE INDEX iac_connections_by_host ON iac_connections (host);

CREATE TABLE iac_inflight (
    connection_id text COLLATE "C" NOT NULL REFERENCES iac_connections ON DELETE CASCADE,
    request_key   text NOT NULL,                      -- the JSON-RPC id as text
    request_id    json NOT NULL,                      -- the id as the client sent it, to answer with
    PRIMARY KEY (connection_id, request_key)
);
