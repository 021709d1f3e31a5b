-- 0029_explorer_categories: the explorer's rows name their category by an id (issue 25).
--
-- rollup_explorer and rollup_explorer_by_version kept each row's category as its key text
-- ('termination', 'launch', … 7 bytes on average), once in the row and once in its unique index,
-- for ~7 rows a legacy payload and ~15 an iOS 27 report; the unique index is rewritten by nearly
-- every seal of fine rows on a load of distinct devices (BENCHMARKS.md, "The explorer's categories
-- by id"). The categories now have ids in explorer_categories, the catalog's seven first (ids
-- 1-7; SQLite stores 1 in no bytes at all), '' (the rows of migration 0015, every metric of their
-- cell) and any other category key a stored row holds after them; the writer adds a category there
-- the first time it writes a row of it, as it does app states (explorer_states, migration 0022).
CREATE TABLE explorer_categories (
    id INTEGER PRIMARY KEY,
    category TEXT NOT NULL UNIQUE
);
INSERT INTO explorer_categories (id, category) VALUES
    (1, 'launch'), (2, 'hang'), (3, 'memory'), (4, 'disk'), (5, 'battery'), (6, 'animation'), (7, 'termination');
INSERT OR IGNORE INTO explorer_categories (category)
SELECT category FROM rollup_explorer UNION SELECT category FROM rollup_explorer_by_version ORDER BY 1;

CREATE TABLE rollup_explorer_0029 (
    id INTEGER PRIMARY KEY,
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    app_state INTEGER NOT NULL,
    category INTEGER NOT NULL,
    cells BLOB NOT NULL
);
INSERT INTO rollup_explorer_0029 (id, app, day, app_version, os_version, device_type, app_state, category, cells)
SELECT e.id, e.app, e.day, e.app_version, e.os_version, e.device_type, e.app_state, c.id, e.cells
FROM rollup_explorer e JOIN explorer_categories c ON c.category = e.category ORDER BY e.id;
DROP TABLE rollup_explorer;
ALTER TABLE rollup_explorer_0029 RENAME TO rollup_explorer;
CREATE UNIQUE INDEX rollup_explorer_cell
    ON rollup_explorer (app, day, app_version, os_version, device_type, app_state, category);

CREATE TABLE rollup_explorer_by_version_0029 (
    id INTEGER PRIMARY KEY,
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    app_state INTEGER NOT NULL,
    category INTEGER NOT NULL,
    cells BLOB NOT NULL
);
INSERT INTO rollup_explorer_by_version_0029 (id, app, day, app_version, app_state, category, cells)
SELECT e.id, e.app, e.day, e.app_version, e.app_state, c.id, e.cells
FROM rollup_explorer_by_version e JOIN explorer_categories c ON c.category = e.category ORDER BY e.id;
DROP TABLE rollup_explorer_by_version;
ALTER TABLE rollup_explorer_by_version_0029 RENAME TO rollup_explorer_by_version;
CREATE UNIQUE INDEX rollup_explorer_by_version_cell
    ON rollup_explorer_by_version (app, day, app_version, app_state, category);
