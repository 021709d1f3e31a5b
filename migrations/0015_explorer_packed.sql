-- 0015_explorer_packed: the explorer's fine level packed, one row per device-day cell (app, day,
-- version, OS, device, app state) holding every metric and series of that cell in one
-- ExplorerCellMap (binary form in Sources/LifelineAnalysis/Explorer/ExplorerCellMap.swift; the
-- same value as PostgreSQL's explorer_cells), merged on conflict by ll_merge_explorer_map. With one
-- row per metric, a reference-load document wrote ~57 fine rows and ~11 KB of pages (metric names
-- repeated in every key); BENCHMARKS.md, "The metrics explorer".
-- The version level (rollup_explorer_by_version, 0014) keeps one row per metric: its rows do not
-- grow with the payloads, and its queries read a few metrics of many cells.
-- The per-metric fine rows of 0014 are dropped, not converted (SQL cannot repack them): a database
-- that folded explorer cells before this migration gets them back with `lifeline refold`.
DROP TABLE rollup_explorer;

CREATE TABLE rollup_explorer (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    app_state TEXT NOT NULL,
    cells BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version, os_version, device_type, app_state)
) WITHOUT ROWID;
