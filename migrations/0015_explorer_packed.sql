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
-- A rowid table with a unique index on the cell's key, not a WITHOUT ROWID table: a packed row is
-- ~2 KB, over what an index b-tree keeps on its page (~2,030 bytes at 8 KB pages), and with the key
-- as the b-tree every such row spilled into an overflow page of its own (9.4 KB of pages per 2.3 KB
-- row). Rows now append to the table in rowid order, and only the small key goes into the index.
DROP TABLE rollup_explorer;

CREATE TABLE rollup_explorer (
    id INTEGER PRIMARY KEY,
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    app_state TEXT NOT NULL,
    cells BLOB NOT NULL
);

CREATE UNIQUE INDEX rollup_explorer_cell
    ON rollup_explorer (app, day, app_version, os_version, device_type, app_state);
