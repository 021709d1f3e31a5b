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
