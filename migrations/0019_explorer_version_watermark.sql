-- 0019_explorer_version_watermark: the explorer's version-level rows get a watermark of their own.
--
-- A version-day row (rollup_explorer_by_version) gathers every device of its version and day: on a
-- load where each document is its own fine cell, each write of held rows rewrote ~5,000 of them
-- (2-5 KB each) for one or two new documents apiece, and that was what bounded the door beside the
-- explorer (BENCHMARKS.md, "Where the door waits with the explorer"). The server now keeps them,
-- merged and encoded, in memory between writes of held rows, and writes them every few seconds,
-- when a reader waits, when they hold too many bytes, and when it stops.
--
-- Every metric document with an id at or below explorer_version_through is in
-- rollup_explorer_by_version, none above; explorer_version_through <= explorer_through. After a
-- crash, the documents between the two are read again from their raw copies into the version rows
-- only (their fine rows are stored). Everything before this migration is in both.
ALTER TABLE aggregation_state ADD COLUMN explorer_version_through INTEGER NOT NULL DEFAULT 0;
UPDATE aggregation_state SET explorer_version_through = explorer_through;
