-- 0021_bucket_cells: the fine level's histogram buckets packed one row per cell (issue 25).
--
-- rollup_buckets held one row per (app, day, version, OS, device) and histogram source. On a load
-- where every document is its own fine cell (OS builds differ), each fold wrote ~19 such rows per
-- document, with their keys and B-tree entries: a quarter of the bytes the server wrote
-- (BENCHMARKS.md, "Fine histogram buckets packed per cell"). A cell's sources now share one row:
-- for each source in ascending order, its id, the length of its packed bucket list and that list
-- (the blob of rollup_buckets.buckets), merged on conflict by ll_merge_bucket_cells and read per
-- source by ll_cell_buckets. Counts and bounds are unchanged.
--
-- The rows of rollup_buckets are packed into the new table, and the old table dropped, by the
-- migration's Swift step (Database.migrate, RollupRebuilder.packFineBuckets), in this migration's
-- transaction. The version level (rollup_buckets_by_version) keeps its rows per source.
CREATE TABLE rollup_bucket_cells (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    sources BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version, os_version, device_type)
) WITHOUT ROWID;
