-- 0032_fine_rollups_by_rowid: the fine level's metrics and bucket cells become rowid tables with a
-- unique index on their cell, as the explorer's fine rows are (migration 0015).
--
-- rollup_metrics and rollup_bucket_cells were WITHOUT ROWID tables keyed by their cell (app, day,
-- version, OS, device): every new cell's row (~200 B of packed exits and signposts, ~300 B of
-- bucket lists) landed on a page at random, and a seal of fine rows on a load of distinct devices
-- rewrote nearly every page of both tables (5.7 + 4.8 and 2.4 + 1.9 KB written per reference
-- payload, WAL + checkpoint: BENCHMARKS.md, "The fine rollups by rowid"). A rowid table takes each
-- new row at its end, and only the small index entries land at random. Lookups, upserts
-- (`ON CONFLICT` on the cell's columns) and the queries' day ranges go through the index.

CREATE TABLE rollup_metrics_0032 (
    id INTEGER PRIMARY KEY,
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    payloads INTEGER NOT NULL CHECK (payloads >= 0),
    foreground_ms REAL NOT NULL,
    background_ms REAL NOT NULL,
    exits BLOB NOT NULL,
    signposts BLOB NOT NULL
);
INSERT INTO rollup_metrics_0032 (app, day, app_version, os_version, device_type, payloads, foreground_ms,
    background_ms, exits, signposts)
SELECT app, day, app_version, os_version, device_type, payloads, foreground_ms, background_ms, exits, signposts
FROM rollup_metrics ORDER BY app, day, app_version, os_version, device_type;
DROP TABLE rollup_metrics;
ALTER TABLE rollup_metrics_0032 RENAME TO rollup_metrics;
CREATE UNIQUE INDEX rollup_metrics_cell ON rollup_metrics (app, day, app_version, os_version, device_type);

CREATE TABLE rollup_bucket_cells_0032 (
    id INTEGER PRIMARY KEY,
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    sources BLOB NOT NULL
);
INSERT INTO rollup_bucket_cells_0032 (app, day, app_version, os_version, device_type, sources)
SELECT app, day, app_version, os_version, device_type, sources
FROM rollup_bucket_cells ORDER BY app, day, app_version, os_version, device_type;
DROP TABLE rollup_bucket_cells;
ALTER TABLE rollup_bucket_cells_0032 RENAME TO rollup_bucket_cells;
CREATE UNIQUE INDEX rollup_bucket_cell ON rollup_bucket_cells (app, day, app_version, os_version, device_type);
