-- 0004_packed_rollups: one row per metric rollup cell (usage, exit counts and signpost totals
-- together), and one row per version cell and histogram source for buckets, the counters held
-- as packed blobs.
--
-- With 0002's one row per (cell, state, reason) and per (cell, source, bucket bound) in separate
-- tables, a payload that opens new cells touched ~14 B-tree pages in different places (three
-- tables per level, one page per histogram source), each written whole to the WAL at COMMIT:
-- ~11 pages of 32 KB per payload on the reference load, which capped the ingest floor near
-- 600 payloads/s. Here a payload touches one row per level and its bucket rows are neighbours.
-- The writer merges a batch's entries into the stored blobs with the SQL functions
-- ll_merge_counts / ll_merge_buckets that every Lifeline connection registers
-- (`ON CONFLICT … DO UPDATE SET exits = ll_merge_counts(exits, excluded.exits)`).
--
-- Blob layout (RollupBlob.swift): a layout byte, then the entries sorted by key, one per key:
--   exits, signposts — (a, b, count): (state, reason) or (category, name); zero signpost totals
--             are kept ("exited 0 times" is an answer);
--   buckets — (start, end, count) merged by identical bounds, at most 128 entries: beyond that,
--             neighbouring buckets are merged (counts stay exact, bounds widen), which only
--             happens when payloads do not share bucket layouts.
-- Layout 1 (the usual one) writes each entry as three zigzag LEB128 varints — the first as the
-- difference from the previous entry's, buckets as (start, end − start, count) — about 4 bytes
-- an entry; layout 0, for buckets with fractional bounds, three little-endian 8-byte words
-- (integers, or the doubles' bit patterns).
-- The diagnostics rollups of 0002 are unchanged. The other tables are dropped and the new ones
-- rebuilt from the normalized rows by the binary right after this migration.

DROP TABLE rollup_usage;
DROP TABLE rollup_exits;
DROP TABLE rollup_signposts;
DROP TABLE rollup_usage_by_version;
DROP TABLE rollup_exits_by_version;
DROP TABLE rollup_signposts_by_version;
DROP TABLE rollup_buckets_by_version;

-- One row per metric cell: payloads (about one per device and day), app time in ms (from
-- applicationTimeMetrics.cumulativeForegroundTime / cumulativeBackgroundTime), and the packed
-- exit counters (state as app_states.id, reason as exit_reasons.id) and signpost totals
-- (category, name ids).
CREATE TABLE rollup_metrics (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    payloads INTEGER NOT NULL CHECK (payloads >= 0),
    foreground_ms REAL NOT NULL,
    background_ms REAL NOT NULL,
    exits BLOB NOT NULL,
    signposts BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version, os_version, device_type)
) WITHOUT ROWID;

CREATE TABLE rollup_metrics_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    payloads INTEGER NOT NULL CHECK (payloads >= 0),
    foreground_ms REAL NOT NULL,
    background_ms REAL NOT NULL,
    exits BLOB NOT NULL,
    signposts BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version)
) WITHOUT ROWID;

-- `source` is a metric_names id, as in 0002. Clustered by cell, then source: a payload's
-- histograms land in neighbouring rows (one or two pages) instead of one page per source.
CREATE TABLE rollup_buckets_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    source INTEGER NOT NULL,
    buckets BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version, source)
) WITHOUT ROWID;
