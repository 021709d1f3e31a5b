-- Version-level rollups beside the fine ones (0001): one row per app, day, version and key, summed
-- over OS and device, as the SQLite store's `rollup_metrics_by_version`. A query that neither
-- filters nor groups by OS or device reads these (35 times fewer rows with 7 OS versions and 5
-- devices), the others the fine tables. The writer upserts both from the same rows in one
-- transaction; this migration fills them from what is stored.

CREATE TABLE usage_rollup_by_version (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    payloads bigint NOT NULL,
    foreground_ms double precision NOT NULL,
    background_ms double precision NOT NULL,
    PRIMARY KEY (app, day, version)
);

CREATE TABLE exit_rollup_by_version (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    state smallint NOT NULL,
    reason text NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (app, day, version, state, reason)
);

CREATE TABLE signpost_rollup_by_version (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    category text NOT NULL,
    name text NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (app, day, version, category, name)
);

CREATE TABLE bucket_rollup_by_version (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    source text NOT NULL,
    bucket_start double precision NOT NULL,
    bucket_end double precision NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (app, day, version, source, bucket_start, bucket_end)
);

INSERT INTO usage_rollup_by_version
SELECT app, day, version, sum(payloads), sum(foreground_ms), sum(background_ms)
FROM usage_rollup GROUP BY app, day, version;

INSERT INTO exit_rollup_by_version
SELECT app, day, version, state, reason, sum(count) FROM exit_rollup GROUP BY app, day, version, state, reason;

INSERT INTO signpost_rollup_by_version
SELECT app, day, version, category, name, sum(count) FROM signpost_rollup GROUP BY app, day, version, category, name;

INSERT INTO bucket_rollup_by_version
SELECT app, day, version, source, bucket_start, bucket_end, sum(count)
FROM bucket_rollup GROUP BY app, day, version, source, bucket_start, bucket_end;
