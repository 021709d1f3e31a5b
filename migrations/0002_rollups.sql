-- 0002_rollups: pre-aggregated counts kept up to date by the writer in the same transaction as
-- the payload rows, so aggregate queries read a few thousand rows instead of every payload.
--
-- Two levels:
--   rollup_*             keyed (app, day, app_version, os_version, device_type, ...): any scope;
--   rollup_*_by_version  keyed (app, day, app_version, ...): scopes without an OS or device
--                        filter or grouping (the common case), about 35 times fewer rows.
-- Histogram buckets are rolled up at the version level only: at the fine level they would cost
-- about as much as the histograms themselves (one row per bucket bound per cell, and a cell
-- rarely holds more than a few payloads), doubling the writer's work. Bucket queries that filter
-- or group by OS or device read the normalized histograms instead.
-- `day` is the UTC day as days since 1970-01-01 (payloads.day / diagnostics.occurred_at).
-- Dimension columns hold lookup ids, 0 for unknown (no foreign key, so 0 needs no row).
-- Every table is WITHOUT ROWID, clustered by its key, so a window query is one range scan.
-- Database.rebuildRollups() recomputes all of them from the normalized rows.

-- Metric payloads (about one per device and day) and app time in ms, from the scalars
-- applicationTimeMetrics.cumulativeForegroundTime / cumulativeBackgroundTime.
CREATE TABLE rollup_usage (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    payloads INTEGER NOT NULL CHECK (payloads >= 0),
    foreground_ms REAL NOT NULL,
    background_ms REAL NOT NULL,
    PRIMARY KEY (app, day, app_version, os_version, device_type)
) WITHOUT ROWID;

-- Exit counters; state as app_states.id, reason as exit_reasons.id.
CREATE TABLE rollup_exits (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    state INTEGER NOT NULL,
    reason INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (app, day, app_version, os_version, device_type, state, reason)
) WITHOUT ROWID;

-- Signpost totals (zero totals are kept: "exited 0 times" is an answer).
CREATE TABLE rollup_signposts (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    category INTEGER NOT NULL,
    name INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (app, day, app_version, os_version, device_type, category, name)
) WITHOUT ROWID;

-- Diagnostics, by each diagnostic's own metadata and occurred_at.
CREATE TABLE rollup_diagnostics (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    os_version INTEGER NOT NULL,
    device_type INTEGER NOT NULL,
    kind TEXT NOT NULL,
    crash_group INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (app, day, app_version, os_version, device_type, kind, crash_group)
) WITHOUT ROWID;

CREATE TABLE rollup_usage_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    payloads INTEGER NOT NULL CHECK (payloads >= 0),
    foreground_ms REAL NOT NULL,
    background_ms REAL NOT NULL,
    PRIMARY KEY (app, day, app_version)
) WITHOUT ROWID;

CREATE TABLE rollup_exits_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    state INTEGER NOT NULL,
    reason INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (app, day, app_version, state, reason)
) WITHOUT ROWID;

CREATE TABLE rollup_signposts_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    category INTEGER NOT NULL,
    name INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (app, day, app_version, category, name)
) WITHOUT ROWID;

-- Histogram buckets merged by identical bounds. `source` is a metric_names id: the metric name
-- (applicationLaunchMetrics.histogrammedTimeToFirstDrawKey) or `signpost:<category>/<name>` for
-- signpost durations. Bounds in the histogram's canonical unit (ms for durations).
-- Clustered by (app, source, day, ...): every bucket query is about one source, and there are
-- hundreds of bounds per source and cell, so the source goes before the day range.
CREATE TABLE rollup_buckets_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    source INTEGER NOT NULL,
    bucket_start REAL NOT NULL,
    bucket_end REAL NOT NULL,
    count INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (app, source, day, app_version, bucket_start, bucket_end)
) WITHOUT ROWID;

CREATE TABLE rollup_diagnostics_by_version (
    app INTEGER NOT NULL,
    day INTEGER NOT NULL,
    app_version INTEGER NOT NULL,
    kind TEXT NOT NULL,
    crash_group INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (app, day, app_version, kind, crash_group)
) WITHOUT ROWID;
