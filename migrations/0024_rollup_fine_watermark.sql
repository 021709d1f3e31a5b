-- 0024_rollup_fine_watermark: the fine rollups get a watermark of their own, as the version level
-- did in 0020.
--
-- A fine cell (rollup_metrics, rollup_bucket_cells, rollup_diagnostics: one day, version, OS and
-- device) was upserted at every fold of a few dozen documents. On the reference load those
-- upserts land all over the day's part of each table, and their pages were 30 of the ~77 KB the
-- server wrote per payload (BENCHMARKS.md, "The fine rollups kept in memory"). The server now sums
-- the fine cells in memory beside the version cells and writes each level every few seconds (one
-- level per fold while ingest is busy), past a number of cells, and both when a reader waits and
-- when it stops.
--
-- Every document with an id at or below rollup_fine_through is in the fine rollups, none above;
-- rollup_fine_through <= folded_through. After a crash, the documents between the two are read
-- again from their raw copies into the fine level (and those above rollup_version_through into
-- the version level). Everything before this migration is in the fine rollups.
ALTER TABLE aggregation_state ADD COLUMN rollup_fine_through INTEGER NOT NULL DEFAULT 0;
UPDATE aggregation_state SET rollup_fine_through = folded_through;
