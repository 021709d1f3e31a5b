-- 0025_rollup_partitions: each rollup level's cached cells are written in eight parts, each with a
-- watermark of its own.
--
-- The server writes each level's cells (summed in memory over ~2 s) at once: on the reference load
-- the version level's ~9,400 rows took 46-72 ms and the fine level's ~24,000 a commit of up to
-- 100 ms, and every request waiting on the writer meanwhile waited for them (BENCHMARKS.md, "The
-- rollups written in parts"). A cell now belongs to one of eight parts of its level (a hash of its
-- version-day: app, day and version), and a fold writes one part, moving that part's watermark
-- alone.
--
-- Every document with an id at or below a part's `through` is in that part's cells, none above;
-- `through` <= aggregation_state.folded_through. After a crash, the documents above the lowest
-- part's watermark are read again from their raw copies, each into the parts that miss it.
-- aggregation_state.rollup_fine_through and rollup_version_through are kept as the lowest of their
-- level's parts. Level 0 is the fine level, 1 the version level.
CREATE TABLE rollup_watermarks (
    level INTEGER NOT NULL,
    part INTEGER NOT NULL,
    through INTEGER NOT NULL,
    PRIMARY KEY (level, part)
) WITHOUT ROWID;

WITH RECURSIVE parts(part) AS (SELECT 0 UNION ALL SELECT part + 1 FROM parts WHERE part < 7)
INSERT INTO rollup_watermarks (level, part, through)
SELECT 0, part, (SELECT rollup_fine_through FROM aggregation_state WHERE id = 1) FROM parts
UNION ALL
SELECT 1, part, (SELECT rollup_version_through FROM aggregation_state WHERE id = 1) FROM parts;
