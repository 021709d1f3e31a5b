-- 0004_packed_rollups: one row per rollup cell for exit counts and signpost totals, and one row
-- per version cell and histogram source for buckets, each holding its entries as a packed blob.
--
-- With 0002's one row per (cell, state, reason) and per (cell, source, bucket bound), a payload
-- that opens new cells cost ~139 B-tree upserts (~28 fine, ~111 version level, 83 of them
-- buckets) and capped the ingest floor near 600 payloads/s on the reference load. Packed, it
-- costs one upsert per cell and kind: the writer merges a batch's entries into the stored blob
-- with the SQL functions ll_merge_counts / ll_merge_buckets that every Lifeline connection
-- registers (`ON CONFLICT … DO UPDATE SET counts = ll_merge_counts(counts, excluded.counts)`).
--
-- Blob layout (RollupBlob.swift): entries of three little-endian 8-byte words, sorted by key,
-- one entry per key:
--   counts  — (a INTEGER, b INTEGER, count INTEGER): exits (state, reason) or signposts
--             (category, name); zero signpost totals are kept ("exited 0 times" is an answer);
--   buckets — (start REAL, end REAL, count INTEGER) merged by identical bounds, at most 512
--             entries: beyond that, neighbouring buckets are merged (counts stay exact, bounds
--             widen), which only happens when payloads do not share bucket layouts.
-- The usage and diagnostics rollups of 0002 are unchanged. The old tables are dropped and the
-- new ones rebuilt from the normalized rows by the binary right after this migration.

DROP TABLE rollup_exits;
DROP TABLE rollup_signposts;
DROP TABLE rollup_exits_by_version;
DROP TABLE rollup_signposts_by_version;
DROP TABLE rollup_buckets_by_version;

CREATE TABLE rollup_exits (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    counts BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version, os_version, device_type)
) WITHOUT ROWID;

CREATE TABLE rollup_signposts (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    counts BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version, os_version, device_type)
) WITHOUT ROWID;

CREATE TABLE rollup_exits_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    counts BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version)
) WITHOUT ROWID;

CREATE TABLE rollup_signposts_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    counts BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version)
) WITHOUT ROWID;

-- `source` is a metric_names id, as in 0002; clustered by source first (every bucket query is
-- about one source).
CREATE TABLE rollup_buckets_by_version (
    app INTEGER NOT NULL,
    source INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    buckets BLOB NOT NULL,
    PRIMARY KEY (app, source, day, app_version)
) WITHOUT ROWID;
