// GENERATED FILE: do not edit. Made from migrations/*.sql by: bash scripts/embed-migrations.sh
// Add a new .sql file (never change a shipped one) and run it again; GeneratedFilesAreFresh fails when
// this file differs from what the script makes.

import LifelineStorage

/// The SQL migrations shipped with this binary, in version order (generated, do not edit).
package enum EmbeddedMigrations {
    /// Every migration of `migrations/`, byte for byte.
    package static let all: [Migration] = [
        Migration(
            version: 1,
            name: "initial",
            sql: #"""
                -- 0001_initial: apps and dimension lookups, payloads with normalized rows, crash groups,
                -- API keys and idempotency keys.
                --
                -- Conventions: integer surrogate keys; strings that repeat (versions, OS, devices, names)
                -- live once in a lookup table and are referenced by id; time columns hold epoch seconds
                -- unless their name ends in _ms. Never edit this file once shipped: add a new migration.

                CREATE TABLE apps (
                    id INTEGER PRIMARY KEY,
                    bundle_id TEXT NOT NULL UNIQUE CHECK (length(bundle_id) BETWEEN 1 AND 255)
                );

                -- Dimension lookups (string -> small integer).
                CREATE TABLE app_versions (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                CREATE TABLE builds (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                CREATE TABLE os_versions (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                CREATE TABLE device_types (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                CREATE TABLE regions (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                CREATE TABLE architectures (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                -- Exit reasons as in the JSON key without `cumulative`/`ExitCount`, e.g. `MemoryPressure`.
                CREATE TABLE exit_reasons (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                -- Histogram and scalar metric names, `section.key`.
                CREATE TABLE metric_names (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                CREATE TABLE signpost_categories (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                CREATE TABLE signpost_names (
                    id INTEGER PRIMARY KEY,
                    value TEXT NOT NULL UNIQUE CHECK (length(value) BETWEEN 1 AND 1024)
                );

                -- Fixed enumerations, seeded here; ids are mirrored in the Swift code.
                CREATE TABLE units (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE
                );

                INSERT INTO units (id, name) VALUES
                    (1, 'ms'), (2, 'bytes'), (3, 'instructions'), (4, 'ms_per_s'),
                    (5, 'apl'), (6, 'bars'), (7, 'count'), (8, 'percent');

                CREATE TABLE app_states (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE
                );

                INSERT INTO app_states (id, name) VALUES (0, 'foreground'), (1, 'background');

                -- One row per stored document. (app, content_hash) is the deduplication key.
                -- begin_raw/end_raw keep the timestamp text only when it could not be parsed
                -- (the raw document always keeps it).
                CREATE TABLE payloads (
                    id INTEGER PRIMARY KEY,
                    app INTEGER NOT NULL REFERENCES apps (id),
                    kind TEXT NOT NULL CHECK (kind IN ('metric', 'diagnostic')),
                    app_version INTEGER REFERENCES app_versions (id),
                    build INTEGER REFERENCES builds (id),
                    os_version INTEGER REFERENCES os_versions (id),
                    device_type INTEGER REFERENCES device_types (id),
                    region INTEGER REFERENCES regions (id),
                    arch INTEGER REFERENCES architectures (id),
                    day TEXT NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
                    begin_at INTEGER,
                    end_at INTEGER,
                    begin_raw TEXT CHECK (begin_raw IS NULL OR begin_at IS NULL),
                    end_raw TEXT CHECK (end_raw IS NULL OR end_at IS NULL),
                    received_at_ms INTEGER NOT NULL,
                    content_hash BLOB NOT NULL CHECK (length(content_hash) = 32),
                    unparsed_measurements INTEGER NOT NULL DEFAULT 0 CHECK (unparsed_measurements >= 0),
                    UNIQUE (app, content_hash)
                );

                CREATE INDEX payloads_by_app_kind_day ON payloads (app, kind, day);

                -- The document as received (gzip), apart from the metadata so scans of payloads stay small.
                CREATE TABLE payload_raw (
                    payload INTEGER PRIMARY KEY REFERENCES payloads (id) ON DELETE CASCADE,
                    raw BLOB NOT NULL
                );

                -- Exit counters of a metric payload; zero counters are not stored (missing means 0).
                CREATE TABLE exit_counts (
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    state INTEGER NOT NULL REFERENCES app_states (id),
                    reason INTEGER NOT NULL REFERENCES exit_reasons (id),
                    count INTEGER NOT NULL CHECK (count > 0),
                    PRIMARY KEY (payload, state, reason)
                ) WITHOUT ROWID;

                -- Signposts; `durations` is the packed duration histogram (see HistogramCodec.swift).
                CREATE TABLE signposts (
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    category INTEGER NOT NULL REFERENCES signpost_categories (id),
                    name INTEGER NOT NULL REFERENCES signpost_names (id),
                    total_count INTEGER NOT NULL CHECK (total_count >= 0),
                    cpu_time_ms REAL,
                    avg_memory_bytes REAL,
                    logical_writes_bytes REAL,
                    hitch_ratio REAL,
                    duration_unit INTEGER REFERENCES units (id),
                    duration_count INTEGER CHECK (duration_count IS NULL OR duration_count >= 0),
                    durations BLOB CHECK (durations IS NULL OR duration_count IS NOT NULL),
                    PRIMARY KEY (payload, category, name)
                ) WITHOUT ROWID;

                -- Histograms of a metric payload; `buckets` is packed (see HistogramCodec.swift),
                -- `total_count` is the sum of the bucket counts.
                CREATE TABLE histograms (
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    metric INTEGER NOT NULL REFERENCES metric_names (id),
                    unit INTEGER REFERENCES units (id),
                    total_count INTEGER NOT NULL CHECK (total_count >= 0),
                    buckets BLOB NOT NULL,
                    PRIMARY KEY (payload, metric)
                ) WITHOUT ROWID;

                -- Scalar values and averages of a metric payload; `raw` only when the value was unparseable.
                CREATE TABLE scalar_metrics (
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    metric INTEGER NOT NULL REFERENCES metric_names (id),
                    value REAL,
                    unit INTEGER REFERENCES units (id),
                    raw TEXT CHECK ((raw IS NULL) <> (value IS NULL)),
                    std_dev REAL,
                    sample_count INTEGER CHECK (sample_count IS NULL OR sample_count >= 0),
                    PRIMARY KEY (payload, metric)
                ) WITHOUT ROWID;

                -- Groups of diagnostics with the same signature, per app; counted as diagnostics arrive.
                CREATE TABLE crash_groups (
                    id INTEGER PRIMARY KEY,
                    app INTEGER NOT NULL REFERENCES apps (id),
                    fingerprint TEXT NOT NULL CHECK (length(fingerprint) BETWEEN 1 AND 128),
                    group_kind TEXT NOT NULL CHECK (length(group_kind) BETWEEN 1 AND 64),
                    title TEXT NOT NULL,
                    first_seen INTEGER NOT NULL,
                    last_seen INTEGER NOT NULL,
                    count INTEGER NOT NULL CHECK (count >= 0),
                    CHECK (first_seen <= last_seen),
                    UNIQUE (app, fingerprint)
                );

                -- One row per diagnostic; its own metadata decides its dimensions.
                -- occurred_at: the payload's begin time, or the received time when it has none.
                CREATE TABLE diagnostics (
                    id INTEGER PRIMARY KEY,
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
                    kind TEXT NOT NULL
                        CHECK (kind IN ('crash', 'hang', 'cpu_exception', 'disk_write_exception', 'app_launch')),
                    app_version INTEGER REFERENCES app_versions (id),
                    build INTEGER REFERENCES builds (id),
                    os_version INTEGER REFERENCES os_versions (id),
                    device_type INTEGER REFERENCES device_types (id),
                    region INTEGER REFERENCES regions (id),
                    arch INTEGER REFERENCES architectures (id),
                    occurred_at INTEGER NOT NULL,
                    exception_type INTEGER,
                    exception_code INTEGER,
                    signal INTEGER,
                    termination_reason TEXT,
                    vm_region_info TEXT,
                    objc_exception_name TEXT,
                    objc_exception_type TEXT,
                    objc_class_name TEXT,
                    objc_composed_message TEXT,
                    objc_format_string TEXT,
                    primary_value REAL,
                    primary_unit INTEGER REFERENCES units (id),
                    primary_raw TEXT CHECK (primary_raw IS NULL OR primary_value IS NULL),
                    sampled_time_ms REAL,
                    crash_group INTEGER NOT NULL REFERENCES crash_groups (id),
                    UNIQUE (payload, ordinal)
                );

                CREATE INDEX diagnostics_by_group ON diagnostics (crash_group, occurred_at);

                -- Top frames of the attributed thread (position 0 = top of stack).
                -- address and offset hold the 64-bit unsigned values as their signed bit pattern.
                CREATE TABLE diagnostic_frames (
                    diagnostic INTEGER NOT NULL REFERENCES diagnostics (id) ON DELETE CASCADE,
                    position INTEGER NOT NULL CHECK (position >= 0),
                    binary_name TEXT,
                    binary_uuid TEXT,
                    address INTEGER NOT NULL,
                    offset INTEGER NOT NULL,
                    PRIMARY KEY (diagnostic, position)
                ) WITHOUT ROWID;

                -- API keys: only the SHA-256 of the secret is stored.
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 8 AND 12),
                    role TEXT NOT NULL CHECK (role IN ('ingest', 'read', 'admin')),
                    app TEXT CHECK (app IS NULL OR length(app) BETWEEN 1 AND 255),
                    secret_hash BLOB NOT NULL CHECK (length(secret_hash) = 32),
                    created_at INTEGER NOT NULL,
                    revoked_at INTEGER,
                    last_used_at INTEGER,
                    CHECK (role <> 'ingest' OR app IS NOT NULL),
                    CHECK (role <> 'admin' OR app IS NULL)
                ) WITHOUT ROWID;

                -- Outcomes of requests sent with an Idempotency-Key, replayed on retry.
                -- payload_ids: JSON array of payload ids in item order.
                CREATE TABLE idempotency_keys (
                    app INTEGER NOT NULL REFERENCES apps (id),
                    key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
                    accepted INTEGER NOT NULL CHECK (accepted >= 0),
                    duplicates INTEGER NOT NULL CHECK (duplicates >= 0),
                    payload_ids TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (app, key)
                ) WITHOUT ROWID;

                """#
        ),
        Migration(
            version: 2,
            name: "rollups",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 3,
            name: "alerts",
            sql: #"""
                -- 0003_alerts: state and history of the alert rule evaluator, so a restart neither re-fires
                -- nor forgets an alert.
                --
                -- An alert is one (rule name, label set) pair; `fingerprint` is a stable hash of the sorted
                -- labels, `labels` their JSON object. Times are epoch seconds.

                -- The current state of every alert that is pending, firing or recently resolved.
                CREATE TABLE alert_state (
                    rule TEXT NOT NULL CHECK (length(rule) BETWEEN 1 AND 255),
                    fingerprint TEXT NOT NULL CHECK (length(fingerprint) BETWEEN 1 AND 64),
                    labels TEXT NOT NULL CHECK (json_valid(labels)),
                    annotations TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(annotations)),
                    state TEXT NOT NULL CHECK (state IN ('pending', 'firing', 'resolved')),
                    -- When the condition started to hold (start of the pending period).
                    active_since INTEGER NOT NULL,
                    -- When the alert went firing; NULL while pending.
                    fired_at INTEGER,
                    -- When the alert resolved; NULL unless resolved.
                    resolved_at INTEGER,
                    -- The last evaluation at which the condition held (keep_firing_for counts from here).
                    last_active INTEGER NOT NULL,
                    last_value REAL,
                    last_samples INTEGER NOT NULL DEFAULT 0,
                    last_eval INTEGER NOT NULL,
                    PRIMARY KEY (rule, fingerprint),
                    CHECK (state = 'pending' OR fired_at IS NOT NULL),
                    CHECK ((state = 'resolved') = (resolved_at IS NOT NULL))
                ) WITHOUT ROWID;

                -- Every state change, oldest first.
                CREATE TABLE alert_history (
                    id INTEGER PRIMARY KEY,
                    rule TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    labels TEXT NOT NULL CHECK (json_valid(labels)),
                    from_state TEXT NOT NULL CHECK (from_state IN ('inactive', 'pending', 'firing', 'resolved')),
                    to_state TEXT NOT NULL CHECK (to_state IN ('inactive', 'pending', 'firing', 'resolved')),
                    at INTEGER NOT NULL,
                    value REAL
                );

                CREATE INDEX alert_history_at ON alert_history (at);
                CREATE INDEX alert_history_alert ON alert_history (rule, fingerprint, at);

                -- The last evaluation of every rule: when, a short summary of the values, the error if it failed.
                CREATE TABLE rule_evaluations (
                    rule TEXT PRIMARY KEY CHECK (length(rule) BETWEEN 1 AND 255),
                    last_eval INTEGER NOT NULL,
                    duration_ms REAL NOT NULL DEFAULT 0,
                    value_summary TEXT,
                    error TEXT
                ) WITHOUT ROWID;

                """#
        ),
        Migration(
            version: 4,
            name: "packed_rollups",
            sql: #"""
                -- 0004_packed_rollups: one row per metric rollup cell (usage, exit counts and signpost totals
                -- together), and one row per version cell and histogram source for buckets, the counters held
                -- as packed blobs.
                --
                -- With 0002's one row per (cell, state, reason) and per (cell, source, bucket bound) in separate
                -- tables, a payload that opens new cells touched ~14 B-tree pages in different places (three
                -- tables per level, one page per histogram source), each written whole to the WAL at COMMIT:
                -- ~11 pages of 32 KB per payload on the reference load, which capped the ingest floor near
                -- 600 payloads/s. Here a payload touches one row per level and its bucket rows are neighbours.
                -- The writer merges a batch's entries into the stored blobs with the SQL functions
                -- ll_merge_counts / ll_merge_buckets that every Lifeline connection registers
                -- (`ON CONFLICT … DO UPDATE SET exits = ll_merge_counts(exits, excluded.exits)`).
                --
                -- Blob layout (RollupBlob.swift): a layout byte, then the entries sorted by key, one per key:
                --   exits, signposts — (a, b, count): (state, reason) or (category, name); zero signpost totals
                --             are kept ("exited 0 times" is an answer);
                --   buckets — (start, end, count) merged by identical bounds, at most 128 entries: beyond that,
                --             neighbouring buckets are merged (counts stay exact, bounds widen), which only
                --             happens when payloads do not share bucket layouts.
                -- Layout 1 (the usual one) writes each entry as three zigzag LEB128 varints — the first as the
                -- difference from the previous entry's, buckets as (start, end − start, count) — about 4 bytes
                -- an entry; layout 0, for buckets with fractional bounds, three little-endian 8-byte words
                -- (integers, or the doubles' bit patterns).
                -- The diagnostics rollups of 0002 are unchanged. The other tables are dropped and the new ones
                -- rebuilt from the normalized rows by the binary right after this migration.

                DROP TABLE rollup_usage;
                DROP TABLE rollup_exits;
                DROP TABLE rollup_signposts;
                DROP TABLE rollup_usage_by_version;
                DROP TABLE rollup_exits_by_version;
                DROP TABLE rollup_signposts_by_version;
                DROP TABLE rollup_buckets_by_version;

                -- One row per metric cell: payloads (about one per device and day), app time in ms (from
                -- applicationTimeMetrics.cumulativeForegroundTime / cumulativeBackgroundTime), and the packed
                -- exit counters (state as app_states.id, reason as exit_reasons.id) and signpost totals
                -- (category, name ids).
                CREATE TABLE rollup_metrics (
                    app INTEGER NOT NULL,
                    day INTEGER NOT NULL,
                    app_version INTEGER NOT NULL,
                    os_version INTEGER NOT NULL,
                    device_type INTEGER NOT NULL,
                    payloads INTEGER NOT NULL CHECK (payloads >= 0),
                    foreground_ms REAL NOT NULL,
                    background_ms REAL NOT NULL,
                    exits BLOB NOT NULL,
                    signposts BLOB NOT NULL,
                    PRIMARY KEY (app, day, app_version, os_version, device_type)
                ) WITHOUT ROWID;

                CREATE TABLE rollup_metrics_by_version (
                    app INTEGER NOT NULL,
                    day INTEGER NOT NULL,
                    app_version INTEGER NOT NULL,
                    payloads INTEGER NOT NULL CHECK (payloads >= 0),
                    foreground_ms REAL NOT NULL,
                    background_ms REAL NOT NULL,
                    exits BLOB NOT NULL,
                    signposts BLOB NOT NULL,
                    PRIMARY KEY (app, day, app_version)
                ) WITHOUT ROWID;

                -- `source` is a metric_names id, as in 0002. Clustered by cell, then source: a payload's
                -- histograms land in neighbouring rows (one or two pages) instead of one page per source.
                CREATE TABLE rollup_buckets_by_version (
                    app INTEGER NOT NULL,
                    day INTEGER NOT NULL,
                    app_version INTEGER NOT NULL,
                    source INTEGER NOT NULL,
                    buckets BLOB NOT NULL,
                    PRIMARY KEY (app, day, app_version, source)
                ) WITHOUT ROWID;

                """#
        ),
        Migration(
            version: 5,
            name: "hardening",
            sql: #"""
                -- 0005_hardening: what issue 11 (hostile input) needs from the schema.
                --
                -- * payloads.dropped_values: values the decoder dropped as implausible (negative, non-finite,
                --   past the bounds of ValueBounds) or for an over-long name. They stay in the raw document and
                --   are never summed into a figure.
                -- * api_keys: an optional expiry (`keys create --expires-in 90d`), when the key was last used
                --   (written in batches, not per request), and the previous secret of a rotated key with the
                --   time until which it is still accepted (`keys rotate ID`).
                -- * dashboard_sessions: the dashboard's cookie carries an opaque random id; only its SHA-256 is
                --   stored, with the key it signs in as and when it expires. Revoking the key ends its sessions.

                ALTER TABLE payloads ADD COLUMN dropped_values INTEGER NOT NULL DEFAULT 0 CHECK (dropped_values >= 0);

                ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
                ALTER TABLE api_keys ADD COLUMN previous_secret_hash BLOB
                    CHECK (previous_secret_hash IS NULL OR length(previous_secret_hash) = 32);
                ALTER TABLE api_keys ADD COLUMN previous_valid_until INTEGER;

                CREATE TABLE dashboard_sessions (
                    id_hash BLOB PRIMARY KEY CHECK (length(id_hash) = 32),
                    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL
                ) WITHOUT ROWID;

                CREATE INDEX dashboard_sessions_by_key ON dashboard_sessions (key_id);

                """#
        ),
        Migration(
            version: 6,
            name: "retention",
            sql: #"""
                -- 0006_retention: what the pruner (issue 13, `retention:` and `lifeline prune`) needs.
                --
                -- * retention_horizons: the first day still kept, per kind of data ('data': payloads, their
                --   normalized rows, diagnostics and rollups; 'raw': the raw documents), as days since
                --   1970-01-01. The pruner raises a horizon before it deletes anything below it, and every
                --   aggregate query starts its window at the 'data' horizon, so a day being pruned (in many small
                --   transactions) is never seen half-deleted: pruned days answer as if nothing had been stored.
                --   'raw' also tells the next run where the raw documents still to delete begin.
                -- * idempotency_keys_by_created: expired idempotency records are found by age, in batches.
                -- * Databases created from now on use `auto_vacuum = INCREMENTAL` (set by the binary before
                --   the first table exists), so pages freed by pruning can be returned to the file system.

                CREATE TABLE retention_horizons (
                    name TEXT PRIMARY KEY CHECK (name IN ('data', 'raw')),
                    day INTEGER NOT NULL
                ) WITHOUT ROWID;

                CREATE INDEX idempotency_keys_by_created ON idempotency_keys (created_at);

                """#
        ),
        Migration(
            version: 7,
            name: "reports_v2",
            sql: #"""
                -- 0007_reports_v2: iOS 27 `MetricReport` / `DiagnosticReport` documents (issue 14).
                --
                -- * payloads.format: 'legacy' (jsonRepresentation) or 'v2' ("version": "2.0.0").
                -- * payloads.device_day: 0 for a 2.0.0 zero-length report (the disk-space snapshot): stored, but
                --   not a day of usage, so it is not counted in the payloads (device-days) of the rollups.
                -- * diagnostics: terminationCategory, the process id and the signpost data of 2.0.0 diagnostics;
                --   the kind 'memory_exception' (new in iOS 27) is added to the kinds' CHECK by the binary right
                --   after this migration (SQLite cannot alter a CHECK; the table definition is edited in place).
                -- * App states (app-defined: a screen, an experiment arm): a state is (domain, label, metadata),
                --   metadata a canonical JSON object. Per metric payload: which states it reported and for how
                --   long, and the exit counts, histograms and signposts observed while each was active; per
                --   diagnostic: the states active before the event.
                -- * interval_slices: the ~3-hour interval entries of a 2.0.0 metric report beside its full-day
                --   one: their length and resource metrics (scalars).

                ALTER TABLE payloads ADD COLUMN format TEXT NOT NULL DEFAULT 'legacy' CHECK (format IN ('legacy', 'v2'));
                ALTER TABLE payloads ADD COLUMN device_day INTEGER NOT NULL DEFAULT 1 CHECK (device_day IN (0, 1));

                ALTER TABLE diagnostics ADD COLUMN termination_category TEXT;
                ALTER TABLE diagnostics ADD COLUMN pid INTEGER;
                ALTER TABLE diagnostics ADD COLUMN signpost_data TEXT;

                CREATE TABLE app_state_values (
                    id INTEGER PRIMARY KEY,
                    domain TEXT NOT NULL CHECK (length(domain) BETWEEN 1 AND 1024),
                    label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 1024),
                    metadata TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
                    UNIQUE (domain, label, metadata)
                );

                CREATE TABLE payload_states (
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
                    active_seconds REAL,
                    PRIMARY KEY (payload, app_state)
                ) WITHOUT ROWID;

                CREATE TABLE state_exit_counts (
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
                    state INTEGER NOT NULL REFERENCES app_states (id),
                    reason INTEGER NOT NULL REFERENCES exit_reasons (id),
                    count INTEGER NOT NULL CHECK (count > 0),
                    PRIMARY KEY (payload, app_state, state, reason)
                ) WITHOUT ROWID;

                CREATE TABLE state_histograms (
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
                    metric INTEGER NOT NULL REFERENCES metric_names (id),
                    unit INTEGER REFERENCES units (id),
                    total_count INTEGER NOT NULL CHECK (total_count >= 0),
                    buckets BLOB NOT NULL,
                    PRIMARY KEY (payload, app_state, metric)
                ) WITHOUT ROWID;

                CREATE TABLE state_signposts (
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
                    category INTEGER NOT NULL REFERENCES signpost_categories (id),
                    name INTEGER NOT NULL REFERENCES signpost_names (id),
                    total_count INTEGER NOT NULL CHECK (total_count >= 0),
                    durations BLOB,
                    PRIMARY KEY (payload, app_state, category, name)
                ) WITHOUT ROWID;

                CREATE TABLE diagnostic_states (
                    diagnostic INTEGER NOT NULL REFERENCES diagnostics (id) ON DELETE CASCADE,
                    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
                    PRIMARY KEY (diagnostic, app_state)
                ) WITHOUT ROWID;

                CREATE TABLE interval_slices (
                    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
                    metric INTEGER NOT NULL REFERENCES metric_names (id),
                    duration_s REAL NOT NULL,
                    value REAL,
                    unit INTEGER REFERENCES units (id),
                    PRIMARY KEY (payload, ordinal, metric)
                ) WITHOUT ROWID;

                """#
        ),
        Migration(
            version: 8,
            name: "symbols",
            sql: #"""
                -- 0008_symbols: debug symbols (issue 15). One row per Mach-O slice of an imported dSYM (or
                -- binary with DWARF), keyed by its LC_UUID. The DWARF itself is a file in the symbol directory
                -- beside the database (`<database>.symbols/<UUID>`, one thin Mach-O per slice), not a row.
                -- text_vmaddr is the __TEXT segment's vmaddr: a frame's address in the file is
                -- text_vmaddr + offsetIntoBinaryTextSegment.

                CREATE TABLE debug_symbols (
                    uuid TEXT PRIMARY KEY CHECK (length(uuid) = 36),
                    app TEXT NOT NULL CHECK (length(app) BETWEEN 1 AND 255),
                    arch TEXT NOT NULL CHECK (length(arch) BETWEEN 1 AND 32),
                    binary_name TEXT NOT NULL CHECK (length(binary_name) BETWEEN 1 AND 255),
                    text_vmaddr INTEGER NOT NULL,
                    size INTEGER NOT NULL CHECK (size >= 0),
                    uploaded_at INTEGER NOT NULL
                ) WITHOUT ROWID;

                """#
        ),
        Migration(
            version: 9,
            name: "symbols_role",
            sql: #"""
                -- 0009_symbols_role: a `symbols` API key role (issue 15): uploads debug symbols for one app, from
                -- CI, and nothing else (ingest keys ship inside the app and are refused). The binary adds
                -- 'symbols' to the CHECK of api_keys.role right after this migration, in place (SQLite cannot
                -- alter a CHECK; same documented procedure as 0007); the store requires an app for such keys.
                SELECT 1;

                """#
        ),
        Migration(
            version: 10,
            name: "alert_outbox",
            sql: #"""
                -- 0010_alert_outbox: a durable outbox for alert notifications (issue 23). A change of an alert
                -- (firing, resolved) writes one row per receiver in the same transaction as the state change; the
                -- leader delivers pending rows in id order and marks them finished. A process killed between the
                -- commit and the receiver's answer leaves the row pending: the next start (or leader) delivers it,
                -- with the same dedup_key, which the webhook body carries so a receiver can drop a repeat.
                CREATE TABLE alert_outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    receiver TEXT NOT NULL CHECK (length(receiver) BETWEEN 1 AND 255),
                    dedup_key TEXT NOT NULL CHECK (length(dedup_key) BETWEEN 1 AND 1024),
                    body TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    finished_at INTEGER,
                    failed INTEGER NOT NULL DEFAULT 0 CHECK (failed IN (0, 1)),
                    UNIQUE (receiver, dedup_key)
                );
                -- Pending rows are few and read in id order.
                CREATE INDEX alert_outbox_pending ON alert_outbox (id) WHERE finished_at IS NULL;

                """#
        ),
        Migration(
            version: 11,
            name: "symbols_unusable",
            sql: #"""
                -- 0011_symbols_unusable: a symbol file that crashed llvm-symbolizer or ran past the request time
                -- limit is marked once (issue 24): its reason ('crashed' or 'timed_out') and when (seconds since
                -- the epoch). Lookups skip a marked slice, so every later query goes on unsymbolicated at normal
                -- speed; `dsym list` and the missing-symbols list show it. Uploading the same UUID again replaces
                -- the file and clears the mark.
                ALTER TABLE debug_symbols ADD COLUMN unusable_reason TEXT;
                ALTER TABLE debug_symbols ADD COLUMN unusable_at INTEGER;

                """#
        ),
        Migration(
            version: 12,
            name: "aggregator",
            sql: #"""
                -- 0012_aggregator: ingest becomes a durable append (the payload's index row and its raw document)
                -- and an aggregator stage folds committed documents into the rollups, crash groups and per-state
                -- rows behind it (issue 25). Its progress is a watermark over payload ids, updated in the same
                -- transaction as what it folded: a crash never folds a document twice nor skips one.
                --
                -- Everything stored before this migration was folded in its ingest transaction, so the
                -- watermark starts at the highest payload id.
                --
                -- The per-payload normalized rows (exit_counts, signposts, histograms, scalar_metrics) are no
                -- longer written: they only existed to be summed into the rollups, which are now folded from the
                -- documents themselves (`lifeline refold` rebuilds them from the raw documents). Rows already
                -- stored stay until their payloads are pruned.
                CREATE TABLE aggregation_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    -- Every payload with an id at or below this is folded.
                    folded_through INTEGER NOT NULL,
                    -- When the last fold committed, epoch milliseconds (0: never).
                    folded_at_ms INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO aggregation_state (id, folded_through, folded_at_ms)
                VALUES (1, COALESCE((SELECT max(id) FROM payloads), 0), 0);

                -- Histogram buckets per (app, day, version, OS, device) and source, packed like
                -- rollup_buckets_by_version: percentiles filtered or grouped by OS or device read these cells
                -- instead of the per-payload histograms. Filled from the normalized rows of existing payloads
                -- when this migration runs (Database.migrate).
                CREATE TABLE rollup_buckets (
                    app INTEGER NOT NULL,
                    day INTEGER NOT NULL,
                    app_version INTEGER NOT NULL,
                    os_version INTEGER NOT NULL,
                    device_type INTEGER NOT NULL,
                    source INTEGER NOT NULL,
                    buckets BLOB NOT NULL,
                    PRIMARY KEY (app, day, app_version, os_version, device_type, source)
                ) WITHOUT ROWID;

                """#
        ),
        Migration(
            version: 13,
            name: "unread_documents",
            sql: #"""
                -- 0013_unread_documents: bodies Lifeline cannot read yet (a report of a major version it does
                -- not know, issue 24) are kept as received instead of refused: stored raw, deduplicated per app
                -- and content, counted nowhere. A release that reads them folds them (`lifeline refold`).
                CREATE TABLE unread_documents (
                    id INTEGER PRIMARY KEY,
                    app TEXT NOT NULL CHECK (length(app) BETWEEN 1 AND 255),
                    content_hash BLOB NOT NULL CHECK (length(content_hash) = 32),
                    received_at_ms INTEGER NOT NULL,
                    reason TEXT NOT NULL,
                    detail TEXT NOT NULL,
                    raw BLOB NOT NULL,
                    UNIQUE (app, content_hash)
                );

                """#
        ),
        Migration(
            version: 14,
            name: "explorer_cells",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 15,
            name: "explorer_packed",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 16,
            name: "explorer_by_category",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 17,
            name: "explorer_watermark",
            sql: #"""
                -- 0017_explorer_watermark: the explorer's rows get a watermark of their own.
                --
                -- The aggregator folds every committed document into the rollups at once, but the explorer's
                -- cells (rollup_explorer, rollup_explorer_by_version) are written less often: the writer holds
                -- their deltas in memory across folds and writes them (merged into the stored rows) at most
                -- every second, when a reader waits, or when too many are held. A packed row rewritten at every
                -- fold batch cost 0.3-0.45x of the door's rate on a fleet-like load (BENCHMARKS.md, "The
                -- explorer's rows written behind the fold").
                --
                -- Every metric document with an id at or below explorer_through is in the explorer's rows, none
                -- above; explorer_through <= folded_through. After a crash, the documents between the two are
                -- read again from their raw copies (they are in the rollups already, not yet in the explorer's
                -- rows). Everything folded before this migration is in the explorer's rows.
                ALTER TABLE aggregation_state ADD COLUMN explorer_through INTEGER NOT NULL DEFAULT 0;
                UPDATE aggregation_state SET explorer_through = folded_through;

                """#
        ),
        Migration(
            version: 18,
            name: "drop_interval_slices",
            sql: #"""
                -- 0018_drop_interval_slices: the ~3-hour slices of a 2.0.0 report are no longer copied into rows.
                --
                -- interval_slices (0007) held one row per slice and resource scalar of every 2.0.0 report (12 a
                -- report on the simulator's fleet), written by the fold and read by no endpoint, report or rule.
                -- Their index pages were a fifth of what the fold wrote for such a report. The slices stay in the
                -- raw document every payload keeps (payload_raw): a release that answers from them folds them
                -- from there (lifeline refold), as it would any new figure. PostgreSQL never stored them.
                DROP TABLE interval_slices;

                """#
        ),
        Migration(
            version: 19,
            name: "explorer_version_watermark",
            sql: #"""
                -- 0019_explorer_version_watermark: the explorer's version-level rows get a watermark of their own.
                --
                -- A version-day row (rollup_explorer_by_version) gathers every device of its version and day: on a
                -- load where each document is its own fine cell, each write of held rows rewrote ~5,000 of them
                -- (2-5 KB each) for one or two new documents apiece, and that was what bounded the door beside the
                -- explorer (BENCHMARKS.md, "Where the door waits with the explorer"). The server now keeps them,
                -- merged and encoded, in memory between writes of held rows, and writes them every few seconds,
                -- when a reader waits, when they hold too many bytes, and when it stops.
                --
                -- Every metric document with an id at or below explorer_version_through is in
                -- rollup_explorer_by_version, none above; explorer_version_through <= explorer_through. After a
                -- crash, the documents between the two are read again from their raw copies into the version rows
                -- only (their fine rows are stored). Everything before this migration is in both.
                ALTER TABLE aggregation_state ADD COLUMN explorer_version_through INTEGER NOT NULL DEFAULT 0;
                UPDATE aggregation_state SET explorer_version_through = explorer_through;

                """#
        ),
        Migration(
            version: 20,
            name: "rollup_version_watermark",
            sql: #"""
                -- 0020_rollup_version_watermark: the version-level rollups get a watermark of their own.
                --
                -- A version-day cell (rollup_metrics_by_version, rollup_buckets_by_version,
                -- rollup_diagnostics_by_version: one version and day, every OS and device) is touched by most
                -- folds, for a document or two each, and rewriting its packed blobs at every fold of a few dozen
                -- documents was a fifth of the pages the server wrote and a third of its writer thread
                -- (BENCHMARKS.md, "The version-level rollups kept in memory"). The server now sums them in memory
                -- between writes and writes them every few seconds, when a reader waits, and when it stops.
                --
                -- Every document with an id at or below rollup_version_through is in the version-level rollups,
                -- none above; rollup_version_through <= folded_through. After a crash, the documents between the
                -- two are read again into the version level only (their fine cells are stored). Everything
                -- before this migration is in both.
                ALTER TABLE aggregation_state ADD COLUMN rollup_version_through INTEGER NOT NULL DEFAULT 0;
                UPDATE aggregation_state SET rollup_version_through = folded_through;

                """#
        ),
        Migration(
            version: 21,
            name: "bucket_cells",
            sql: #"""
                -- 0021_bucket_cells: the fine level's histogram buckets packed one row per cell (issue 25).
                --
                -- rollup_buckets held one row per (app, day, version, OS, device) and histogram source. On a load
                -- where every document is its own fine cell (OS builds differ), each fold wrote ~19 such rows per
                -- document, with their keys and B-tree entries: a quarter of the bytes the server wrote
                -- (BENCHMARKS.md, "Fine histogram buckets packed per cell"). A cell's sources now share one row:
                -- for each source in ascending order, its id, the length of its packed bucket list and that list
                -- (the blob of rollup_buckets.buckets), merged on conflict by ll_merge_bucket_cells and read per
                -- source by ll_cell_buckets. Counts and bounds are unchanged.
                --
                -- The rows of rollup_buckets are packed into the new table, and the old table dropped, by the
                -- migration's Swift step (Database.migrate, RollupRebuilder.packFineBuckets), in this migration's
                -- transaction. The version level (rollup_buckets_by_version) keeps its rows per source.
                CREATE TABLE rollup_bucket_cells (
                    app INTEGER NOT NULL,
                    day INTEGER NOT NULL,
                    app_version INTEGER NOT NULL,
                    os_version INTEGER NOT NULL,
                    device_type INTEGER NOT NULL,
                    sources BLOB NOT NULL,
                    PRIMARY KEY (app, day, app_version, os_version, device_type)
                ) WITHOUT ROWID;

                """#
        ),
        Migration(
            version: 22,
            name: "explorer_states",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 23,
            name: "raw_dictionaries",
            sql: #"""
                -- 0023_raw_dictionaries: raw copies deflated at rest against a preset dictionary (issue 25).
                --
                -- The raw copy was the largest part of what a payload stores: the gzip body as the client sent it
                -- (2.7 of 5.7 KB a payload on the reference load; BENCHMARKS.md). MetricKit's JSON repeats the
                -- same keys in every document, which a 32 KB preset dictionary made from an app's own documents
                -- lets deflate refer to: ~1 KB less per copy. The server re-deflates copies behind the fold, off
                -- the request path (the raw compactor), and `lifeline compact` does it offline. A compacted copy
                -- is a zlib stream naming its dictionary by Adler-32 (RFC 1950's DICTID), which is this table's
                -- id; a dictionary is never changed or removed once a copy may refer to it.
                CREATE TABLE raw_dictionaries (
                    id INTEGER PRIMARY KEY,
                    app INTEGER NOT NULL REFERENCES apps (id),
                    kind TEXT NOT NULL CHECK (kind IN ('metric', 'diagnostic')),
                    dictionary BLOB NOT NULL CHECK (length(dictionary) BETWEEN 1 AND 32768),
                    -- The newest document it was made from: the compactor deflates each app and kind's copies
                    -- against its newest dictionary.
                    trained_through INTEGER NOT NULL,
                    created_at_ms INTEGER NOT NULL
                );
                CREATE INDEX raw_dictionaries_by_app_kind ON raw_dictionaries (app, kind, trained_through);

                -- Compacted copies move here from payload_raw (a payload's copy is in one of the two). Shrunk
                -- in place, a copy would leave its page half empty: rows are found by payload id, so no later
                -- row takes that room (measured: the same pages, ~1.5 KB unused per payload). Moved, the copies
                -- leave payload_raw's pages empty, free for any later insert, and this table fills its pages
                -- end to end in id order.
                CREATE TABLE payload_raw_packed (
                    payload INTEGER PRIMARY KEY REFERENCES payloads (id) ON DELETE CASCADE,
                    raw BLOB NOT NULL
                );

                -- The compactor's progress: every raw copy of a payload up to `through` was considered (deflated
                -- against a dictionary when that saved bytes, otherwise left as it was), and what it saved.
                CREATE TABLE raw_compaction (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    through INTEGER NOT NULL DEFAULT 0,
                    compacted INTEGER NOT NULL DEFAULT 0,
                    bytes_before INTEGER NOT NULL DEFAULT 0,
                    bytes_after INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO raw_compaction (id) VALUES (1);

                """#
        ),
        Migration(
            version: 24,
            name: "rollup_fine_watermark",
            sql: #"""
                -- 0024_rollup_fine_watermark: the fine rollups get a watermark of their own, as the version level
                -- did in 0020.
                --
                -- A fine cell (rollup_metrics, rollup_bucket_cells, rollup_diagnostics: one day, version, OS and
                -- device) was upserted at every fold of a few dozen documents. On the reference load those
                -- upserts land all over the day's part of each table, and their pages were 30 of the ~77 KB the
                -- server wrote per payload (BENCHMARKS.md, "The fine rollups kept in memory"). The server now sums
                -- the fine cells in memory beside the version cells and writes each level every few seconds (one
                -- level per fold while ingest is busy), past a number of cells, and both when a reader waits and
                -- when it stops.
                --
                -- Every document with an id at or below rollup_fine_through is in the fine rollups, none above;
                -- rollup_fine_through <= folded_through. After a crash, the documents between the two are read
                -- again from their raw copies into the fine level (and those above rollup_version_through into
                -- the version level). Everything before this migration is in the fine rollups.
                ALTER TABLE aggregation_state ADD COLUMN rollup_fine_through INTEGER NOT NULL DEFAULT 0;
                UPDATE aggregation_state SET rollup_fine_through = folded_through;

                """#
        ),
        Migration(
            version: 25,
            name: "rollup_partitions",
            sql: #"""
                -- 0025_rollup_partitions: each rollup level's cached cells are written in eight parts, each with a
                -- watermark of its own.
                --
                -- The server writes each level's cells (summed in memory over ~2 s) at once: on the reference load
                -- the version level's ~9,400 rows took 46-72 ms and the fine level's ~24,000 a commit of up to
                -- 100 ms, and every request waiting on the writer meanwhile waited for them (BENCHMARKS.md, "The
                -- rollups written in parts"). A cell now belongs to one of eight parts of its level (a hash of its
                -- version-day: app, day and version), and a fold writes one part, moving that part's watermark
                -- alone.
                --
                -- Every document with an id at or below a part's `through` is in that part's cells, none above;
                -- `through` <= aggregation_state.folded_through. After a crash, the documents above the lowest
                -- part's watermark are read again from their raw copies, each into the parts that miss it.
                -- aggregation_state.rollup_fine_through and rollup_version_through are kept as the lowest of their
                -- level's parts. Level 0 is the fine level, 1 the version level.
                CREATE TABLE rollup_watermarks (
                    level INTEGER NOT NULL,
                    part INTEGER NOT NULL,
                    through INTEGER NOT NULL,
                    PRIMARY KEY (level, part)
                ) WITHOUT ROWID;

                WITH RECURSIVE parts(part) AS (SELECT 0 UNION ALL SELECT part + 1 FROM parts WHERE part < 7)
                INSERT INTO rollup_watermarks (level, part, through)
                SELECT 0, part, (SELECT rollup_fine_through FROM aggregation_state WHERE id = 1) FROM parts
                UNION ALL
                SELECT 1, part, (SELECT rollup_version_through FROM aggregation_state WHERE id = 1) FROM parts;

                """#
        ),
        Migration(
            version: 26,
            name: "explorer_version_parts",
            sql: #"""
                -- 0026_explorer_version_parts: the explorer's version rows kept in memory are written in the same
                -- eight parts as the rollups (migration 0025), each with a watermark of its own.
                --
                -- The server keeps the explorer's version rows (rollup_explorer_by_version) in memory and wrote
                -- them all every ~2 s: ~16,000 rows on the iOS 27 load, 64-113 ms, and every request waiting on
                -- the writer meanwhile waited for them (BENCHMARKS.md, "The explorer's version cache written in
                -- parts"). A row belongs to the part of its version-day (the same hash of app, day and version as
                -- the rollups), and a fold writes one part, moving that part's watermark alone.
                --
                -- Level 2 of rollup_watermarks: every metric document with an id at or below a part's `through`
                -- is in the stored version rows of that part, none above; `through` <= explorer_through. After a
                -- crash, the documents above a part's watermark up to explorer_through are read again into the
                -- version rows of that part only. aggregation_state.explorer_version_through keeps the lowest.
                WITH RECURSIVE parts(part) AS (SELECT 0 UNION ALL SELECT part + 1 FROM parts WHERE part < 7)
                INSERT INTO rollup_watermarks (level, part, through)
                SELECT 2, part, (SELECT explorer_version_through FROM aggregation_state WHERE id = 1) FROM parts;

                """#
        ),
        Migration(
            version: 27,
            name: "state_exits_packed",
            sql: #"""
                -- 0027_state_exits_packed: an iOS 27 report's exit counts per app state are packed into its
                -- payload_states row instead of one state_exit_counts row per (state, reason).
                --
                -- The fold wrote ~36 exit rows per report of the iOS 27 load (twelve reasons, foreground and
                -- background, three app states), one INSERT each: with the app-state rows beside them, a quarter of
                -- the writer's time on that load, and the largest part of its long folds (BENCHMARKS.md, "The
                -- explorer's version rows sealed in parts, and the app states' exits packed"). payload_states.exits
                -- holds them as a packed count list (the varint layout of the rollups' `exits`, migration 0004:
                -- entries (state, reason id, count), sorted, equal keys summed; NULL when the state saw no exit),
                -- and the state queries sum the lists per group as the rollup queries do.
                --
                -- The binary packs the rows already stored into their payload_states rows right after this
                -- migration, in its transaction, then drops state_exit_counts (Database+Migrations).
                ALTER TABLE payload_states ADD COLUMN exits BLOB;

                """#
        ),
        Migration(
            version: 28,
            name: "explorer_fine_parts",
            sql: #"""
                -- 0028_explorer_fine_parts: the explorer's fine rows (rollup_explorer) are written in the same eight
                -- parts as the rollups and the explorer's version rows (migrations 0025, 0026), each with a
                -- watermark of its own.
                --
                -- The server seals the fine rows it holds every second or past 4,096 rows, and wrote a seal's rows
                -- in one fold: 4,000-13,000 rows on the iOS 27 load, 15-48 ms, and every request waiting on the
                -- writer meanwhile waited for them (BENCHMARKS.md, "A seal's fine rows written in parts"). A
                -- prepared row now waits in memory with its part (the hash of app, day and version), and a fold
                -- writes one part, moving that part's watermark alone.
                --
                -- Level 3 of rollup_watermarks: every metric document with an id at or below a part's `through`
                -- is in the stored fine rows of that part, none above; `through` <= folded_through. After a crash,
                -- the documents above a part's watermark are read again into the fine rows of that part only.
                -- aggregation_state.explorer_through keeps the lowest. The version parts (level 2) no longer stay
                -- at or below explorer_through: each level's parts stand on their own.
                WITH RECURSIVE parts(part) AS (SELECT 0 UNION ALL SELECT part + 1 FROM parts WHERE part < 7)
                INSERT INTO rollup_watermarks (level, part, through)
                SELECT 3, part, (SELECT explorer_through FROM aggregation_state WHERE id = 1) FROM parts;

                """#
        ),
        Migration(
            version: 29,
            name: "explorer_categories",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 30,
            name: "state_histograms_packed",
            sql: #"""
                -- 0030_state_histograms_packed: an iOS 27 report's histograms per app state are packed into its
                -- payload_states row instead of one state_histograms row per (state, metric).
                --
                -- The fold wrote ~6 histogram rows per report of the iOS 27 load, one INSERT and one B-tree entry
                -- each (their key repeated the payload and the state), for columns of which the queries read one:
                -- `unit` and `total_count` were never read (the raw document keeps both). payload_states.histograms
                -- holds a state's histograms as a fine bucket cell holds its sources (migration 0021, BucketCell):
                -- per metric id, ascending, the id and the length of its packed bucket list, then the list
                -- (HistogramCodec's form, as state_histograms.buckets held it); NULL when the state saw none. The
                -- state queries take a metric's list with ll_cell_buckets(histograms, metric).
                --
                -- The binary packs the rows already stored into their payload_states rows right after this
                -- migration, in its transaction, then drops state_histograms (Database+Migrations).
                ALTER TABLE payload_states ADD COLUMN histograms BLOB;

                """#
        ),
        Migration(
            version: 31,
            name: "payload_keys",
            sql: #"""
                -- 0031_payload_keys: the door writes no random index entry; the two lookups of payloads by
                -- content and by day are tables the writer fills in sorted bulk behind a watermark.
                -- lifeline: foreign keys off
                --
                -- Every new payload put an entry at a random place of two indexes of `payloads`: the UNIQUE
                -- (app, content_hash) one (a SHA-256: random by nature) and payloads_by_app_kind_day (random on a
                -- fleet reporting many days at once). Once an index has more pages than a commit has documents,
                -- each document dirtied a page of each, written whole to the WAL and again by the checkpoint:
                -- ~16 KB of the ~60 KB written per reference payload (BENCHMARKS.md, "The door's lookups filled
                -- in bulk").
                --
                -- Now `payloads` has no secondary index. payload_keys (dedup) and payload_days (the pruner's,
                -- the refold's and /v1/apps' walk by day) hold the payloads with an id up to
                -- aggregation_state.indexed_through; the writer appends the ones above it (its in-memory tail of
                -- keys answers the door meanwhile) in one sorted INSERT per several thousand documents, where a
                -- page takes many entries. payloads_by_day reads both: the table up to the watermark and the
                -- unindexed tail above it (a few thousand rows, by id), so nothing is missed at any moment.
                --
                -- SQLite cannot drop a UNIQUE constraint: the table is rebuilt (sqlite.org/lang_altertable.html,
                -- "making other kinds of table schema changes"), which needs foreign keys off: the binary turns
                -- them off around this migration's transaction (the line above) and runs foreign_key_check before
                -- its commit. Ids become AUTOINCREMENT: the newest payload, once pruned, no longer hands its id to
                -- the next one (an id at or below a watermark is never folded or indexed again).

                CREATE TABLE payloads_rebuilt (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    app INTEGER NOT NULL REFERENCES apps (id),
                    kind TEXT NOT NULL CHECK (kind IN ('metric', 'diagnostic')),
                    app_version INTEGER REFERENCES app_versions (id),
                    build INTEGER REFERENCES builds (id),
                    os_version INTEGER REFERENCES os_versions (id),
                    device_type INTEGER REFERENCES device_types (id),
                    region INTEGER REFERENCES regions (id),
                    arch INTEGER REFERENCES architectures (id),
                    day TEXT NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
                    begin_at INTEGER,
                    end_at INTEGER,
                    begin_raw TEXT CHECK (begin_raw IS NULL OR begin_at IS NULL),
                    end_raw TEXT CHECK (end_raw IS NULL OR end_at IS NULL),
                    received_at_ms INTEGER NOT NULL,
                    content_hash BLOB NOT NULL CHECK (length(content_hash) = 32),
                    unparsed_measurements INTEGER NOT NULL DEFAULT 0 CHECK (unparsed_measurements >= 0),
                    dropped_values INTEGER NOT NULL DEFAULT 0 CHECK (dropped_values >= 0),
                    format TEXT NOT NULL DEFAULT 'legacy' CHECK (format IN ('legacy', 'v2')),
                    device_day INTEGER NOT NULL DEFAULT 1 CHECK (device_day IN (0, 1))
                );

                INSERT INTO payloads_rebuilt (id, app, kind, app_version, build, os_version, device_type, region, arch, day,
                    begin_at, end_at, begin_raw, end_raw, received_at_ms, content_hash, unparsed_measurements, dropped_values,
                    format, device_day)
                SELECT id, app, kind, app_version, build, os_version, device_type, region, arch, day,
                    begin_at, end_at, begin_raw, end_raw, received_at_ms, content_hash, unparsed_measurements, dropped_values,
                    format, device_day
                FROM payloads ORDER BY id;

                DROP TABLE payloads;
                ALTER TABLE payloads_rebuilt RENAME TO payloads;

                -- One entry per stored content of an app: the payload holding it.
                CREATE TABLE payload_keys (
                    app INTEGER NOT NULL,
                    content_hash BLOB NOT NULL,
                    payload INTEGER NOT NULL,
                    PRIMARY KEY (app, content_hash)
                ) WITHOUT ROWID;

                -- The payloads of an app and kind by day.
                CREATE TABLE payload_days (
                    app INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    day TEXT NOT NULL,
                    payload INTEGER NOT NULL,
                    PRIMARY KEY (app, kind, day, payload)
                ) WITHOUT ROWID;

                ALTER TABLE aggregation_state ADD COLUMN indexed_through INTEGER NOT NULL DEFAULT 0;

                INSERT INTO payload_keys (app, content_hash, payload)
                SELECT app, content_hash, id FROM payloads ORDER BY app, content_hash;
                INSERT INTO payload_days (app, kind, day, payload)
                SELECT app, kind, day, id FROM payloads ORDER BY app, kind, day, id;
                UPDATE aggregation_state SET indexed_through = (SELECT coalesce(max(id), 0) FROM payloads) WHERE id = 1;

                -- The payloads of an app and kind by day, indexed or not yet: the two parts never overlap (the
                -- writer moves the tail and the watermark in one transaction).
                CREATE VIEW payloads_by_day (app, kind, day, id) AS
                SELECT app, kind, day, payload FROM payload_days
                UNION ALL
                SELECT app, kind, day, id FROM payloads
                WHERE id > (SELECT indexed_through FROM aggregation_state WHERE id = 1);

                """#
        ),
        Migration(
            version: 32,
            name: "fine_rollups_by_rowid",
            sql: #"""
                -- 0032_fine_rollups_by_rowid: the fine level's metrics and bucket cells become rowid tables with a
                -- unique index on their cell, as the explorer's fine rows are (migration 0015).
                --
                -- rollup_metrics and rollup_bucket_cells were WITHOUT ROWID tables keyed by their cell (app, day,
                -- version, OS, device): every new cell's row (~200 B of packed exits and signposts, ~300 B of
                -- bucket lists) landed on a page at random, and a seal of fine rows on a load of distinct devices
                -- rewrote nearly every page of both tables (5.7 + 4.8 and 2.4 + 1.9 KB written per reference
                -- payload, WAL + checkpoint: BENCHMARKS.md, "The fine rollups by rowid"). A rowid table takes each
                -- new row at its end, and only the small index entries land at random. Lookups, upserts
                -- (`ON CONFLICT` on the cell's columns) and the queries' day ranges go through the index.

                CREATE TABLE rollup_metrics_0032 (
                    id INTEGER PRIMARY KEY,
                    app INTEGER NOT NULL,
                    day INTEGER NOT NULL,
                    app_version INTEGER NOT NULL,
                    os_version INTEGER NOT NULL,
                    device_type INTEGER NOT NULL,
                    payloads INTEGER NOT NULL CHECK (payloads >= 0),
                    foreground_ms REAL NOT NULL,
                    background_ms REAL NOT NULL,
                    exits BLOB NOT NULL,
                    signposts BLOB NOT NULL
                );
                INSERT INTO rollup_metrics_0032 (app, day, app_version, os_version, device_type, payloads, foreground_ms,
                    background_ms, exits, signposts)
                SELECT app, day, app_version, os_version, device_type, payloads, foreground_ms, background_ms, exits, signposts
                FROM rollup_metrics ORDER BY app, day, app_version, os_version, device_type;
                DROP TABLE rollup_metrics;
                ALTER TABLE rollup_metrics_0032 RENAME TO rollup_metrics;
                CREATE UNIQUE INDEX rollup_metrics_cell ON rollup_metrics (app, day, app_version, os_version, device_type);

                CREATE TABLE rollup_bucket_cells_0032 (
                    id INTEGER PRIMARY KEY,
                    app INTEGER NOT NULL,
                    day INTEGER NOT NULL,
                    app_version INTEGER NOT NULL,
                    os_version INTEGER NOT NULL,
                    device_type INTEGER NOT NULL,
                    sources BLOB NOT NULL
                );
                INSERT INTO rollup_bucket_cells_0032 (app, day, app_version, os_version, device_type, sources)
                SELECT app, day, app_version, os_version, device_type, sources
                FROM rollup_bucket_cells ORDER BY app, day, app_version, os_version, device_type;
                DROP TABLE rollup_bucket_cells;
                ALTER TABLE rollup_bucket_cells_0032 RENAME TO rollup_bucket_cells;
                CREATE UNIQUE INDEX rollup_bucket_cell ON rollup_bucket_cells (app, day, app_version, os_version, device_type);

                """#
        ),
    ]
}
