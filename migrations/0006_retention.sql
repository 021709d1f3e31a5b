-- 0006_retention: what the pruner (issue 13, `retention:` and `lifeline prune`) needs.
--
-- * retention_horizons: the first day still kept, per kind of data ('data': payloads, their
--   normalized rows, diagnostics and rollups; 'raw': the raw documents), as days since
--   1970-01-01. The pruner raises a horizon before it deletes anything below it, and every
--   aggregate query starts its window at the 'data' horizon, so a day being pruned (in many small
--   transactions) is never seen half-deleted: pruned days answer as if nothing had been stored.
--   'raw' also tells the next run where the raw documents still to delete begin.
-- * idempotency_keys_by_created: expired idempotency records are found by age, in batches.
-- * Databases created from now on use `auto_vacuum = INCREMENTAL` (set by the binary before
--   the first table exists), so pages freed by pruning can be returned to the file system.

CREATE TABLE retention_horizons (
    name TEXT PRIMARY KEY CHECK (name IN ('data', 'raw')),
    day INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX idempotency_keys_by_created ON idempotency_keys (created_at);
