-- Dashboard sessions, as in the SQLite store (migration 0005): the cookie carries an opaque random
-- id; only its SHA-256 is stored, with the key it signs in as and when it expires. Shared by every
-- node, so a browser signed in through one node is signed in on all of them; revoking the key
-- ends its sessions.

CREATE TABLE dashboard_sessions (
    id_hash bytea PRIMARY KEY CHECK (length(id_hash) = 32),
    key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
);

CREATE INDEX dashboard_sessions_by_key ON dashboard_sessions (key_id);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
