-- 0005_hardening: what issue 11 (hostile input) needs from the schema.
--
-- * payloads.dropped_values: values the decoder dropped as implausible (negative, non-finite,
--   past the bounds of ValueBounds) or for an over-long name. They stay in the raw document and
--   are never summed into a figure.
-- * api_keys: an optional expiry (`keys create --expires-in 90d`), when the key was last used
--   (written in batches, not per request), and the previous secret of a rotated key with the
--   time until which it is still accepted (`keys rotate ID`).
-- * dashboard_sessions: the dashboard's cookie carries an opaque random id; only its SHA-256 is
--   stored, with the key it signs in as and when it expires. Revoking the key ends its sessions.

ALTER TABLE payloads ADD COLUMN dropped_values INTEGER NOT NULL DEFAULT 0 CHECK (dropped_values >= 0);

ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN previous_secret_hash BLOB
    CHECK (previous_secret_hash IS NULL OR length(previous_secret_hash) = 32);
ALTER TABLE api_keys ADD COLUMN previous_valid_until INTEGER;

CREATE TABLE dashboard_sessions (
    id_hash BLOB PRIMARY KEY CHECK (length(id_hash) = 32),
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX dashboard_sessions_by_key ON dashboard_sessions (key_id);
