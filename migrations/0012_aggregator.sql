-- 0012_aggregator: ingest becomes a durable append (the payload's index row and its raw document)
-- and an aggregator stage folds committed documents into the rollups, crash groups and per-state
-- rows behind it (issue 25). Its progress is a watermark over payload ids, updated in the same
-- transaction as what it folded: a crash never folds a document twice nor skips one.
--
-- Everything stored before this migration was folded in its ingest transaction, so the
-- watermark starts at the highest payload id.
--
-- The per-payload normalized rows (exit_counts, signposts, histograms, scalar_metrics) are no
-- longer written: they only existed to be summed into the rollups, which are now folded from the
-- documents themselves (`lifeline refold` rebuilds them from the raw documents). Rows already
-- stored stay until their payloads are pruned.
CREATE TABLE aggregation_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    -- Every payload with an id at or below this is folded.
    folded_through INTEGER NOT NULL,
    -- When the last fold committed, epoch milliseconds (0: never).
    folded_at_ms INTEGER NOT NULL DEFAULT 0
);
INSERT INTO aggregation_state (id, folded_through, folded_at_ms)
VALUES (1, COALESCE((SELECT max(id) FROM payloads), 0), 0);

-- Histogram buckets per (app, day, version, OS, device) and source, packed like
-- rollup_buckets_by_version: percentiles filtered or grouped by OS or device read these cells
-- instead of the per-payload histograms. Filled from the normalized rows of existing payloads
-- when this migration runs (Database.migrate).
CREATE TABLE rollup_buckets (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    source INTEGER NOT NULL,
    buckets BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version, os_version, device_type, source)
) WITHOUT ROWID;
