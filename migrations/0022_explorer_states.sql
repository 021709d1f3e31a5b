-- 0022_explorer_states: the explorer's rows name their app state by an id (issue 25).
--
-- rollup_explorer and rollup_explorer_by_version kept each row's app state as its key text:
-- 'all' for a whole device-day, and for an iOS 27 report the state's domain, label and metadata
-- (often 30-50 bytes), once in the row and once in its unique index, for ~15 rows a report. On the
-- iOS 27 load that was ~1 KB of the ~13 KB stored per report (BENCHMARKS.md, "The explorer's app
-- states by id"). The states now have ids in explorer_states, 'all' being 0 (an integer SQLite
-- stores in no bytes at all); the writer adds a state there the first time it writes a row of it.
-- rollup_explorer_by_version_0014, read until a refold rewrites it, keeps its text.
CREATE TABLE explorer_states (
    id INTEGER PRIMARY KEY,
    state TEXT NOT NULL UNIQUE
);
INSERT INTO explorer_states (id, state) VALUES (0, 'all');
INSERT OR IGNORE INTO explorer_states (state)
SELECT app_state FROM rollup_explorer UNION SELECT app_state FROM rollup_explorer_by_version ORDER BY 1;

CREATE TABLE rollup_explorer_0022 (
    id INTEGER PRIMARY KEY,
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    app_state INTEGER NOT NULL,
    category TEXT NOT NULL,
    cells BLOB NOT NULL
);
INSERT INTO rollup_explorer_0022 (id, app, day, app_version, os_version, device_type, app_state, category, cells)
SELECT e.id, e.app, e.day, e.app_version, e.os_version, e.device_type, s.id, e.category, e.cells
FROM rollup_explorer e JOIN explorer_states s ON s.state = e.app_state ORDER BY e.id;
DROP TABLE rollup_explorer;
ALTER TABLE rollup_explorer_0022 RENAME TO rollup_explorer;
CREATE UNIQUE INDEX rollup_explorer_cell
    ON rollup_explorer (app, day, app_version, os_version, device_type, app_state, category);

CREATE TABLE rollup_explorer_by_version_0022 (
    id INTEGER PRIMARY KEY,
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    app_state INTEGER NOT NULL,
    category TEXT NOT NULL,
    cells BLOB NOT NULL
);
INSERT INTO rollup_explorer_by_version_0022 (id, app, day, app_version, app_state, category, cells)
SELECT e.id, e.app, e.day, e.app_version, s.id, e.category, e.cells
FROM rollup_explorer_by_version e JOIN explorer_states s ON s.state = e.app_state ORDER BY e.id;
DROP TABLE rollup_explorer_by_version;
ALTER TABLE rollup_explorer_by_version_0022 RENAME TO rollup_explorer_by_version;
CREATE UNIQUE INDEX rollup_explorer_by_version_cell
    ON rollup_explorer_by_version (app, day, app_version, app_state, category);
