-- 0014_explorer_cells: the metrics explorer's folded state (issue 26). One row per cell and
-- metric: the mergeable ExplorerCell (a sketch over device-days, ratio moments, histogram buckets;
-- binary form in Sources/LifelineAnalysis/Explorer/ExplorerCell+Encoding.swift), written by the
-- aggregator (never the door) and merged on conflict by ll_merge_explorer. Two levels, like the
-- rollups: fine (version, OS, device) and by version (what a query that neither filters nor groups
-- by OS or device reads). `subject` names the series inside a metric (a signpost), '' otherwise;
-- the key keeps a document's rows together (app, day, dimensions, then metric): with the metric
-- first, each document's ~45 rows landed on ~45 pages, and a reference-load run wrote ~1 MB per
-- payload to the WAL (BENCHMARKS.md, "The metrics explorer").
-- `app_state` is 'all' (the whole device-day) or an iOS 27 app state's key.
-- `lifeline refold` rebuilds both from the raw documents (it back-fills a database older than this).
CREATE TABLE rollup_explorer (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    metric TEXT NOT NULL,
    subject TEXT NOT NULL,
    app_state TEXT NOT NULL,
    cell BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version, os_version, device_type, metric, subject, app_state)
) WITHOUT ROWID;

CREATE TABLE rollup_explorer_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    metric TEXT NOT NULL,
    subject TEXT NOT NULL,
    app_state TEXT NOT NULL,
    cell BLOB NOT NULL,
    PRIMARY KEY (app, day, app_version, metric, subject, app_state)
) WITHOUT ROWID;
