-- The metrics explorer's folded state (issue 26): one row per app, day, version, OS, device,
-- metric, series (`subject`, '' for most metrics) and app state ('all' or an iOS 27 state's key),
-- holding the encoded ExplorerCell (sketch over device-days, ratio moments, histogram buckets;
-- Sources/LifelineAnalysis/Explorer/ExplorerCell+Encoding.swift), at both levels (`_v`: OS and
-- device ''). Only the leader's fold writes them (it reads the stored cells of a batch, merges in
-- Swift, and writes them back, under the fold's lock); `lifeline refold` rebuilds them from the raw
-- documents, which back-fills a database older than this migration. The metric leads the key after
-- the app, so a query of one category reads that category's rows.
CREATE TABLE explorer_cells (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    os text NOT NULL,
    device text NOT NULL,
    metric text NOT NULL,
    subject text NOT NULL,
    app_state text NOT NULL,
    cell bytea NOT NULL,
    PRIMARY KEY (app, metric, day, version, os, device, subject, app_state)
);

CREATE TABLE explorer_cells_v (LIKE explorer_cells INCLUDING ALL);
