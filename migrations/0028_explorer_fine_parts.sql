-- 0028_explorer_fine_parts: the explorer's fine rows (rollup_explorer) are written in the same eight
-- parts as the rollups and the explorer's version rows (migrations 0025, 0026), each with a
-- watermark of its own.
--
-- The server seals the fine rows it holds every second or past 4,096 rows, and wrote a seal's rows
-- in one fold: 4,000-13,000 rows on the iOS 27 load, 15-48 ms, and every request waiting on the
-- writer meanwhile waited for them (BENCHMARKS.md, "A seal's fine rows written in parts"). A
-- prepared row now waits in memory with its part (the hash of app, day and version), and a fold
-- writes one part, moving that part's watermark alone.
--
-- Level 3 of rollup_watermarks: every metric document with an id at or below a part's `through`
-- is in the stored fine rows of that part, none above; `through` <= folded_through. After a crash,
-- the documents above a part's watermark are read again into the fine rows of that part only.
-- aggregation_state.explorer_through keeps the lowest. The version parts (level 2) no longer stay
-- at or below explorer_through: each level's parts stand on their own.
WITH RECURSIVE parts(part) AS (SELECT 0 UNION ALL SELECT part + 1 FROM parts WHERE part < 7)
INSERT INTO rollup_watermarks (level, part, through)
SELECT 3, part, (SELECT explorer_through FROM aggregation_state WHERE id = 1) FROM parts;
