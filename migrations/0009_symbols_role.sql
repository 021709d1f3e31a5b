-- 0009_symbols_role: a `symbols` API key role (issue 15): uploads debug symbols for one app, from
-- CI, and nothing else (ingest keys ship inside the app and are refused). The binary adds
-- 'symbols' to the CHECK of api_keys.role right after this migration, in place (SQLite cannot
-- alter a CHECK; same documented procedure as 0007); the store requires an app for such keys.
SELECT 1;
