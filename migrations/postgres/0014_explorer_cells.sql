-- The metrics explorer's folded state (issue 26): one row per app, day, version, OS, device and
-- app state ('all' or an iOS 27 state's key), holding every metric's ExplorerCell of that cell
-- packed in one value (ExplorerCellMap: per metric and series — a signpost — the sketch over
-- device-days, ratio moments and histogram buckets; Sources/LifelineAnalysis/Explorer/), at both
-- levels (`_v`: OS and device ''). One row per metric made a fold batch upsert ~45 rows per cell,
-- and the leader folded ~470 documents/s. Only the leader's fold writes them (it reads the stored
-- maps of a batch, merges them in Swift and writes them back, under the fold's lock);
-- `lifeline refold` rebuilds them from the raw documents, which back-fills a database older than
-- this migration.
CREATE TABLE explorer_cells (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    os text NOT NULL,
    device text NOT NULL,
    app_state text NOT NULL,
    cells bytea NOT NULL,
    PRIMARY KEY (app, day, version, os, device, app_state)
);

CREATE TABLE explorer_cells_v (LIKE explorer_cells INCLUDING ALL);
