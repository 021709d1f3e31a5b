-- API keys (ll_<id>_<secret>; only the secret's SHA-256 is kept), as in the SQLite store
-- (migrations 0001, 0005, 0009). Shared by every node: a key revoked on one node stops working
-- on all of them within the key cache time (server.key_cache_seconds).

CREATE TABLE api_keys (
    id text PRIMARY KEY CHECK (length(id) BETWEEN 8 AND 12),
    role text NOT NULL CHECK (role IN ('ingest', 'read', 'admin', 'symbols')),
    app text CHECK (app IS NULL OR length(app) BETWEEN 1 AND 255),
    secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
    created_at bigint NOT NULL,
    revoked_at bigint,
    last_used_at bigint,
    expires_at bigint,
    previous_secret_hash bytea CHECK (previous_secret_hash IS NULL OR length(previous_secret_hash) = 32),
    previous_valid_until bigint,
    CHECK (role NOT IN ('ingest', 'symbols') OR app IS NOT NULL),
    CHECK (role <> 'admin' OR app IS NULL)
);
