-- 0026_explorer_version_parts: the explorer's version rows kept in memory are written in the same
-- eight parts as the rollups (migration 0025), each with a watermark of its own.
--
-- The server keeps the explorer's version rows (rollup_explorer_by_version) in memory and wrote
-- them all every ~2 s: ~16,000 rows on the iOS 27 load, 64-113 ms, and every request waiting on
-- the writer meanwhile waited for them (BENCHMARKS.md, "The explorer's version cache written in
-- parts"). A row belongs to the part of its version-day (the same hash of app, day and version as
-- the rollups), and a fold writes one part, moving that part's watermark alone.
--
-- Level 2 of rollup_watermarks: every metric document with an id at or below a part's `through`
-- is in the stored version rows of that part, none above; `through` <= explorer_through. After a
-- crash, the documents above a part's watermark up to explorer_through are read again into the
-- version rows of that part only. aggregation_state.explorer_version_through keeps the lowest.
WITH RECURSIVE parts(part) AS (SELECT 0 UNION ALL SELECT part + 1 FROM parts WHERE part < 7)
INSERT INTO rollup_watermarks (level, part, through)
SELECT 2, part, (SELECT explorer_version_through FROM aggregation_state WHERE id = 1) FROM parts;
