-- 0016_explorer_by_category: the explorer's cells packed per cell AND category (launch, hang,
-- memory, disk, battery, animation, termination), at both levels.
-- With every metric of a device-day cell in one row (0015), a query for one category read whole
-- rows (tens of KB for a cell of many device-days) for a few of their entries: the fine-level
-- query "memory by OS and device" over 200,000 payloads took 208 ms instead of 66 ms with one row
-- per metric. With one row per metric at the version level (0014), the fold upserted ~57 rows a
-- document. One row per category does both jobs: 7 rows a document per level, and a query reads
-- only its category's rows (BENCHMARKS.md, "The explorer packed per category").
--
-- Nothing folded before is dropped:
-- - fine rows written by 0015 keep every metric of their cell, marked by category '' (read with
--   the wanted categories' rows, filtered per entry as before);
-- - the per-metric version rows of 0014 move to rollup_explorer_by_version_0014, which queries
--   still read and the fold never writes again.
-- `lifeline refold` rewrites both into the new layout (and empties the old table of what it
-- refolds).
ALTER TABLE rollup_explorer ADD COLUMN category TEXT NOT NULL DEFAULT '';
DROP INDEX rollup_explorer_cell;
CREATE UNIQUE INDEX rollup_explorer_cell
    ON rollup_explorer (app, day, app_version, os_version, device_type, app_state, category);

ALTER TABLE rollup_explorer_by_version RENAME TO rollup_explorer_by_version_0014;

-- A rowid table like rollup_explorer: a category's row of a busy version-day grows past what an
-- index b-tree keeps on its page.
CREATE TABLE rollup_explorer_by_version (
    id INTEGER PRIMARY KEY,
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    app_state TEXT NOT NULL,
    category TEXT NOT NULL,
    cells BLOB NOT NULL
);

CREATE UNIQUE INDEX rollup_explorer_by_version_cell
    ON rollup_explorer_by_version (app, day, app_version, app_state, category);
