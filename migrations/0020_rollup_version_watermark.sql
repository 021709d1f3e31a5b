-- 0020_rollup_version_watermark: the version-level rollups get a watermark of their own.
--
-- A version-day cell (rollup_metrics_by_version, rollup_buckets_by_version,
-- rollup_diagnostics_by_version: one version and day, every OS and device) is touched by most
-- folds, for a document or two each, and rewriting its packed blobs at every fold of a few dozen
-- documents was a fifth of the pages the server wrote and a third of its writer thread
-- (BENCHMARKS.md, "The version-level rollups kept in memory"). The server now sums them in memory
-- between writes and writes them every few seconds, when a reader waits, and when it stops.
--
-- Every document with an id at or below rollup_version_through is in the version-level rollups,
-- none above; rollup_version_through <= folded_through. After a crash, the documents between the
-- two are read again into the version level only (their fine cells are stored). Everything
-- before this migration is in both.
ALTER TABLE aggregation_state ADD COLUMN rollup_version_through INTEGER NOT NULL DEFAULT 0;
UPDATE aggregation_state SET rollup_version_through = folded_through;
